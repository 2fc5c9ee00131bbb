// The door's routes: a guest checked in by hand, a check-in undone (void) with what that frees, the
// guest search as you type and the counters of who arrived.
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import { serviceLogin } from '../support/bus.js';
import { adminOf } from '../support/identity.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

type Admin = Awaited<ReturnType<typeof adminOf>>;

async function event(t: TestApp, tenantId: string, fields: Record<string, unknown> = {}) {
  const id = newId();
  await t.deps.db.prisma.event.create({
    data: { id, tenantId, name: 'Gala', status: 'open', publicToken: `ev_${id}`, ...fields },
  });
  return id;
}

describe('the door: manual guest check-in, void, guest search, attendance', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let admin: Admin;
  let other: Admin;
  beforeAll(async () => {
    t = await createTestApp();
    receiver = await startWebhookReceiver();
    admin = await adminOf(t);
    other = await adminOf(t);
    await t.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, {
      body: { webhookUrl: receiver.url },
      headers: admin.headers,
    });
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const guest = async (eventId: string, body: Record<string, unknown>, who: Admin = admin) => {
    const res = await t.request('POST', `/v1/events/${eventId}/guests`, { body, headers: who.headers });
    expect(res.status).toBe(201);
    const created = res.body as { id: string; checkinUrl: string };
    return { ...created, linkToken: created.checkinUrl.split('/').pop()! };
  };
  const checkIn = (eventId: string, guestId: string, who: Admin = admin) =>
    t.request('POST', '/v1/checkin/manual', { body: { eventId, guestId }, headers: who.headers });
  const voidIt = (checkInId: string, reason: unknown = 'Wrong guest ticked', who: Admin = admin) =>
    t.request('POST', `/v1/checkin/${checkInId}/void`, { body: { reason }, headers: who.headers });
  const guestRow = (id: string) => t.deps.db.prisma.guest.findUniqueOrThrow({ where: { id } });

  it('checks in a guest without a person by hand, and marks the guest checked in', async () => {
    const eventId = await event(t, admin.tenant.tenantId);
    const g = await guest(eventId, { name: 'Walk-in Wanda', status: 'confirmed' });
    const res = await checkIn(eventId, g.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: 'success', method: 'manual', eventId, person: null });
    expect(await guestRow(g.id)).toMatchObject({ status: 'checked_in' });
    const row = await t.deps.db.prisma.checkIn.findUniqueOrThrow({ where: { id: res.body.checkInId } });
    expect(row).toMatchObject({ guestId: g.id, method: 'manual', outcome: 'success' });
  });

  it('refuses a manual check-in with neither or both of personId and guestId, or a guest without its event, with 400', async () => {
    const eventId = await event(t, admin.tenant.tenantId);
    const g = await guest(eventId, { name: 'Ana' });
    for (const body of [{ eventId }, { eventId, guestId: g.id, personId: newId() }, { guestId: g.id }]) {
      const res = await t.request('POST', '/v1/checkin/manual', { body, headers: admin.headers });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });

  it('answers 404 for another tenant’s guest or event at the manual check-in', async () => {
    const mine = await event(t, admin.tenant.tenantId);
    const g = await guest(mine, { name: 'Bia' });
    const theirs = await event(t, other.tenant.tenantId);
    expect((await checkIn(mine, g.id, other)).body.code).toBe('not_found');
    expect((await checkIn(mine, g.id, other)).status).toBe(404);
    // Their event, my guest: not a guest of that event.
    const cross = await checkIn(theirs, g.id, other);
    expect(cross.status).toBe(404);
    expect(cross.body.code).toBe('not_found');
    expect(await t.deps.db.prisma.checkIn.count({ where: { guestId: g.id } })).toBe(0);
  });

  it('voids a check-in: audited, the guest back to confirmed, and the webhook and the bus say checkin.voided', async () => {
    const eventId = await event(t, admin.tenant.tenantId);
    const g = await guest(eventId, { name: 'Carlos Döring', status: 'confirmed' });
    const client = await mqtt.connectAsync(t.deps.bus.url, serviceLogin(t));
    try {
      await client.subscribeAsync(`portico/v1/tenants/${admin.tenant.tenantId}/checkin.voided`, { qos: 1 });
      const onBus = new Promise<{ topic: string; body: Record<string, unknown> }>((resolve) =>
        client.once('message', (topic, payload) => resolve({ topic, body: JSON.parse(payload.toString()) })),
      );
      const checkin = (await checkIn(eventId, g.id)).body;
      const res = await voidIt(checkin.checkInId, '  Wrong guest ticked  ');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        checkInId: checkin.checkInId,
        eventId,
        reason: 'Wrong guest ticked',
        guest: { id: g.id, status: 'confirmed', checkedInAt: null },
      });
      expect(await guestRow(g.id)).toMatchObject({ status: 'confirmed', checkedInAt: null });
      const row = await t.deps.db.prisma.checkIn.findUniqueOrThrow({ where: { id: checkin.checkInId } });
      expect(row.voidedAt).not.toBeNull();
      expect(row).toMatchObject({ outcome: 'success', voidReason: 'Wrong guest ticked' });
      const audit = await t.deps.db.prisma.auditLog.findFirst({
        where: { targetId: checkin.checkInId, action: 'checkin.voided' },
      });
      expect(audit).toMatchObject({ actorType: 'adminSession', tenantId: admin.tenant.tenantId });
      expect(audit?.metadata).toMatchObject({ reason: 'Wrong guest ticked', guestId: g.id, eventId });

      const expected = {
        event: 'checkin.voided',
        tenantId: admin.tenant.tenantId,
        data: {
          checkInId: checkin.checkInId,
          eventId,
          guestId: g.id,
          personId: null,
          method: 'manual',
          reason: 'Wrong guest ticked',
          voidedBy: { type: 'adminSession' },
        },
      };
      expect(
        await receiver.waitForBody(
          (b) => b.event === 'checkin.voided' && b.data.checkInId === checkin.checkInId,
        ),
      ).toMatchObject(expected);
      const msg = await onBus;
      expect(msg.topic).toBe(`portico/v1/tenants/${admin.tenant.tenantId}/checkin.voided`);
      expect(msg.body).toMatchObject(expected);

      // The admin list and the export show it voided, with who and why.
      const listed = await t.request('GET', `/v1/admin/checkins?guestId=${g.id}`, { headers: admin.headers });
      expect(listed.body.items).toHaveLength(1);
      expect(listed.body.items[0]).toMatchObject({
        guest: { id: g.id, name: 'Carlos Döring' },
        voided: { reason: 'Wrong guest ticked', by: expect.any(String) },
      });
    } finally {
      await client.endAsync();
    }
  });

  it('frees the place: at a full event the next guest gets in once a check-in is voided', async () => {
    const eventId = await event(t, admin.tenant.tenantId, { capacity: 1 });
    const first = await guest(eventId, { name: 'First' });
    const second = await guest(eventId, { name: 'Second' });
    const admitted = (await checkIn(eventId, first.id)).body;
    expect(admitted.outcome).toBe('success');
    expect((await checkIn(eventId, second.id)).body).toMatchObject({
      outcome: 'denied',
      reason: 'capacity_reached',
    });
    const before = await t.request('GET', `/v1/events/${eventId}/attendance`, { headers: admin.headers });
    expect(before.body).toMatchObject({ arrived: 1, capacity: 1 });

    expect((await voidIt(admitted.checkInId)).status).toBe(200);
    const after = await t.request('GET', `/v1/events/${eventId}/attendance`, { headers: admin.headers });
    expect(after.body).toMatchObject({ arrived: 0, capacity: 1 });
    expect((await checkIn(eventId, second.id)).body).toMatchObject({ outcome: 'success', reason: null });
  });

  it('gives the last places to exactly as many of a burst of concurrent guests, whichever database', async () => {
    // Eight guests at once for three places: each decision reads the admissions under the event's lock
    // after the previous holder committed, so no two take the same place.
    const eventId = await event(t, admin.tenant.tenantId, { capacity: 3 });
    const guests = await Promise.all(
      Array.from({ length: 8 }, (_, i) => guest(eventId, { name: `Rush ${i}` })),
    );
    const answers = await Promise.all(guests.map((g) => checkIn(eventId, g.id)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    const outcomes = answers.map((a) => a.body.reason ?? a.body.outcome).sort();
    expect(outcomes).toEqual([...Array(5).fill('capacity_reached'), ...Array(3).fill('success')]);
    const arrived = await t.deps.db.prisma.guest.count({ where: { eventId, status: 'checked_in' } });
    expect(arrived).toBe(3);
  });

  it('lets the guest in again under reentry refuse once the admission is voided, and the invitation link works again', async () => {
    const eventId = await event(t, admin.tenant.tenantId, { reentry: 'refuse' });
    const g = await guest(eventId, { name: 'Dora', status: 'confirmed' });
    const link = await t.request('GET', `/v1/public/checkin/link/${g.linkToken}`);
    expect(link.body).toMatchObject({ result: 'checked_in' });
    expect((await checkIn(eventId, g.id)).body).toMatchObject({
      outcome: 'denied',
      reason: 'already_checked_in',
    });
    expect((await voidIt(link.body.checkInId)).status).toBe(200);
    const again = await t.request('GET', `/v1/public/checkin/link/${g.linkToken}`);
    expect(again.body).toMatchObject({ result: 'checked_in' });
    expect(again.body.checkInId).not.toBe(link.body.checkInId);
    expect(await guestRow(g.id)).toMatchObject({ status: 'checked_in' });
  });

  it('keeps a guest in while another admission still counts', async () => {
    const eventId = await event(t, admin.tenant.tenantId, { reentry: 'allow' });
    const g = await guest(eventId, { name: 'Eva', status: 'confirmed' });
    const one = (await checkIn(eventId, g.id)).body;
    const two = (await checkIn(eventId, g.id)).body;
    expect(two.outcome).toBe('success');
    const res = await voidIt(two.checkInId);
    expect(res.body.guest).toMatchObject({ status: 'checked_in', checkedInAt: one.occurredAt });
    expect((await voidIt(one.checkInId)).body.guest).toMatchObject({
      status: 'confirmed',
      checkedInAt: null,
    });
  });

  it('refuses to void twice (409 already_voided), a denial (409 checkin_not_admitted), without a reason (400), and another tenant’s check-in (404)', async () => {
    const eventId = await event(t, admin.tenant.tenantId, { capacity: 1 });
    const a = await guest(eventId, { name: 'Fábio' });
    const b = await guest(eventId, { name: 'Gil' });
    const admitted = (await checkIn(eventId, a.id)).body;
    const denied = (await checkIn(eventId, b.id)).body;
    expect(denied.outcome).toBe('denied');

    for (const reason of ['', ' x ', 'y'.repeat(501), 42]) {
      const bad = await voidIt(admitted.checkInId, reason);
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('validation_failed');
    }
    const theirs = await voidIt(admitted.checkInId, 'Not mine', other);
    expect(theirs.status).toBe(404);
    expect(theirs.body.code).toBe('not_found');
    expect((await voidIt(newId())).status).toBe(404);

    const notAdmitted = await voidIt(denied.checkInId);
    expect(notAdmitted.status).toBe(409);
    expect(notAdmitted.body.code).toBe('checkin_not_admitted');
    expect((await voidIt(admitted.checkInId)).status).toBe(200);
    const twice = await voidIt(admitted.checkInId);
    expect(twice.status).toBe(409);
    expect(twice.body.code).toBe('already_voided');
    expect(
      await t.deps.db.prisma.auditLog.count({
        where: { action: 'checkin.voided', targetId: admitted.checkInId },
      }),
    ).toBe(1);
  });

  it('names the guest of a link check-in in the admin list and the CSV export', async () => {
    const eventId = await event(t, admin.tenant.tenantId);
    const g = await guest(eventId, { name: 'Helena Löw', status: 'confirmed' });
    const link = await t.request('GET', `/v1/public/checkin/link/${g.linkToken}`);
    const listed = await t.request('GET', `/v1/admin/checkins?eventId=${eventId}`, {
      headers: admin.headers,
    });
    expect(listed.body.items[0]).toMatchObject({
      id: link.body.checkInId,
      person: null,
      guestId: g.id,
      guest: { id: g.id, name: 'Helena Löw' },
      voided: null,
    });
    const csv = await t.request('GET', `/v1/admin/checkins/export.csv?eventId=${eventId}`, {
      headers: admin.headers,
    });
    const [header, line] = csv.text.split('\r\n');
    const cells = header!.split(',');
    expect(line!.split(',')[cells.indexOf('guestName')]).toBe('Helena Löw');
  });

  it('finds guests as you type: case and accents ignored in name, e-mail and document, with a total and pages', async () => {
    const eventId = await event(t, admin.tenant.tenantId);
    await guest(eventId, { name: 'João Conceição', email: 'JOAO@example.com', document: '123.456.789-00' });
    await guest(eventId, { name: 'Joana Dark', email: 'joana@example.com' });
    await guest(eventId, { name: 'Zé Ninguém', email: 'ze@exemplo.com.br', document: 'AB-991' });
    const search = async (q: string, extra = '') =>
      (
        await t.request('GET', `/v1/events/${eventId}/guests?q=${encodeURIComponent(q)}${extra}`, {
          headers: admin.headers,
        })
      ).body as { items: { name: string }[]; total: number; nextCursor: string | null };
    const names = async (q: string) => (await search(q)).items.map((g) => g.name);
    expect(await names('joao')).toEqual(['João Conceição']);
    expect(await names('JOÃO')).toEqual(['João Conceição']);
    expect(await names('conceicao')).toEqual(['João Conceição']);
    expect(await names('jo')).toEqual(['Joana Dark', 'João Conceição']);
    expect(await names('ninguem')).toEqual(['Zé Ninguém']);
    expect(await names('EXEMPLO.COM')).toEqual(['Zé Ninguém']);
    expect(await names('12345678900')).toEqual(['João Conceição']);
    expect(await names('456.789')).toEqual(['João Conceição']);
    expect(await names('ab991')).toEqual(['Zé Ninguém']);
    expect(await names('%')).toEqual([]);

    const first = await search('o', '&limit=2');
    expect(first.total).toBe(3);
    expect(first.items).toHaveLength(2);
    const rest = await search('o', `&limit=2&cursor=${encodeURIComponent(first.nextCursor!)}`);
    expect(rest.total).toBe(3);
    expect([...first.items, ...rest.items].map((g) => g.name)).toEqual([
      'Joana Dark',
      'João Conceição',
      'Zé Ninguém',
    ]);
    expect(rest.nextCursor).toBeNull();
  });

  it('counts who arrived per event (arrived, confirmed, capacity), on Today too, and answers 404 for another tenant’s event', async () => {
    const eventId = await event(t, admin.tenant.tenantId, { capacity: 10, name: 'Counted' });
    const a = await guest(eventId, { name: 'A', status: 'confirmed' });
    await guest(eventId, { name: 'B', status: 'confirmed' });
    await guest(eventId, { name: 'C' });
    await checkIn(eventId, a.id);
    const res = await t.request('GET', `/v1/events/${eventId}/attendance`, { headers: admin.headers });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      event: { id: eventId, name: 'Counted', status: 'open' },
      arrived: 1,
      confirmed: 2,
      guests: 3,
      capacity: 10,
    });
    const today = await t.request('GET', '/v1/admin/stats/today', { headers: admin.headers });
    expect(today.body.attendance).toContainEqual(res.body);
    // A voided admission stays in the day's total but admitted nobody.
    const b = await guest(eventId, { name: 'D', status: 'confirmed' });
    await voidIt((await checkIn(eventId, b.id)).body.checkInId);
    const after = await t.request('GET', '/v1/admin/stats/today', { headers: admin.headers });
    expect(after.body.byEvent.find((e: { event: { id: string } }) => e.event?.id === eventId)).toMatchObject({
      total: 2,
      admitted: 1,
    });
    const theirs = await t.request('GET', `/v1/events/${eventId}/attendance`, { headers: other.headers });
    expect(theirs.status).toBe(404);
    expect(theirs.body.code).toBe('not_found');
    const list = await t.request('GET', `/v1/events/${eventId}/guests?q=a`, { headers: other.headers });
    expect(list.status).toBe(404);
  });

  it('counts arrivals over time: each guest once at their first admission that counts, empty buckets too', async () => {
    const eventId = await event(t, admin.tenant.tenantId, { reentry: 'allow' });
    const [a, b, c] = [
      await guest(eventId, { name: 'A' }),
      await guest(eventId, { name: 'B' }),
      await guest(eventId, { name: 'C' }),
    ];
    const at = (iso: string) => new Date(iso);
    const insert = (id: string, guestId: string, occurredAt: string, outcome = 'success') =>
      t.deps.db.prisma.checkIn.create({
        data: {
          id,
          tenantId: admin.tenant.tenantId,
          eventId,
          guestId,
          method: 'manual',
          outcome,
          occurredAt: at(occurredAt),
        },
      });
    await insert(newId(), a.id, '2026-12-03T19:01:00.000Z');
    await insert(newId(), a.id, '2026-12-03T19:50:00.000Z'); // A again: not a second arrival
    await insert(newId(), b.id, '2026-12-03T19:14:00.000Z', 'denied');
    await insert(newId(), b.id, '2026-12-03T19:46:00.000Z');
    const voided = newId();
    await insert(voided, c.id, '2026-12-03T19:20:00.000Z');
    await t.deps.db.prisma.checkIn.update({
      where: { id: voided },
      data: { voidedAt: new Date(), voidReason: 'test' },
    });

    const res = await t.request('GET', `/v1/events/${eventId}/arrivals?minutes=15`, {
      headers: admin.headers,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      minutes: 15,
      buckets: [
        { at: '2026-12-03T19:00:00.000Z', arrived: 1, total: 1 },
        { at: '2026-12-03T19:15:00.000Z', arrived: 0, total: 1 },
        { at: '2026-12-03T19:30:00.000Z', arrived: 0, total: 1 },
        { at: '2026-12-03T19:45:00.000Z', arrived: 1, total: 2 },
      ],
    });
    const bad = await t.request('GET', `/v1/events/${eventId}/arrivals?minutes=0`, {
      headers: admin.headers,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
    const theirs = await t.request('GET', `/v1/events/${eventId}/arrivals`, { headers: other.headers });
    expect(theirs.status).toBe(404);
    expect(theirs.body.code).toBe('not_found');
  });

  it('documents the void, the attendance and the guest check-in in the OpenAPI doc', async () => {
    const doc = (await t.request('GET', '/docs-json')).body;
    const voidOp = doc.paths['/v1/checkin/{checkInId}/void'].post;
    expect(voidOp.description).toMatch(/counts for nothing/);
    expect(Object.keys(voidOp.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '409']));
    expect(doc.paths['/v1/events/{id}/attendance'].get.responses['200']).toBeDefined();
    expect(doc.components.schemas.ManualCheckinRequest.properties.guestId).toBeDefined();
  });
});
