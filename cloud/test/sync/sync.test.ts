// Edge devices over HTTP: registration and revocation, POST /v1/sync/batch (credentials, per-item
// results, replays, flags, webhooks marked offline, tenant isolation) and the device replica feed.
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { embeddingToBuffer } from '@portico/face-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import { hashToken } from '../../src/infra/crypto.js';
import { templateContext } from '../../src/modules/faces/gallery.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { adminOf, bearer } from '../support/identity.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const SECRET = 'current-internal-secret-0123456789';
const PREVIOUS = 'previous-internal-secret-0123456789';

describe('edge devices and sync', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let a: Awaited<ReturnType<typeof adminOf>>;
  let b: Awaited<ReturnType<typeof adminOf>>;
  let deviceA: string;
  let deviceA2: string;
  let deviceB: string;

  const register = async (admin: typeof a, name: string) => {
    const res = await t.request('POST', '/v1/devices', { headers: admin.headers, body: { name } });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: string; token: string };
  };
  const as = (token: string, secret = SECRET) => ({ 'x-internal-secret': secret, 'x-device-token': token });
  const sync = (token: string, items: unknown[]) =>
    t.request('POST', '/v1/sync/batch', { headers: as(token), body: { items } });

  const openEvent = async (admin: typeof a, body: Record<string, unknown> = {}) => {
    const res = await t.request('POST', '/v1/events', {
      headers: admin.headers,
      body: { name: 'Gala', ...body },
    });
    expect(res.status, res.text).toBe(201);
    const status = await t.request('PATCH', `/v1/events/${res.body.id}/status`, {
      headers: admin.headers,
      body: { status: 'open' },
    });
    expect(status.status, status.text).toBe(200);
    return res.body as { id: string; publicToken: string };
  };
  const person = async (tenantId: string, name: string) => {
    const id = newId();
    await t.deps.db.prisma.person.create({ data: { id, tenantId, name, document: `D-${id}` } });
    return id;
  };
  const guest = async (admin: typeof a, eventId: string, name: string, personId?: string) => {
    const res = await t.request('POST', `/v1/events/${eventId}/guests`, {
      headers: admin.headers,
      body: { name, status: 'confirmed', ...(personId && { personId }) },
    });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: string };
  };
  const item = (over: Record<string, unknown> = {}) => ({
    clientId: newId(),
    method: 'facial',
    outcome: 'success',
    recordedAt: new Date(t.deps.clock.now().getTime() - 10 * 60_000).toISOString(),
    score: 0.8,
    livenessScore: 0.9,
    ...over,
  });

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await createTestApp({ env: { INTERNAL_SECRET: `${SECRET},${PREVIOUS}` } });
    a = await adminOf(t);
    b = await adminOf(t);
    await t.request('PATCH', `/v1/tenants/${a.tenant.tenantId}/settings`, {
      headers: a.headers,
      body: { webhookUrl: receiver.url },
    });
    deviceA = (await register(a, 'Door 1')).token;
    deviceA2 = (await register(a, 'Door 2')).token;
    deviceB = (await register(b, 'Other tenant')).token;
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  describe('credentials', () => {
    it('answers 401 without x-internal-secret, 403 with a wrong one and 401 to an integrator Bearer alone', async () => {
      const body = { items: [item()] };
      const none = await t.request('POST', '/v1/sync/batch', { body });
      expect(none.status).toBe(401);
      expect(none.body.code).toBe('unauthorized');
      const wrong = await t.request('POST', '/v1/sync/batch', { body, headers: as(deviceA, 'x'.repeat(34)) });
      expect(wrong.status).toBe(403);
      expect(wrong.body.code).toBe('forbidden');
      const admin = await t.request('POST', '/v1/sync/batch', { body, headers: a.headers });
      expect(admin.status).toBe(401);
      expect(admin.body.code).toBe('unauthorized');
      expect(await t.deps.db.prisma.checkIn.count({ where: { source: 'sync' } })).toBe(0);
    });

    it('takes the previous secret during a rotation, and needs a device token with the secret', async () => {
      const old = await t.request('POST', '/v1/sync/batch', {
        headers: as(deviceA, PREVIOUS),
        body: { items: [item({ outcome: 'denied', reason: 'not_recognised' })] },
      });
      expect(old.status, old.text).toBe(200);
      const tokenless = await t.request('POST', '/v1/sync/batch', {
        headers: { 'x-internal-secret': SECRET },
        body: { items: [item()] },
      });
      expect(tokenless.status).toBe(401);
      const forged = await t.request('POST', '/v1/sync/batch', {
        headers: as(`${deviceA.slice(0, -4)}AAAA`),
        body: { items: [item()] },
      });
      expect(forged.status).toBe(401);
      expect(forged.body.code).toBe('invalid_token');
    });

    it('refuses a revoked device with 401 invalid_token; only its own tenant may revoke it (404)', async () => {
      const lost = await register(a, 'Lost kiosk');
      expect((await t.request('DELETE', `/v1/devices/${lost.id}`, { headers: b.headers })).status).toBe(404);
      const revoked = await t.request('DELETE', `/v1/devices/${lost.id}`, { headers: a.headers });
      expect(revoked.status).toBe(200);
      expect(revoked.body.revokedAt).toEqual(expect.any(String));
      const res = await sync(lost.token, [item()]);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('invalid_token');
      const list = await t.request('GET', '/v1/devices', { headers: a.headers });
      expect(list.body.items.map((d: { name: string }) => d.name)).toEqual(
        expect.arrayContaining(['Door 1', 'Door 2', 'Lost kiosk']),
      );
      expect(list.body.items.some((d: { token?: string }) => 'token' in d)).toBe(false);
    });

    it('device credentials reach no admin or integrator route (403)', async () => {
      const res = await t.request('GET', '/v1/events', { headers: as(deviceA) });
      expect(res.status).toBe(403);
    });
  });

  describe('POST /v1/sync/batch', () => {
    it('records a good item under its client id and time, emits its webhook marked offline, and answers a replay as duplicate', async () => {
      const event = await openEvent(a);
      const p = await person(a.tenant.tenantId, 'Ana Maria');
      const g = await guest(a, event.id, 'Ana Maria', p);
      const good = item({ eventId: event.id, guestId: g.id, personId: p });
      const first = await sync(deviceA, [good]);
      expect(first.status, first.text).toBe(200);
      expect(first.body.results).toEqual([
        expect.objectContaining({
          clientId: good.clientId,
          status: 'accepted',
          checkInId: good.clientId,
          outcome: 'success',
          flags: [],
        }),
      ]);
      const row = await t.deps.db.prisma.checkIn.findUniqueOrThrow({ where: { id: good.clientId } });
      expect(row).toMatchObject({
        source: 'sync',
        guestId: g.id,
        personId: p,
        lateUpload: true,
        conflict: null,
      });
      expect(row.occurredAt.toISOString()).toBe(good.recordedAt);
      const hook = await receiver.waitForBody((body) => body.data?.checkInId === good.clientId);
      expect(hook.event).toBe('checkin.success');
      expect(hook.data).toMatchObject({
        offline: true,
        recordedAt: good.recordedAt,
        flags: [],
        guestId: g.id,
      });

      const again = await sync(deviceA, [good]);
      expect(again.body.results[0]).toMatchObject({
        status: 'duplicate',
        checkInId: good.clientId,
        outcome: 'success',
        flags: [],
      });
      expect(again.body.results[0].receivedAt).toBe(first.body.results[0].receivedAt);
      expect(await t.deps.db.prisma.checkIn.count({ where: { id: good.clientId } })).toBe(1);
      const guestRow = await t.deps.db.prisma.guest.findUniqueOrThrow({ where: { id: g.id } });
      expect(guestRow.status).toBe('checked_in');
      expect(guestRow.checkedInAt?.toISOString()).toBe(good.recordedAt);
    });

    it('records how a device settled a face between its lines (stepUpFactor): admitted or step_up_failed, with stepUp in the row and the webhook', async () => {
      const event = await openEvent(a);
      const p = await person(a.tenant.tenantId, 'Bia Costa');
      const g = await guest(a, event.id, 'Bia Costa', p);
      const admitted = item({
        eventId: event.id,
        guestId: g.id,
        personId: p,
        score: 0.5,
        stepUpFactor: 'qr',
      });
      const failed = item({ outcome: 'denied', reason: 'step_up_failed', score: 0.5, stepUpFactor: 'staff' });
      const res = await sync(deviceA, [admitted, failed]);
      expect(res.status, res.text).toBe(200);
      expect(res.body.results.map((r: { status: string }) => r.status)).toEqual(['accepted', 'accepted']);
      const rows = await t.deps.db.prisma.checkIn.findMany({
        where: { id: { in: [admitted.clientId, failed.clientId] } },
      });
      expect(Object.fromEntries(rows.map((r) => [r.id, [r.outcome, r.stepUpFactor]]))).toEqual({
        [admitted.clientId]: ['success', 'qr'],
        [failed.clientId]: ['denied', 'staff'],
      });
      const ok = await receiver.waitForBody((body) => body.data?.checkInId === admitted.clientId);
      expect(ok).toMatchObject({
        event: 'checkin.success',
        data: { stepUp: { factor: 'qr' }, offline: true },
      });
      const no = await receiver.waitForBody((body) => body.data?.checkInId === failed.clientId);
      expect(no).toMatchObject({ event: 'checkin.denied', data: { stepUp: { factor: 'staff' } } });
    });

    it('rejects a bad item with its code and still records the good ones around it', async () => {
      const event = await openEvent(a);
      const before = item({ eventId: event.id, outcome: 'denied', reason: 'not_recognised' });
      const after = item({ eventId: event.id, outcome: 'liveness_failed' });
      const otherTenantEvent = await openEvent(b);
      const res = await sync(deviceA, [
        before,
        { clientId: 'not-a-uuid', method: 'facial' },
        item({ eventId: otherTenantEvent.id }),
        'junk',
        after,
      ]);
      expect(res.status).toBe(200);
      expect(
        res.body.results.map((r: { status: string; code: string | null }) => [r.status, r.code]),
      ).toEqual([
        ['accepted', null],
        ['rejected', 'validation_failed'],
        ['rejected', 'not_found'],
        ['rejected', 'validation_failed'],
        ['accepted', null],
      ]);
      expect(res.body.results[1].clientId).toBe('not-a-uuid');
      expect(
        await t.deps.db.prisma.checkIn.count({ where: { id: { in: [before.clientId, after.clientId] } } }),
      ).toBe(2);
      expect(await t.deps.db.prisma.checkIn.count({ where: { eventId: otherTenantEvent.id } })).toBe(0);
    });

    it('keeps late facts and flags them: closed event, over capacity, a guest checked in by another kiosk', async () => {
      const event = await openEvent(a);
      const [p1, p2] = [await person(a.tenant.tenantId, 'Rui'), await person(a.tenant.tenantId, 'Eva')];
      const [g1, g2] = [await guest(a, event.id, 'Rui', p1), await guest(a, event.id, 'Eva', p2)];
      const config = await t.request('PATCH', `/v1/events/${event.id}/config`, {
        headers: a.headers,
        body: { capacity: 1, reentry: 'refuse' },
      });
      expect(config.status, config.text).toBe(200);
      const one = await sync(deviceA, [item({ eventId: event.id, guestId: g1.id, personId: p1 })]);
      expect(one.body.results[0]).toMatchObject({ status: 'accepted', flags: [] });
      // The second kiosk admitted the same guest while both were offline.
      const twice = item({ eventId: event.id, guestId: g1.id, personId: p1 });
      const dup = await sync(deviceA2, [twice]);
      expect(dup.body.results[0]).toMatchObject({
        status: 'accepted',
        outcome: 'success',
        flags: ['already_checked_in'],
      });
      const full = await sync(deviceA2, [item({ eventId: event.id, guestId: g2.id, personId: p2 })]);
      expect(full.body.results[0]).toMatchObject({
        status: 'accepted',
        outcome: 'success',
        flags: ['capacity_reached'],
      });
      await t.request('PATCH', `/v1/events/${event.id}/status`, {
        headers: a.headers,
        body: { status: 'closed' },
      });
      const closed = await sync(deviceA, [
        item({ eventId: event.id, method: 'qr', outcome: 'success', score: null }),
      ]);
      expect(closed.body.results[0]).toMatchObject({ status: 'accepted', flags: ['event_closed'] });
      const row = await t.deps.db.prisma.checkIn.findUniqueOrThrow({ where: { id: twice.clientId } });
      expect(row.conflict).toBe('already_checked_in');
      const hook = await receiver.waitForBody((body) => body.data?.checkInId === twice.clientId);
      expect(hook.data.flags).toEqual(['already_checked_in']);
      // A replay answers the flags of the first upload.
      expect((await sync(deviceA2, [twice])).body.results[0]).toMatchObject({
        status: 'duplicate',
        flags: ['already_checked_in'],
      });
    });

    it('decides a batch in order: a repeated clientId is a duplicate, a guest twice is flagged (reentry refuse), the last place goes to the first', async () => {
      const event = await openEvent(a);
      const tenantId = a.tenant.tenantId;
      const [p1, p2] = [await person(tenantId, 'Ivo'), await person(tenantId, 'Gil')];
      const [g1, g2] = [await guest(a, event.id, 'Ivo', p1), await guest(a, event.id, 'Gil', p2)];
      await t.request('PATCH', `/v1/events/${event.id}/config`, {
        headers: a.headers,
        body: { capacity: 1, reentry: 'refuse' },
      });
      const first = item({ eventId: event.id, guestId: g1.id, personId: p1 });
      const res = await sync(deviceA, [
        first,
        first,
        item({ eventId: event.id, guestId: g1.id, personId: p1 }),
        item({ eventId: event.id, guestId: g2.id, personId: p2 }),
        item({ eventId: event.id, outcome: 'denied', reason: 'not_recognised' }),
      ]);
      expect(res.body.results.map((r: { status: string; flags: string[] }) => [r.status, r.flags])).toEqual([
        ['accepted', []],
        ['duplicate', []],
        ['accepted', ['already_checked_in']],
        ['accepted', ['capacity_reached']],
        ['accepted', []],
      ]);
      expect(await t.deps.db.prisma.checkIn.count({ where: { eventId: event.id } })).toBe(4);
      const guests = await t.deps.db.prisma.guest.findMany({ where: { id: { in: [g1.id, g2.id] } } });
      expect(guests.map((g) => g.status).sort()).toEqual(['checked_in', 'checked_in']);
    });

    it('keeps tenants apart: another tenant’s device cannot replay or reach a check-in id, nor its events', async () => {
      const event = await openEvent(a);
      const mine = item({ eventId: event.id, outcome: 'denied', reason: 'not_recognised' });
      expect((await sync(deviceA, [mine])).body.results[0].status).toBe('accepted');
      const res = await sync(deviceB, [mine]);
      expect(res.body.results[0]).toMatchObject({ status: 'rejected', code: 'not_found', outcome: null });
      const p = await person(a.tenant.tenantId, 'Zé');
      const foreignPerson = await sync(deviceB, [item({ personId: p })]);
      expect(foreignPerson.body.results[0]).toMatchObject({ status: 'rejected', code: 'not_found' });
      expect(
        (await t.request('GET', `/v1/sync/events/${event.publicToken}/replica`, { headers: as(deviceB) }))
          .status,
      ).toBe(404);
    });
    it('refuses a recordedAt older than a device queue keeps items (30 days) or before the event’s window (24 h before it starts), with the reason', async () => {
      const now = t.deps.clock.now().getTime();
      const DAY = 24 * 3_600_000;
      const event = await openEvent(a, { startsAt: new Date(now + 2 * DAY).toISOString() });
      const early = item({ eventId: event.id, recordedAt: new Date(now - 10 * 60_000).toISOString() });
      const ancient = item({ recordedAt: '2019-03-01T10:00:00.000Z' });
      const res = await sync(deviceA, [early, ancient]);
      expect(res.body.results[0]).toMatchObject({ status: 'rejected', code: 'validation_failed' });
      expect(res.body.results[0].detail).toMatch(/before the event’s window/);
      expect(res.body.results[1]).toMatchObject({ status: 'rejected', code: 'validation_failed' });
      expect(res.body.results[1].detail).toMatch(/older than 30 days/);
      const ids = [early.clientId, ancient.clientId];
      expect(await t.deps.db.prisma.checkIn.count({ where: { id: { in: ids } } })).toBe(0);
      // Within the window and the queue's age: recorded.
      const soon = await openEvent(a, { startsAt: new Date(now + 12 * 3_600_000).toISOString() });
      const [inWindow, old] = (
        await sync(deviceA, [
          item({ eventId: soon.id }),
          item({ recordedAt: new Date(now - 29 * DAY).toISOString() }),
        ])
      ).body.results;
      expect([inWindow.status, old.status]).toEqual(['accepted', 'accepted']);
    });

    it('answers a clientId of another tenant as an unknown one (never conflict): its item is judged on its own references', async () => {
      const event = await openEvent(a);
      const mine = item({ eventId: event.id, outcome: 'denied', reason: 'not_recognised' });
      expect((await sync(deviceA, [mine])).body.results[0].status).toBe('accepted');
      const fresh = { ...mine, clientId: newId() };
      const [taken, unknown] = (await sync(deviceB, [mine, fresh])).body.results;
      expect({ ...taken, clientId: null }).toEqual({ ...unknown, clientId: null });
      expect(taken).toMatchObject({ status: 'rejected', code: 'not_found', detail: 'Event not found' });
      // The same item as a replay of the device's own tenant's other door is still a conflict (same tenant).
      expect((await sync(deviceA2, [mine])).body.results[0]).toMatchObject({ code: 'conflict' });
      // Valid for B in every reference: the id still cannot be taken, and B is told to make a new one.
      const own = (await sync(deviceB, [{ ...mine, eventId: (await openEvent(b)).id }])).body.results[0];
      expect(own).toMatchObject({ status: 'rejected', code: 'validation_failed' });
      expect(own.detail).not.toMatch(/another|tenant|device/);
      expect(await t.deps.db.prisma.checkIn.findUnique({ where: { id: mine.clientId } })).toMatchObject({
        tenantId: a.tenant.tenantId,
      });
    });
    it('stores a synced frame encrypted as the check-in image only when the tenant keeps images, and keeps the check-in either way', async () => {
      const event = await openEvent(a);
      const p = await person(a.tenant.tenantId, 'Frame Person');
      const g1 = await guest(a, event.id, 'Frame One', p);
      const g2 = await guest(a, event.id, 'Frame Two');
      const g3 = await guest(a, event.id, 'Frame Three');
      // A JPEG as far as magic bytes go, with a payload that must never be on disk in plain.
      const payload = randomBytes(4096);
      const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), payload, Buffer.from([0xff, 0xd9])]);
      const images = (clientId: string) =>
        t.deps.db.prisma.biometricImage.findMany({ where: { checkInId: clientId } });
      const settings = (syncCheckinImages: boolean) =>
        t.request('PATCH', `/v1/tenants/${a.tenant.tenantId}/settings`, {
          headers: a.headers,
          body: { syncCheckinImages },
        });

      // Off (the default): the check-in is recorded, the frame is not.
      const off = item({ eventId: event.id, guestId: g2.id, frame: jpeg.toString('base64') });
      const refused = await sync(deviceA, [off]);
      expect(refused.body.results[0]).toMatchObject({ status: 'accepted', clientId: off.clientId });
      expect(refused.body.results[0].detail).toMatch(/syncCheckinImages/);
      expect(await t.deps.db.prisma.checkIn.count({ where: { id: off.clientId } })).toBe(1);
      expect(await images(off.clientId)).toEqual([]);

      expect((await settings(true)).status).toBe(200);
      try {
        const replica = await t.request('GET', `/v1/sync/events/${event.publicToken}/replica`, {
          headers: as(deviceA),
        });
        expect(replica.body.policy.syncCheckinImages).toBe(true);
        const on = item({ eventId: event.id, guestId: g1.id, personId: p, frame: jpeg.toString('base64') });
        const notImage = item({
          eventId: event.id,
          guestId: g3.id,
          outcome: 'denied',
          reason: 'not_recognised',
          frame: Buffer.from('GIF89a not a jpeg').toString('base64'),
        });
        const res = await sync(deviceA, [on, notImage]);
        expect(res.body.results.map((r: { status: string }) => r.status)).toEqual(['accepted', 'accepted']);
        expect(res.body.results[0].detail).toBeNull();
        expect(res.body.results[1].detail).toMatch(/not a JPEG or PNG/);
        expect(await images(notImage.clientId)).toEqual([]);
        const [row] = await images(on.clientId);
        expect(row).toMatchObject({
          tenantId: a.tenant.tenantId,
          personId: p,
          kind: 'checkin',
          contentType: 'image/jpeg',
          byteSize: jpeg.length,
          sha256: createHash('sha256').update(jpeg).digest('hex'),
        });
        const onDisk = await readFile(t.deps.images.pathOf(row!.storageKey));
        expect(onDisk.includes(payload.subarray(0, 64))).toBe(false);
        expect(await t.deps.images.read(a.tenant.tenantId, row!.id, row!.storageKey)).toEqual(jpeg);

        // A person at the event without their guest row goes through the one-by-one recording path.
        const walkIn = await person(a.tenant.tenantId, 'Walk In');
        const single = item({ eventId: event.id, personId: walkIn, frame: jpeg.toString('base64') });
        const one = await sync(deviceA, [single]);
        expect(one.body.results[0]).toMatchObject({ status: 'accepted', detail: null });
        expect(await images(single.clientId)).toEqual([
          expect.objectContaining({ kind: 'checkin', personId: walkIn, byteSize: jpeg.length }),
        ]);

        // A replay stores nothing new.
        const again = await sync(deviceA, [on]);
        expect(again.body.results[0].status).toBe('duplicate');
        expect(await images(on.clientId)).toHaveLength(1);
        const files = await readdir(path.dirname(t.deps.images.pathOf(row!.storageKey)));
        expect(files.filter((f) => f.endsWith('.bin'))).toHaveLength(
          await t.deps.db.prisma.biometricImage.count({ where: { tenantId: a.tenant.tenantId } }),
        );
      } finally {
        expect((await settings(false)).status).toBe(200);
      }
    });
  });

  describe('GET /v1/sync/events/{token}/replica', () => {
    it('serves the confirmed guests with templates to the tenant’s device, then only changes by checkpoint, removals included', async () => {
      const event = await openEvent(a);
      const tenantId = a.tenant.tenantId;
      const enrolled = await person(tenantId, 'Lia');
      const vector = new Float32Array(512).map((_, i) => Math.sin(i));
      const modelId =
        (await t.deps.db.prisma.tenant.findUniqueOrThrow({ where: { id: tenantId } })).faceModelId ??
        t.deps.face.modelId;
      await t.deps.db.prisma.faceTemplate.create({
        data: {
          id: newId(),
          tenantId,
          personId: enrolled,
          modelId,
          quality: 0.9,
          embeddingEnc: t.deps.cipher.encrypt(embeddingToBuffer(vector), templateContext(tenantId, enrolled)),
        },
      });
      const lia = await guest(a, event.id, 'Lia', enrolled);
      const bob = await guest(a, event.id, 'Bob');
      const url = `/v1/sync/events/${event.publicToken}/replica`;
      const full = await t.request('GET', `${url}?limit=1`, { headers: as(deviceA) });
      expect(full.status, full.text).toBe(200);
      expect(full.body.items).toHaveLength(1);
      expect(full.body.policy).toMatchObject({
        tenantId,
        modelId,
        matchThreshold: expect.any(Number),
        stepUpThreshold: expect.any(Number),
        probeQualityMin: expect.any(Number),
        stepUpFactors: ['qr', 'staff'],
        // The door asks for the active challenge only when the passive look is unsure (the default).
        livenessChallenge: 'when_uncertain',
      });
      const always = await t.request('PATCH', `/v1/tenants/${tenantId}/settings`, {
        headers: a.headers,
        body: { livenessChallenge: 'always' },
      });
      expect(always.status, always.text).toBe(200);
      const again = await t.request('GET', `${url}?limit=1`, { headers: as(deviceA) });
      expect(again.body.policy.livenessChallenge).toBe('always');
      const rest = await t.request('GET', `${url}?limit=1&cursor=${full.body.nextCursor}`, {
        headers: as(deviceA),
      });
      const items = [...full.body.items, ...rest.body.items];
      expect(items.map((i: { guestId: string }) => i.guestId).sort()).toEqual([lia.id, bob.id].sort());
      const liaItem = items.find((i: { guestId: string }) => i.guestId === lia.id);
      expect(liaItem.template.modelId).toBe(modelId);
      expect(Buffer.from(liaItem.template.embedding, 'base64')).toEqual(embeddingToBuffer(vector));
      const linkToken = (await t.deps.db.prisma.guest.findUniqueOrThrow({ where: { id: lia.id } })).linkToken;
      expect(liaItem.qrHash).toBe(hashToken(linkToken));
      expect(items.find((i: { guestId: string }) => i.guestId === bob.id).template).toBeNull();
      const checkpoint = rest.body.nextCursor === null ? rest.body.checkpoint : undefined;
      expect(checkpoint).toMatch(/^\d+\.\d+$/);

      // The confirmed list takes the device's own credentials (no list token needed) and never carries
      // templates; another tenant's device gets 404.
      const list = `/v1/events/${event.publicToken}/confirmed-list`;
      const pub = await t.request('GET', list, { headers: as(deviceA) });
      expect(pub.status, pub.text).toBe(200);
      expect(pub.body.items.length).toBeGreaterThan(0);
      expect(JSON.stringify(pub.body)).not.toContain('embedding');
      expect((await t.request('GET', list, { headers: as(deviceB) })).status).toBe(404);
      expect((await t.request('GET', list)).status).toBe(401);
      // Bearer credentials do not reach the device form.
      expect((await t.request('GET', url, { headers: bearer(a.token) })).status).toBe(401);

      // Bob removed, Lia's biometrics revoked: both reach the device as changes.
      await t.request('DELETE', `/v1/events/${event.id}/guests/${bob.id}`, { headers: a.headers });
      await t.deps.db.prisma.faceTemplate.deleteMany({ where: { personId: enrolled } });
      await t.deps.db.prisma.person.update({ where: { id: enrolled }, data: { enrolledAt: null } });
      const delta = await t.request('GET', `${url}?since=${checkpoint}`, { headers: as(deviceA) });
      expect(delta.status, delta.text).toBe(200);
      expect(delta.body.removed).toEqual([bob.id]);
      expect(delta.body.items).toEqual([expect.objectContaining({ guestId: lia.id, template: null })]);
      expect(delta.body.revokedPersons).toEqual([]);

      // Lia enrolled again (only a template row is new, her person row unchanged): her guest comes back
      // with the template.
      await t.deps.db.prisma
        .$executeRaw`UPDATE persons SET updated_at = now() - interval '1 hour' WHERE id = ${enrolled}`;
      await t.deps.db.prisma.faceTemplate.create({
        data: {
          id: newId(),
          tenantId,
          personId: enrolled,
          modelId,
          quality: 0.9,
          embeddingEnc: t.deps.cipher.encrypt(embeddingToBuffer(vector), templateContext(tenantId, enrolled)),
        },
      });
      const enrolledAgain = await t.request('GET', `${url}?since=${delta.body.checkpoint}`, {
        headers: as(deviceA),
      });
      expect(enrolledAgain.body.items).toEqual([
        expect.objectContaining({ guestId: lia.id, template: expect.objectContaining({ modelId }) }),
      ]);

      // A person deleted in the cloud: their templates are gone with them, the device is told who.
      const zoe = await person(tenantId, 'Zoe');
      await guest(a, event.id, 'Zoe', zoe);
      const before = await t.request('GET', `${url}?since=${enrolledAgain.body.checkpoint}`, {
        headers: as(deviceA),
      });
      expect((await t.request('DELETE', `/v1/persons/${zoe}`, { headers: a.headers })).status).toBe(204);
      const after = await t.request('GET', `${url}?since=${before.body.checkpoint}`, {
        headers: as(deviceA),
      });
      expect(after.body.revokedPersons).toEqual([zoe]);
    });
  });
});
