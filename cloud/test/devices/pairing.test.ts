// Provisioning by code over HTTP on a real database: an admin makes a pairing code, a new device
// exchanges it once (no credentials) for its token and the internal secret, then reads the events
// assigned to it at GET /v1/sync/device; reassignment, renaming, revocation, the abuse limit on
// /pair and bad input.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOf, loggedInUser, login, startApp, type IdentityApp } from '../support/identity.js';

const SECRET = 'current-internal-secret-0123456789';
const PREVIOUS = 'previous-internal-secret-0123456789';
const CODE = /^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{4}-[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{4}$/;

describe('pairing devices by code', () => {
  let t: IdentityApp;
  let a: Awaited<ReturnType<typeof adminOf>>;
  let b: Awaited<ReturnType<typeof adminOf>>;
  let gala: string;
  let fair: string;
  let otherTenantEvent: string;
  /** A client address of its own per test that exchanges codes, so the abuse limits do not carry over. */
  let address = 0;
  const from = () => ({ 'x-forwarded-for': `198.51.100.${++address}` });

  const newEvent = async (admin: typeof a, name: string, startsAt?: string) => {
    const res = await t.request('POST', '/v1/events', {
      headers: admin.headers,
      body: { name, ...(startsAt && { startsAt }) },
    });
    expect(res.status, res.text).toBe(201);
    return res.body.id as string;
  };
  const makeCode = async (body: Record<string, unknown>, admin = a) => {
    const res = await t.request('POST', '/v1/devices/pairing-codes', { headers: admin.headers, body });
    expect(res.status, res.text).toBe(201);
    return res.body as { code: string; expiresAt: string; name: string; eventIds: string[] };
  };
  const pair = (code: unknown, headers = from()) =>
    t.request('POST', '/v1/devices/pair', { headers, body: { code } });
  const asDevice = (token: string) => ({ 'x-internal-secret': SECRET, 'x-device-token': token });
  const syncDevice = (token: string) => t.request('GET', '/v1/sync/device', { headers: asDevice(token) });
  const paired = async (body: Record<string, unknown>) => {
    const res = await pair((await makeCode(body)).code);
    expect(res.status, res.text).toBe(201);
    return res.body as { device: { id: string; name: string }; deviceToken: string };
  };
  /** The owner's session again after the clock moved (access tokens last 15 minutes). */
  const relogin = async () => {
    const { token } = await login(t, a.tenant.adminEmail);
    a.headers = { authorization: `Bearer ${token}` };
  };

  beforeAll(async () => {
    t = await startApp({ INTERNAL_SECRET: `${SECRET},${PREVIOUS}` });
    a = await adminOf(t);
    b = await adminOf(t);
    gala = await newEvent(a, 'Gala', '2026-12-01T19:00:00.000Z');
    fair = await newEvent(a, 'Fair', '2026-12-05T09:00:00.000Z');
    otherTenantEvent = await newEvent(b, 'Not yours');
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  describe('POST /v1/devices/pairing-codes', () => {
    it('answers a code XXXX-XXXX of the unambiguous alphabet, valid 10 minutes, stored only as a hash and audited', async () => {
      const made = await makeCode({ name: 'Entrance A', eventIds: [gala, gala] });
      expect(made.code).toMatch(CODE);
      expect(made).toMatchObject({ name: 'Entrance A', eventIds: [gala] });
      expect(new Date(made.expiresAt).getTime() - t.clock.now().getTime()).toBe(10 * 60_000);
      expect(made).toMatchObject({ expiresIn: 600 });
      const rows = await t.deps.db.prisma.pairingCode.findMany({ where: { tenantId: a.tenant.tenantId } });
      const plain = made.code.replace('-', '');
      expect(JSON.stringify(rows)).not.toContain(plain);
      expect(JSON.stringify(rows)).not.toContain(made.code);
      const audit = await t.deps.db.prisma.auditLog.findMany({
        where: { tenantId: a.tenant.tenantId, action: 'device.pairing_code_created' },
      });
      expect(audit.length).toBeGreaterThan(0);
      expect(JSON.stringify(audit)).not.toContain(plain);
    });

    it('is for owners and admins only: an operator gets 403, no session 401', async () => {
      const operator = await loggedInUser(t, a.tenant.tenantId, 'operator', `op-${Date.now()}@example.com`);
      const res = await t.request('POST', '/v1/devices/pairing-codes', {
        headers: operator,
        body: { name: 'Door' },
      });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
      const anonymous = await t.request('POST', '/v1/devices/pairing-codes', { body: { name: 'Door' } });
      expect(anonymous.status).toBe(401);
    });

    it('refuses another tenant’s event, or an unknown one, with 404 not_found and makes no code', async () => {
      const before = await t.deps.db.prisma.pairingCode.count();
      for (const eventId of [otherTenantEvent, '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11']) {
        const res = await t.request('POST', '/v1/devices/pairing-codes', {
          headers: a.headers,
          body: { name: 'Door', eventIds: [gala, eventId] },
        });
        expect(res.status, res.text).toBe(404);
        expect(res.body.code).toBe('not_found');
        expect(res.body.detail).toContain(eventId);
      }
      expect(await t.deps.db.prisma.pairingCode.count()).toBe(before);
    });

    it('refuses bad input with 400 and a stable code: malformed JSON, wrong types, empty or long names, unknown keys', async () => {
      const raw = await t.request('POST', '/v1/devices/pairing-codes', {
        headers: { ...a.headers, 'content-type': 'application/json' },
        raw: '{"name": "Door",',
      });
      expect(raw.status).toBe(400);
      expect(raw.body.code).toBe('malformed_json');
      for (const body of [
        { name: 42 },
        { name: '' },
        { name: 'x'.repeat(101) },
        { name: 'Door', eventIds: 'all' },
        { name: 'Door', eventIds: [7] },
        { name: 'Door', extra: true },
      ]) {
        const res = await t.request('POST', '/v1/devices/pairing-codes', { headers: a.headers, body });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.code).toBe('validation_failed');
      }
    });
  });

  describe('POST /v1/devices/pair', () => {
    it('makes the device of the code once: its token, the current internal secret and the cloud URL; audited', async () => {
      const made = await makeCode({ name: 'Entrance B', eventIds: [gala] });
      const res = await pair(made.code);
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({
        device: { name: 'Entrance B', eventIds: [gala], revokedAt: null, online: false },
        internalSecret: SECRET,
        cloudUrl: expect.stringMatching(/^http/),
      });
      expect(res.body.deviceToken).toMatch(new RegExp(`^pdt_${res.body.device.id}\\.[A-Za-z0-9_-]{43}$`));
      const row = await t.deps.db.prisma.device.findUniqueOrThrow({ where: { id: res.body.device.id } });
      expect(row.tenantId).toBe(a.tenant.tenantId);
      expect(row.secretHash).not.toContain(res.body.deviceToken.split('.')[1]);
      const audit = await t.deps.db.prisma.auditLog.findFirst({
        where: { action: 'device.paired', targetId: res.body.device.id },
      });
      expect(audit).toMatchObject({ tenantId: a.tenant.tenantId, actorType: 'public' });
      expect(JSON.stringify(audit)).not.toContain(res.body.deviceToken);

      const again = await pair(made.code);
      expect(again.status).toBe(400);
      expect(again.body.code).toBe('invalid_pairing_code');
    });

    it('takes the code in any case, with or without its dash or spaces', async () => {
      const made = await makeCode({ name: 'Lower case' });
      const typed = ` ${made.code.replace('-', '').toLowerCase().slice(0, 4)} ${made.code.slice(5).toLowerCase()} `;
      const res = await pair(typed);
      expect(res.status, res.text).toBe(201);
      expect(res.body.device.name).toBe('Lower case');
    });

    it('answers an unknown, a used, an expired and a malformed code alike: 400 invalid_pairing_code', async () => {
      const used = await makeCode({ name: 'Used' });
      expect((await pair(used.code)).status).toBe(201);
      const expiring = await makeCode({ name: 'Expiring' });
      t.clock.advance(10 * 60_000);
      const answers = await Promise.all(
        ['ABCD-EFGH', used.code, expiring.code, 'not a code', '0O1I-LLLL'].map((c) => pair(c)),
      );
      for (const res of answers) {
        expect(res.status, res.text).toBe(400);
        expect(res.body.code).toBe('invalid_pairing_code');
        expect(res.body.detail).toBe(answers[0]!.body.detail);
      }
      expect(await t.deps.db.prisma.device.count({ where: { name: 'Expiring' } })).toBe(0);
      await relogin();
    });

    it('gives one device for one code exchanged by several devices at once', async () => {
      const made = await makeCode({ name: 'Raced', eventIds: [fair] });
      const answers = await Promise.all(Array.from({ length: 5 }, () => pair(made.code)));
      expect(answers.map((r) => r.status).sort()).toEqual([201, 400, 400, 400, 400]);
      expect(await t.deps.db.prisma.device.count({ where: { name: 'Raced' } })).toBe(1);
    });

    it('refuses bad input with 400: malformed JSON, a code that is not a string, unknown keys', async () => {
      const raw = await t.request('POST', '/v1/devices/pair', {
        headers: { ...from(), 'content-type': 'application/json' },
        raw: '{"code": ',
      });
      expect(raw.status).toBe(400);
      expect(raw.body.code).toBe('malformed_json');
      for (const body of [
        {},
        { code: 12345678 },
        { code: ['ABCD-EFGH'] },
        { code: 'ABCD-EFGH', name: 'x' },
      ]) {
        const res = await t.request('POST', '/v1/devices/pair', { headers: from(), body });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.code).toBe('validation_failed');
      }
    });

    it('is rate limited per client address: 10 wrong codes, then 429 rate_limited with Retry-After even for a good code', async () => {
      const made = await makeCode({ name: 'After the limit' });
      const guesser = { 'x-forwarded-for': '203.0.113.9' };
      for (let i = 0; i < 10; i++) {
        const res = await pair(`AAAA-AA${'23456789'[i % 8]}${'23456789'[(i + 3) % 8]}`, guesser);
        expect(res.status).toBe(400);
      }
      const blocked = await pair(made.code, guesser);
      expect(blocked.status).toBe(429);
      expect(blocked.body.code).toBe('rate_limited');
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another address is not held back, and the code was not spent by the refused attempt.
      expect((await pair(made.code)).status).toBe(201);
    });
  });

  describe('GET /v1/sync/device and the assignment', () => {
    it('answers the paired device and exactly its assigned events, with their public tokens', async () => {
      const device = await paired({ name: 'Hall', eventIds: [fair, gala] });
      const res = await syncDevice(device.deviceToken);
      expect(res.status, res.text).toBe(200);
      expect(res.body.device).toEqual({ id: device.device.id, name: 'Hall' });
      const galaRow = await t.deps.db.prisma.event.findUniqueOrThrow({ where: { id: gala } });
      expect(res.body.events.map((e: { id: string }) => e.id)).toEqual([gala, fair]);
      expect(res.body.events[0]).toEqual({
        id: gala,
        name: 'Gala',
        token: galaRow.publicToken,
        status: 'draft',
        startsAt: '2026-12-01T19:00:00.000Z',
        endsAt: null,
      });
      const none = await paired({ name: 'Spare' });
      expect((await syncDevice(none.deviceToken)).body.events).toEqual([]);
    });

    it('follows a reassignment (PUT /v1/devices/{id}/events) and leaves deleted events out', async () => {
      const device = await paired({ name: 'Moving', eventIds: [gala] });
      const put = await t.request('PUT', `/v1/devices/${device.device.id}/events`, {
        headers: a.headers,
        body: { eventIds: [fair] },
      });
      expect(put.status, put.text).toBe(200);
      expect(put.body).toMatchObject({ id: device.device.id, eventIds: [fair] });
      expect((await syncDevice(device.deviceToken)).body.events.map((e: { id: string }) => e.id)).toEqual([
        fair,
      ]);

      const doomed = await newEvent(a, 'Doomed');
      await t.request('PUT', `/v1/devices/${device.device.id}/events`, {
        headers: a.headers,
        body: { eventIds: [fair, doomed] },
      });
      const deleted = await t.request('DELETE', `/v1/events/${doomed}`, { headers: a.headers });
      expect(deleted.status, deleted.text).toBeLessThan(300);
      expect((await syncDevice(device.deviceToken)).body.events.map((e: { id: string }) => e.id)).toEqual([
        fair,
      ]);

      const cleared = await t.request('PUT', `/v1/devices/${device.device.id}/events`, {
        headers: a.headers,
        body: { eventIds: [] },
      });
      expect(cleared.body.eventIds).toEqual([]);
      expect((await syncDevice(device.deviceToken)).body.events).toEqual([]);
    });

    it('refuses another tenant’s event or device with 404, and bad bodies with 400', async () => {
      const device = await paired({ name: 'Strict' });
      const foreignEvent = await t.request('PUT', `/v1/devices/${device.device.id}/events`, {
        headers: a.headers,
        body: { eventIds: [otherTenantEvent] },
      });
      expect(foreignEvent.status).toBe(404);
      expect(foreignEvent.body.code).toBe('not_found');
      const foreignDevice = await t.request('PUT', `/v1/devices/${device.device.id}/events`, {
        headers: b.headers,
        body: { eventIds: [] },
      });
      expect(foreignDevice.status).toBe(404);
      const rename = await t.request('PATCH', `/v1/devices/${device.device.id}`, {
        headers: b.headers,
        body: { name: 'Mine now' },
      });
      expect(rename.status).toBe(404);
      for (const body of [{}, { eventIds: gala }, { eventIds: [null] }, { eventIds: [], more: 1 }]) {
        const res = await t.request('PUT', `/v1/devices/${device.device.id}/events`, {
          headers: a.headers,
          body,
        });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.code).toBe('validation_failed');
      }
    });

    it('renames a device (PATCH /v1/devices/{id}); the device sees its new name', async () => {
      const device = await paired({ name: 'Old name' });
      const res = await t.request('PATCH', `/v1/devices/${device.device.id}`, {
        headers: a.headers,
        body: { name: '  New name ' },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.name).toBe('New name');
      expect((await syncDevice(device.deviceToken)).body.device.name).toBe('New name');
      const empty = await t.request('PATCH', `/v1/devices/${device.device.id}`, {
        headers: a.headers,
        body: { name: ' ' },
      });
      expect(empty.status).toBe(400);
    });

    it('answers a revoked device 401 invalid_token at once', async () => {
      const device = await paired({ name: 'Lost', eventIds: [gala] });
      expect((await syncDevice(device.deviceToken)).status).toBe(200);
      const revoked = await t.request('DELETE', `/v1/devices/${device.device.id}`, { headers: a.headers });
      expect(revoked.status).toBe(200);
      const res = await syncDevice(device.deviceToken);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('invalid_token');
    });

    it('lists each device with its events, last sync, queue length and online (seen within 2 minutes)', async () => {
      const device = await paired({ name: 'Listed', eventIds: [gala] });
      await syncDevice(device.deviceToken);
      const batch = await t.request('POST', '/v1/sync/batch', {
        headers: asDevice(device.deviceToken),
        body: {
          queueLength: 3,
          items: [
            {
              clientId: randomUUID(),
              method: 'facial',
              outcome: 'denied',
              reason: 'not_recognised',
              recordedAt: new Date(t.clock.now().getTime() - 60_000).toISOString(),
            },
          ],
        },
      });
      expect(batch.status, batch.text).toBe(200);
      const listed = async () =>
        (await t.request('GET', '/v1/devices', { headers: a.headers })).body.items.find(
          (d: { id: string }) => d.id === device.device.id,
        );
      expect(await listed()).toMatchObject({
        name: 'Listed',
        eventIds: [gala],
        online: true,
        queueLength: 3,
        lastSyncAt: t.clock.now().toISOString(),
        lastSeenAt: t.clock.now().toISOString(),
      });
      t.clock.advance(2 * 60_000 + 1);
      expect((await listed()).online).toBe(false);
      await syncDevice(device.deviceToken);
      expect((await listed()).online).toBe(true);
    });
  });
});
