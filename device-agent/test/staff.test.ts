// The staff fallback on the device agent, with the real cloud (PGlite) and the agent as a child
// process: the PIN (hashed in the environment) opens a session, wrong PINs lock it out, the guest
// search ignores accents, a manual check-in is decided and queued on the device, works offline and
// reaches the cloud as a `manual` check-in through /v1/sync/batch; staff routes refuse callers that
// are not on the machine.
import os from 'node:os';
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
} from '../../test/support/edge.js';
import { hashPin } from '../src/pin.js';
import { foldText } from '../src/staff.js';

const PIN = '482913';
const external = Object.values(os.networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

async function staffCall(
  agent: { url: string },
  method: string,
  path: string,
  session: string | undefined,
  body?: unknown,
) {
  const res = await fetch(`${agent.url}${path}`, {
    method,
    headers: {
      ...(session && { 'x-staff-session': session }),
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests assert on shapes
}

describe('hashPin', () => {
  it('stores a salted scrypt hash, never the PIN, and refuses PINs that are not 4 to 12 digits', () => {
    const a = hashPin(PIN);
    expect(a).toMatch(/^scrypt:[\w-]+:[\w-]+$/);
    expect(a).not.toContain(PIN);
    expect(hashPin(PIN)).not.toBe(a);
    expect(() => hashPin('123')).toThrow(/4 to 12 digits/);
    expect(() => hashPin('12ab56')).toThrow(/4 to 12 digits/);
  });

  it('folds accents and case for the search', () => {
    expect(foldText('João CONCEIÇÃO Müller')).toBe('joao conceicao muller');
  });
});

describe(
  'staff routes on the device agent (real cloud, agent as a child process)',
  { timeout: 60_000 },
  () => {
    let cloud: Cloud;
    let agent: AgentProcess | undefined;
    let event: { id: string; publicToken: string };
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      cloud = await startCloud();
      const admin = await adminOf(cloud.app);
      event = await openEvent(cloud.app, admin.headers, { name: 'Expo' });
      for (const name of ['João Conceição', 'Joana Prado', 'Ana Lima']) {
        ids[name] = (await confirmedGuest(cloud.app, admin.headers, event.id, { name })).id;
      }
      const token = await deviceToken(cloud.app, admin.headers, 'Gate 1');
      agent = await startAgentProcess(
        await agentEnv(cloud.url, token, [event.publicToken], {
          // Listening on every interface, and answering for this machine's network address, so a caller
          // from another address can be tried.
          AGENT_HOST: '0.0.0.0',
          ...(external && { AGENT_ALLOWED_HOSTS: external }),
          STAFF_PIN_HASH: hashPin(PIN),
          STAFF_PIN_ATTEMPTS: '3',
          STAFF_LOCKOUT_S: '1',
          STAFF_SESSION_S: '2',
        }),
      );
      agent.url = agent.url.replace('0.0.0.0', '127.0.0.1');
      await until(
        async () => (await agentCall(agent!, 'GET', '/status')).body.events[0].guests === 3,
        20_000,
        'replica',
      );
    }, 120_000);

    afterAll(async () => {
      await agent?.kill('SIGKILL');
      await cloud?.close();
    });

    it('refuses wrong PINs, locks out after 3 in a row (even the right PIN, with Retry-After), then opens with the right PIN', async () => {
      const wrong = await staffCall(agent!, 'POST', '/staff/session', undefined, { pin: '000000' });
      expect(wrong.status).toBe(401);
      expect(wrong.body).toMatchObject({ code: 'wrong_pin' });
      expect(wrong.body.detail).toMatch(/2 attempt/);
      expect((await staffCall(agent!, 'POST', '/staff/session', undefined, { pin: '111111' })).status).toBe(
        401,
      );
      const locked = await staffCall(agent!, 'POST', '/staff/session', undefined, { pin: '222222' });
      expect(locked.status).toBe(429);
      expect(locked.body.code).toBe('staff_locked');
      expect(locked.headers.get('retry-after')).toBe('1');
      const rightButLocked = await staffCall(agent!, 'POST', '/staff/session', undefined, { pin: PIN });
      expect(rightButLocked.status).toBe(429);
      // Not digits: a validation error, not a guess.
      expect((await staffCall(agent!, 'POST', '/staff/session', undefined, { pin: 'abcd' })).status).toBe(
        400,
      );

      await new Promise((r) => setTimeout(r, 1100));
      const open = await staffCall(agent!, 'POST', '/staff/session', undefined, { pin: PIN });
      expect(open.status).toBe(200);
      expect(open.body).toEqual({ token: expect.any(String), idleTimeoutS: 2 });
    });

    it('searches the replica by name prefix, accents and case ignored, only within a staff session', async () => {
      const search = (q: string, session: string | undefined) =>
        staffCall(agent!, 'GET', `/events/${event.publicToken}/guests?q=${encodeURIComponent(q)}`, session);
      expect((await search('joao', undefined)).body.code).toBe('staff_session_required');
      expect((await search('joao', 'not-a-session')).status).toBe(401);

      const { token } = (await staffCall(agent!, 'POST', '/staff/session', undefined, { pin: PIN })).body;
      const names = async (q: string) =>
        ((await search(q, token)).body.items as { name: string }[]).map((g) => g.name);
      expect(await names('joao')).toEqual(['João Conceição']);
      expect(await names('JOÃO')).toEqual(['João Conceição']);
      expect(await names('conceicao')).toEqual(['João Conceição']);
      expect(await names('jo')).toEqual(['Joana Prado', 'João Conceição']);
      expect(await names('jo pra')).toEqual(['Joana Prado']);
      expect(await names('lima ana')).toEqual(['Ana Lima']);
      expect(await names('xavier')).toEqual([]);
      const item = (await search('ana lima', token)).body.items[0];
      expect(item).toEqual({ guestId: ids['Ana Lima'], name: 'Ana Lima', checkedIn: false });
      expect((await search('', token)).status).toBe(400);
      expect((await staffCall(agent!, 'GET', `/events/nope/guests?q=ana`, token)).body.code).toBe(
        'unknown_event',
      );
    });

    it('checks a guest in by hand, on the device and offline too, and the cloud records `manual` check-ins after sync', async () => {
      const { token } = (await staffCall(agent!, 'POST', '/staff/session', undefined, { pin: PIN })).body;
      const manual = (guestId: string, session: string | null = token) =>
        staffCall(agent!, 'POST', `/events/${event.publicToken}/manual`, session ?? undefined, { guestId });
      expect((await manual(ids['Ana Lima']!, null)).status).toBe(401);

      const online = await manual(ids['Ana Lima']!);
      expect(online.status).toBe(200);
      expect(online.body).toMatchObject({ outcome: 'success', guest: { displayName: 'Ana' } });
      expect((await manual('0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11')).body.code).toBe('unknown_guest');

      await cloud.down();
      await until(async () => !(await agentCall(agent!, 'GET', '/status')).body.online, 10_000, 'offline');
      // A fresh session: waiting for the agent to notice may outlast the 2 s idle timeout.
      const later = (await staffCall(agent!, 'POST', '/staff/session', undefined, { pin: PIN })).body.token;
      const offline = await manual(ids['João Conceição']!, later);
      expect(offline.status).toBe(200);
      expect(offline.body.outcome).toBe('success');
      expect((await agentCall(agent!, 'GET', '/status')).body.queueLength).toBeGreaterThanOrEqual(1);
      // The search shows who is in already.
      const found = await staffCall(agent!, 'GET', `/events/${event.publicToken}/guests?q=joao`, later);
      expect(found.body.items[0].checkedIn).toBe(true);

      await cloud.up();
      await until(
        async () => (await agentCall(agent!, 'GET', '/status')).body.queueLength === 0,
        20_000,
        'drained',
      );
      const rows = await cloud.app.deps.db.prisma.checkIn.findMany({
        where: { eventId: event.id, method: 'manual' },
        select: { id: true, guestId: true, outcome: true, source: true },
      });
      expect(rows.map((r) => r.guestId).sort()).toEqual([ids['Ana Lima'], ids['João Conceição']].sort());
      expect(rows.every((r) => r.outcome === 'success' && r.source === 'sync')).toBe(true);
      expect(rows.map((r) => r.id)).toContain(offline.body.checkInId);
      const guest = await cloud.app.deps.db.prisma.guest.findUnique({
        where: { id: ids['João Conceição']! },
      });
      expect(guest?.status).toBe('checked_in');
    });

    it('ends a staff session after its idle timeout and on DELETE', async () => {
      const { token } = (await staffCall(agent!, 'POST', '/staff/session', undefined, { pin: PIN })).body;
      const search = () => staffCall(agent!, 'GET', `/events/${event.publicToken}/guests?q=ana`, token);
      expect((await search()).status).toBe(200);
      await new Promise((r) => setTimeout(r, 2200));
      expect((await search()).status).toBe(401);

      const second = (await staffCall(agent!, 'POST', '/staff/session', undefined, { pin: PIN })).body.token;
      expect((await staffCall(agent!, 'DELETE', '/staff/session', second)).body).toEqual({ ended: true });
      expect(
        (await staffCall(agent!, 'GET', `/events/${event.publicToken}/guests?q=ana`, second)).status,
      ).toBe(401);
    });

    it('answers staff routes only to callers on this machine, and documents them in /docs-json', async () => {
      if (external) {
        const port = new URL(agent!.url).port;
        const remote = await staffCall(
          { url: `http://${external}:${port}` },
          'POST',
          '/staff/session',
          undefined,
          {
            pin: PIN,
          },
        );
        expect(remote.status).toBe(403);
        expect(remote.body.code).toBe('local_only');
        // The kiosk's own routes are not restricted this way.
        expect((await fetch(`http://${external}:${port}/status`)).status).toBe(200);
      } else {
        console.warn('[staff] no non-loopback IPv4 address here: the local_only check was not exercised');
      }
      const doc = (await agentCall(agent!, 'GET', '/docs-json')).body;
      expect(Object.keys(doc.paths)).toEqual(
        expect.arrayContaining([
          '/staff/session',
          '/events/{token}/guests',
          '/events/{token}/manual',
          '/face-box',
        ]),
      );
      expect(doc.paths['/events/{token}/manual'].post.responses).toHaveProperty('401');
    });
  },
);
