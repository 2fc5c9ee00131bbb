// Set-up of the edge journeys: a real cloud (cloud/test/support/app.ts) that can be stopped and started
// again on the same database behind a fixed address, and the real device agent as a child process
// (`node --import tsx device-agent/src/main.ts`) that can be SIGKILLed.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestApp, type TestApp } from '@portico/test-support/app';
import { createTestDatabase } from '@portico/test-support/database';
import type { FaceService } from '../../cloud/src/infra/face.js';

export const INTERNAL_SECRET = 'edge-journey-internal-secret-0123456789';
const AGENT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../device-agent');

/**
 * The cloud behind a TCP relay on a fixed port: `down()` stops the cloud and the relay (connections are
 * refused, as at a host whose service is down), `up()` starts both again on the same data and port.
 * Not a relay that accepts connections and drops them: on Node 20, when the first connection of a process
 * is dropped so, fetch waits for the caller's timeout (the agent's 10 s) instead of failing at once.
 */
export async function startCloud(env: Record<string, string> = {}, face?: FaceService) {
  const database = await createTestDatabase();
  // The same keys across restarts, as a real deployment has: stored webhook secrets stay readable.
  const keys = {
    JWT_SECRET: randomBytes(48).toString('base64url'),
    DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
  let app: TestApp | null = null;
  let target: number | null = null;
  const sockets = new Set<net.Socket>();
  const relay = net.createServer((client) => {
    if (target === null) return client.destroy();
    const upstream = net.connect(target, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      relay.once('error', reject);
      relay.listen(port, '127.0.0.1', () => {
        relay.off('error', reject);
        port = (relay.address() as net.AddressInfo).port;
        resolve();
      });
    });
  const unlisten = () =>
    new Promise<void>((resolve) => {
      if (!relay.listening) return resolve();
      relay.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  await listen();
  const cloud = {
    url: `http://127.0.0.1:${port}`,
    get app(): TestApp {
      if (!app) throw new Error('the cloud is down');
      return app;
    },
    database,
    async up() {
      app = await createTestApp({
        database,
        env: { INTERNAL_SECRET, ...keys, ...env },
        ...(face && { face }),
      });
      target = Number(new URL(app.url).port);
      if (!relay.listening) await listen();
    },
    async down() {
      target = null;
      await unlisten();
      await app?.close();
      app = null;
    },
    async close() {
      await cloud.down();
      await database.close();
    },
  };
  await cloud.up();
  return cloud;
}

export type Cloud = Awaited<ReturnType<typeof startCloud>>;

export interface AgentProcess {
  url: string;
  child: ChildProcess;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** The agent's settings for one device; the same dir and key survive restarts. */
export async function agentEnv(
  cloudUrl: string,
  deviceToken: string,
  eventTokens: string[],
  extra: Record<string, string> = {},
) {
  return {
    PORTICO_CLOUD_URL: cloudUrl,
    INTERNAL_SECRET,
    DEVICE_TOKEN: deviceToken,
    EVENT_TOKENS: eventTokens.join(','),
    AGENT_DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'portico-agent-')),
    AGENT_DATA_KEY: randomBytes(32).toString('base64'),
    AGENT_PORT: '0',
    AGENT_FACE: 'off',
    SYNC_INTERVAL_MS: '200',
    MAX_BACKOFF_MS: '400',
    ...extra,
  };
}

export async function startAgentProcess(env: Record<string, string>): Promise<AgentProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: AGENT_DIR,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /"url":"([^"]+)"/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`agent exited ${code}: ${stderr}`)));
  });
  return {
    url,
    child,
    kill: (signal = 'SIGTERM') =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}

export async function agentCall(agent: { url: string }, method: string, path: string, body?: unknown) {
  const res = await fetch(`${agent.url}${path}`, {
    method,
    ...(body !== undefined && {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  });
  return { status: res.status, body: (await res.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests assert on shapes
}

/** Polls `check` until it returns true (every 100 ms, up to `timeoutMs`). */
export async function until(check: () => Promise<boolean> | boolean, timeoutMs = 20_000, what = 'condition') {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Waits until the agent has synced twice since now, so a change made in the cloud before this call has
 * reached its replica (the first sync may have fetched the replica before the change).
 */
export async function replicaCaughtUp(agent: { url: string }, timeoutMs = 10_000) {
  for (let i = 0; i < 2; i++) {
    const synced = (await agentCall(agent, 'GET', '/status')).body.lastSyncAt;
    await until(
      async () => (await agentCall(agent, 'GET', '/status')).body.lastSyncAt !== synced,
      timeoutMs,
      'the next sync of the replica',
    );
  }
}

type Headers = Record<string, string>;

/** An event created by a tenant admin (`body` as `POST /v1/events` takes it) and opened. */
export async function openEvent(
  app: TestApp,
  headers: Headers,
  body: Record<string, unknown>,
): Promise<{ id: string; publicToken: string }> {
  const created = await app.request('POST', '/v1/events', { headers, body });
  if (created.status !== 201) throw new Error(`could not create the event: ${created.text}`);
  const opened = await app.request('PATCH', `/v1/events/${created.body.id}/status`, {
    headers,
    body: { status: 'open' },
  });
  if (opened.status !== 200) throw new Error(`could not open the event: ${opened.text}`);
  return created.body;
}

/** A confirmed guest of the event, linked to a person when `personId` is given. */
export async function confirmedGuest(
  app: TestApp,
  headers: Headers,
  eventId: string,
  guest: { name: string; personId?: string },
) {
  const res = await app.request('POST', `/v1/events/${eventId}/guests`, {
    headers,
    body: { ...guest, status: 'confirmed' },
  });
  if (res.status !== 201) throw new Error(`could not add the guest: ${res.text}`);
  return res.body;
}

/** A device of the tenant, registered by its admin: its token goes with the agent's settings. */
export async function deviceToken(app: TestApp, headers: Headers, name: string): Promise<string> {
  const res = await app.request('POST', '/v1/devices', { headers, body: { name } });
  if (res.status !== 201) throw new Error(`could not register the device: ${res.text}`);
  return res.body.token;
}
