// GET /v1/admin/stats/today (a day in a time zone, or a period; devices with their reported queue) and
// GET /v1/admin/audit-log (actors in words, filters, pages, managers only), over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { adminOf, loggedInUser, TestClock } from '../support/identity.js';
import { integratorOf } from '../persons/support.js';
import { INTERNAL_SECRET, manualCheckin, openEvent, person, registerDevice } from './support.js';

describe('admin stats and audit log', () => {
  // 10:00 UTC is 07:00 in São Paulo (UTC-3): both days are 21 November.
  const clock = new TestClock(new Date('2026-11-21T10:00:00.000Z'));
  let t: TestApp;
  let a: Awaited<ReturnType<typeof integratorOf>>;
  let b: Awaited<ReturnType<typeof adminOf>>;
  let gala: string;
  let expo: string;
  let doors: { synced: string; silent: string };
  let ownerId: string;
  let ownerEmail: string;
  let keyPersonId: string;

  const stats = (query = '', headers = a.headers) =>
    t.request('GET', `/v1/admin/stats/today${query}`, { headers });
  const audit = (query = '', headers = a.headers) =>
    t.request('GET', `/v1/admin/audit-log${query}`, { headers });

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { INTERNAL_SECRET } });
    a = await integratorOf(t);
    b = await adminOf(t);
    const owner = await t.deps.db.prisma.user.update({
      where: { email: a.tenant.adminEmail },
      data: { name: 'Olga Owner' },
    });
    ownerId = owner.id;
    ownerEmail = owner.email;
    const created = await t.request('POST', '/v1/persons', {
      headers: a.keyHeaders,
      body: { name: 'Keyed Person', document: `K-${newId().slice(-8)}` },
    });
    expect(created.status, created.text).toBe(201);
    keyPersonId = created.body.id;
    gala = await openEvent(t, a.tenantId, 'Gala');
    expo = await openEvent(t, a.tenantId, 'Expo', 'closed');
    const ana = await person(t, a.tenantId, 'Ana');
    await manualCheckin(t, a.headers, ana, gala);
    await manualCheckin(t, a.headers, ana, gala);
    await manualCheckin(t, a.headers, ana, expo);
    const synced = await registerDevice(t, a.headers, 'Door 1');
    const silent = await registerDevice(t, a.headers, 'Door 2');
    doors = { synced: synced.id, silent: silent.id };
    // Decided at 02:30 UTC: 21 November in UTC, still 20 November (23:30) in São Paulo.
    const res = await t.request('POST', '/v1/sync/batch', {
      headers: synced.headers,
      body: {
        queueLength: 7,
        items: [
          {
            clientId: newId(),
            method: 'qr',
            outcome: 'success',
            personId: ana,
            recordedAt: '2026-11-21T02:30:00.000Z',
          },
        ],
      },
    });
    expect(res.body.results[0].status, res.text).toBe('accepted');
    await manualCheckin(t, b.headers, await person(t, b.tenant.tenantId, 'Bea'));
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('stats', () => {
    it('counts today’s check-ins in UTC per event, method and outcome', async () => {
      const res = await stats();
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({
        from: '2026-11-21T00:00:00.000Z',
        to: '2026-11-22T00:00:00.000Z',
        timeZone: 'UTC',
        total: 4,
        byMethod: { facial: 0, qr: 1, link: 0, manual: 3 },
        byOutcome: { success: 3, denied: 1, liveness_failed: 0, geofence_alert: 0 },
      });
      expect(res.body.byEvent).toEqual([
        { event: { id: gala, name: 'Gala' }, total: 2, admitted: 2 },
        { event: { id: expo, name: 'Expo' }, total: 1, admitted: 0 },
        { event: null, total: 1, admitted: 1 },
      ]);
    });

    it('counts the day of the given time zone', async () => {
      const res = await stats('?tz=America/Sao_Paulo');
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({
        from: '2026-11-21T03:00:00.000Z',
        to: '2026-11-22T03:00:00.000Z',
        timeZone: 'America/Sao_Paulo',
        total: 3,
        byMethod: { qr: 0, manual: 3 },
      });
    });

    it('counts a given period', async () => {
      const res = await stats('?from=2026-11-21T02:00:00.000Z&to=2026-11-21T03:00:00.000Z');
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ timeZone: null, total: 1, byMethod: { qr: 1 } });
    });

    it('lists every device with its last call, last sync and the queue length it reported', async () => {
      const { devices } = (await stats()).body;
      expect(devices).toEqual([
        {
          id: doors.synced,
          name: 'Door 1',
          lastSeenAt: '2026-11-21T10:00:00.000Z',
          lastSyncAt: '2026-11-21T10:00:00.000Z',
          queueLength: 7,
          revokedAt: null,
        },
        {
          id: doors.silent,
          name: 'Door 2',
          lastSeenAt: null,
          lastSyncAt: null,
          queueLength: null,
          revokedAt: null,
        },
      ]);
      expect((await stats('', b.headers)).body.devices).toEqual([]);
    });

    it('counts only the caller’s tenant', async () => {
      expect((await stats('', b.headers)).body.total).toBe(1);
    });

    it('refuses an unknown time zone, a half period and a zone with a period with 400 validation_failed', async () => {
      for (const query of [
        '?tz=Mars/Olympus',
        '?from=2026-11-21T00:00:00.000Z',
        '?tz=UTC&from=2026-11-21T00:00:00.000Z&to=2026-11-22T00:00:00.000Z',
        '?from=2026-11-22T00:00:00.000Z&to=2026-11-21T00:00:00.000Z',
      ]) {
        const res = await stats(query);
        expect(res.status, query).toBe(400);
        expect(res.body.code).toBe('validation_failed');
      }
    });

    it('lets an operator read them and refuses an API key with 403', async () => {
      const operator = await loggedInUser(t, a.tenantId, 'operator', `op-${newId()}@example.com`);
      expect((await stats('', operator)).status).toBe(200);
      expect((await stats('', a.keyHeaders)).status).toBe(403);
    });
  });

  describe('audit log', () => {
    it('lists the tenant’s audit entries newest first', async () => {
      const res = await audit('?limit=200');
      expect(res.status, res.text).toBe(200);
      const times = res.body.items.map((e: { at: string }) => e.at);
      expect([...times].sort().reverse()).toEqual(times);
      expect(res.body.items.map((e: { action: string }) => e.action)).toEqual(
        expect.arrayContaining(['device.registered', 'checkin.manual', 'checkin.qr']),
      );
      const registered = res.body.items.find((e: { targetId: string }) => e.targetId === doors.silent);
      expect(registered).toMatchObject({
        action: 'device.registered',
        actorType: 'adminSession',
        actorId: ownerId,
        targetType: 'device',
        metadata: { name: 'Door 2' },
      });
    });

    it('filters by exact action, action prefix, actor and time', async () => {
      const actions = async (query: string) =>
        (await audit(query)).body.items.map((e: { action: string }) => e.action) as string[];
      expect(await actions('?action=device.registered')).toEqual(['device.registered', 'device.registered']);
      expect((await actions('?action=checkin.')).sort()).toEqual([
        'checkin.manual',
        'checkin.manual',
        'checkin.manual',
        'checkin.qr',
      ]);
      expect(await actions('?action=checkin')).toEqual([]);
      expect(await actions('?action=%25')).toEqual([]);
      const byOwner = (await audit(`?actorId=${ownerId}&limit=200`)).body.items;
      expect(byOwner.length).toBeGreaterThan(0);
      expect(byOwner.every((e: { actorId: string }) => e.actorId === ownerId)).toBe(true);
      expect(await actions('?to=2000-01-01T00:00:00.000Z')).toEqual([]);
      expect(await actions('?from=2999-01-01T00:00:00.000Z')).toEqual([]);
      expect((await actions('?from=2000-01-01T00:00:00.000Z&action=device.registered')).length).toBe(2);
    });

    it('names each actor in words: the user’s name and e-mail, the key’s application, the device’s name', async () => {
      const items = (await audit('?limit=200')).body.items as {
        action: string;
        targetId: string;
        actor: Record<string, unknown>;
      }[];
      expect(items.find((e) => e.targetId === doors.silent)?.actor).toEqual({
        type: 'adminSession',
        id: ownerId,
        name: 'Olga Owner',
        email: ownerEmail,
        key: null,
        removed: false,
      });
      const key = await t.deps.db.prisma.apiKey.findFirstOrThrow({ where: { tenantId: a.tenantId } });
      expect(items.find((e) => e.action === 'person.created' && e.targetId === keyPersonId)?.actor).toEqual({
        type: 'apiKey',
        id: key.id,
        name: 'HR sync',
        email: null,
        key: `${key.prefix}…${key.lastFour}`,
        removed: false,
      });
      expect(items.find((e) => e.action === 'checkin.qr')?.actor).toMatchObject({
        type: 'device',
        id: doors.synced,
        name: 'Door 1',
      });
    });

    it('filters by actor text, actor type, target type and target id', async () => {
      const entries = async (query: string) =>
        (await audit(`${query}&limit=200`)).body.items as {
          action: string;
          actorId: string;
          targetType: string;
          targetId: string;
        }[];
      const byText = await entries('?actor=OLGA');
      expect(byText.length).toBeGreaterThan(0);
      expect(byText.every((e) => e.actorId === ownerId)).toBe(true);
      expect((await entries(`?actor=${ownerEmail.split('@')[0]}`)).length).toBe(byText.length);
      expect((await entries('?actor=Door%201')).map((e) => e.action)).toEqual(['checkin.qr']);
      expect((await entries('?actor=hr%20sync')).map((e) => e.targetId)).toContain(keyPersonId);
      expect(await entries('?actor=%25')).toEqual([]);
      expect(await entries('?actor=nobody-at-all')).toEqual([]);
      const byKeys = await entries('?actorType=apiKey');
      expect(byKeys.map((e) => e.action)).toEqual(['person.created']);
      const devices = await entries('?targetType=device');
      expect(devices.map((e) => e.targetId).sort()).toEqual([doors.synced, doors.silent].sort());
      expect((await entries(`?targetId=${doors.silent}`)).map((e) => e.action)).toEqual([
        'device.registered',
      ]);
      expect((await audit('?actorType=robot')).status).toBe(400);
    });

    it('pages with nextCursor without repeating an entry', async () => {
      const all = (await audit('?limit=200')).body.items.map((e: { id: string }) => e.id);
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await audit(`?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        paged.push(...res.body.items.map((e: { id: string }) => e.id));
        cursor = res.body.nextCursor;
      } while (cursor);
      expect(paged).toEqual(all);
    });

    it('shows another tenant nothing of this one', async () => {
      const theirs = (await audit('?limit=200', b.headers)).body.items;
      expect(theirs.length).toBeGreaterThan(0);
      expect(theirs.some((e: { targetId: string }) => e.targetId === doors.synced)).toBe(false);
      expect((await audit(`?actorId=${ownerId}`, b.headers)).body.items).toEqual([]);
      expect((await audit('?actor=Olga', b.headers)).body.items).toEqual([]);
      expect((await audit(`?targetId=${doors.silent}`, b.headers)).body.items).toEqual([]);
      // Their own entries name their own admin, never this tenant's.
      expect(JSON.stringify(theirs)).not.toContain('Olga Owner');
    });

    it('refuses an operator and an API key with 403', async () => {
      const operator = await loggedInUser(t, a.tenantId, 'operator', `op2-${newId()}@example.com`);
      expect((await audit('', operator)).status).toBe(403);
      expect((await audit('', a.keyHeaders)).status).toBe(403);
    });
  });
});
