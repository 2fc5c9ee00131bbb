// The device agent as a field operator runs it (issue 24): restarted as the READMEs say, without
// AGENT_DATA_KEY, it keeps its key and its queue; started with a wrong key it stops with a message and
// touches nothing; refused credentials are said as such, not as an outage. Real cloud, agent as a
// child process.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOf } from '@portico/test-support/identity';
import {
  agentCall,
  agentEnv,
  confirmedGuest,
  deviceToken,
  openEvent,
  startAgentProcess,
  startCloud,
  until,
  type AgentProcess,
  type Cloud,
} from '../support/edge.js';

/** Every file under `dir` with the SHA-256 of its content: what "nothing changed" is checked against. */
function fingerprint(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out[path.relative(dir, file)] = createHash('sha256').update(readFileSync(file)).digest('hex');
  }
  return out;
}

const mode = (file: string) => statSync(file).mode & 0o777;

const AGENT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../device-agent');

/** `pnpm agent <args>` as the README says, run to its end. */
function agentCommand(env: Record<string, string>, ...args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: AGENT_DIR,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise<{ code: number | null; out: string }>((resolve) =>
    child.once('exit', (code) => resolve({ code, out })),
  );
}

describe('the agent in the field (real cloud on PGlite, agent as a child process)', () => {
  let cloud: Cloud;
  let agent: AgentProcess | undefined;
  let admin: Awaited<ReturnType<typeof adminOf>>;
  let event: { id: string; publicToken: string };
  let guest: { id: string; checkinUrl: string };
  let env: Record<string, string>;

  beforeAll(async () => {
    cloud = await startCloud();
    admin = await adminOf(cloud.app);
    event = await openEvent(cloud.app, admin.headers, { name: 'Field day' });
    guest = await confirmedGuest(cloud.app, admin.headers, event.id, { name: 'Dora Field' });
    const { AGENT_DATA_KEY: _fromTheOldReadme, ...rest } = await agentEnv(
      cloud.url,
      await deviceToken(cloud.app, admin.headers, 'Gate F'),
      [event.publicToken],
    );
    env = rest;
  });
  afterAll(async () => {
    await agent?.kill('SIGKILL');
    await cloud.close();
  });

  it('without AGENT_DATA_KEY makes a private key once, and a restart keeps the queue and the last sync', async () => {
    agent = await startAgentProcess(env);
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.online === true,
      20_000,
      'online',
    );
    const dir = env.AGENT_DATA_DIR!;
    expect(mode(dir)).toBe(0o700);
    expect(mode(path.join(dir, 'data.key'))).toBe(0o600);
    const key = readFileSync(path.join(dir, 'data.key'), 'utf8');
    // No file of the folder is readable by another user.
    for (const file of Object.keys(fingerprint(dir))) expect(mode(path.join(dir, file)) & 0o077).toBe(0);

    await cloud.down();
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.online === false,
      10_000,
      'offline',
    );
    const lastSyncAt = (await agentCall(agent, 'GET', '/status')).body.lastSyncAt as string;
    expect(lastSyncAt).not.toBeNull();
    const admitted = await agentCall(agent, 'POST', `/events/${event.publicToken}/qr`, {
      code: guest.checkinUrl,
    });
    expect(admitted.body.outcome).toBe('success');
    await agent.kill('SIGTERM');

    agent = await startAgentProcess(env);
    const status = (await agentCall(agent, 'GET', '/status')).body;
    expect(status).toMatchObject({ online: false, queueLength: 1, lastSyncAt, unauthorized: null });
    expect(readFileSync(path.join(dir, 'data.key'), 'utf8')).toBe(key);

    await cloud.up();
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.queueLength === 0,
      20_000,
      'drained',
    );
    const row = await cloud.app.deps.db.prisma.checkIn.findUnique({ where: { id: admitted.body.checkInId } });
    expect(row).toMatchObject({ outcome: 'success', source: 'sync', guestId: guest.id });
  }, 120_000);

  it('with a wrong AGENT_DATA_KEY stops with a message naming the variable and the folder, and changes nothing', async () => {
    await agent?.kill('SIGTERM');
    const dir = env.AGENT_DATA_DIR!;
    const before = fingerprint(dir);
    const wrong = { ...env, AGENT_DATA_KEY: Buffer.alloc(32, 7).toString('base64') };
    const failure = await startAgentProcess(wrong).then(
      () => null,
      (error: Error) => error.message,
    );
    expect(failure).toMatch(/^agent exited 78:/);
    expect(failure).toContain('AGENT_DATA_KEY does not open the data in');
    expect(failure).toContain(dir);
    expect(failure).not.toMatch(/\n\s+at /); // a message, not a stack trace
    expect(fingerprint(dir)).toEqual(before);
  });

  it('says plainly when the cloud refuses its credentials, and a revoked device stops deciding', async () => {
    agent = await startAgentProcess(env);
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.online === true,
      20_000,
      'online',
    );
    let stderr = '';
    agent.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));

    const devices = await cloud.app.request('GET', '/v1/devices', { headers: admin.headers });
    const device = devices.body.items.find((d: { name: string }) => d.name === 'Gate F');
    await cloud.app.request('DELETE', `/v1/devices/${device.id}`, { headers: admin.headers });
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.unauthorized !== null,
      10_000,
      'unauthorized',
    );
    const status = (await agentCall(agent, 'GET', '/status')).body;
    expect(status.online).toBe(false);
    expect(status.unauthorized).toMatch(/revoked/);
    const refused = await agentCall(agent, 'POST', `/events/${event.publicToken}/qr`, {
      code: guest.checkinUrl,
    });
    expect(refused).toMatchObject({
      status: 403,
      body: {
        type: 'https://portico.dev/problems/device_not_authorised',
        title: 'Forbidden',
        status: 403,
        code: 'device_not_authorised',
        requestId: expect.stringMatching(/^req_/),
      },
    });
    expect((await agentCall(agent, 'GET', '/status')).body.queueLength).toBe(0);
    const logged = stderr
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: string; msg: string });
    expect(logged).toEqual([
      expect.objectContaining({ level: 'error', msg: expect.stringMatching(/not authorised/) }),
    ]);
    await agent.kill('SIGTERM');
  });

  it('names a wrong internal secret as such', async () => {
    agent = await startAgentProcess({ ...env, INTERNAL_SECRET: 'not-the-platform-secret-0123456789' });
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.unauthorized !== null,
      10_000,
      'unauthorized',
    );
    expect((await agentCall(agent, 'GET', '/status')).body.unauthorized).toMatch(/internal secret/);
  });

  it('is provisioned by a code from the console: paired, it serves the events assigned there, and the doctor says so', async () => {
    await agent?.kill('SIGTERM');
    const { AGENT_DATA_DIR: _old, ...base } = env;
    const fresh = { ...base, AGENT_DATA_DIR: `${env.AGENT_DATA_DIR!}-paired` };
    // Nothing but the folder: no cloud URL, secret, token or event in the environment.
    const settings = Object.fromEntries(
      Object.entries(fresh).filter(
        ([k]) => !['PORTICO_CLOUD_URL', 'INTERNAL_SECRET', 'DEVICE_TOKEN', 'EVENT_TOKENS'].includes(k),
      ),
    );
    const notPaired = await startAgentProcess(settings).then(
      () => null,
      (error: Error) => error.message,
    );
    expect(notPaired).toMatch(/^agent exited 78:.*not paired.*pnpm agent pair/s);

    // A draft assigned too: it has no replica until published, and must not stop the others.
    const draft = await cloud.app.request('POST', '/v1/events', {
      headers: admin.headers,
      body: { name: 'Later' },
    });
    expect(draft.body.status).toBe('draft');
    const made = await cloud.app.request('POST', '/v1/devices/pairing-codes', {
      headers: admin.headers,
      body: { name: 'Gate P', eventIds: [event.id, draft.body.id] },
    });
    expect(made.status, made.text).toBe(201);
    const wrong = await agentCommand(settings, 'pair', '--cloud', cloud.url, '--code', 'AAAA-AAAA');
    expect(wrong.code).toBe(78);
    expect(wrong.out).toMatch(/does not accept this code/);
    const paired = await agentCommand(
      settings,
      'pair',
      '--cloud',
      cloud.url,
      '--code',
      made.body.code.toLowerCase(),
    );
    expect(paired.out).toContain('Paired as "Gate P"');
    expect(paired.out).toContain('Field day');
    expect(paired.code).toBe(0);

    agent = await startAgentProcess(settings);
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.events[0]?.guests === 1,
      20_000,
      'the assigned event replicated',
    );
    const status = (await agentCall(agent, 'GET', '/status')).body;
    expect(status).toMatchObject({ online: true, unauthorized: null });
    expect(status.events.map((e: { token: string }) => e.token)).toEqual([event.publicToken]);
    const admitted = await agentCall(agent, 'POST', `/events/${event.publicToken}/qr`, {
      code: guest.checkinUrl,
    });
    expect(admitted.status).toBe(200);

    const doctor = await agentCommand(settings, 'doctor');
    expect(doctor.code).toBe(0);
    expect(doctor.out).toMatch(/ok +device +paired as "Gate P"/);
    expect(doctor.out).toMatch(/ok +key +data\.key in the folder, opens the data/);
    expect(doctor.out).toMatch(/ok +events +\S+ 1 guest\(s\)/);
    const wrongKey = await agentCommand(
      { ...settings, AGENT_DATA_KEY: Buffer.alloc(32, 9).toString('base64') },
      'doctor',
    );
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.out).toMatch(/NO +key +AGENT_DATA_KEY does not open the data/);

    // Taken off the event in the console: the device stops serving it; revoked: it stops at once.
    const devices = await cloud.app.request('GET', '/v1/devices', { headers: admin.headers });
    const device = devices.body.items.find((d: { name: string }) => d.name === 'Gate P');
    await cloud.app.request('PUT', `/v1/devices/${device.id}/events`, {
      headers: admin.headers,
      body: { eventIds: [] },
    });
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.events.length === 0,
      10_000,
      'unassigned',
    );
    const unknown = await agentCall(agent, 'POST', `/events/${event.publicToken}/qr`, {
      code: guest.checkinUrl,
    });
    expect(unknown.status).toBe(404);
    await cloud.app.request('DELETE', `/v1/devices/${device.id}`, { headers: admin.headers });
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.unauthorized !== null,
      10_000,
      'revoked',
    );
  }, 120_000);
});
