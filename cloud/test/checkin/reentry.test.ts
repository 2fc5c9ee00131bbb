// The event's re-entry rule (`reentry`: refuse | allow | flag, decided by @portico/checkin-policy) seen
// from outside: the event API and the device replica carry it; QR, manual and link check-ins follow it;
// a synced upload is flagged `already_checked_in` only where that is a real disagreement; and a synced
// check-in's webhook says where it came from (`source`, `offline`, `late_upload`, `recordedAt`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { adminOf } from '../support/identity.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const SECRET = 'reentry-internal-secret-0123456789';
type Reentry = 'refuse' | 'allow' | 'flag';

describe('re-entry', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let admin: Awaited<ReturnType<typeof adminOf>>;
  let device: Record<string, string>;

  beforeAll(async () => {
    t = await createTestApp({ env: { INTERNAL_SECRET: SECRET } });
    receiver = await startWebhookReceiver();
    admin = await adminOf(t);
    // Every scan records (no repeat window): a second scan here is someone coming back in.
    const settings = await t.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, {
      headers: admin.headers,
      body: { webhookUrl: receiver.url, qrRepeatWindowMinutes: 0 },
    });
    expect(settings.status, settings.text).toBe(200);
    const registered = await t.request('POST', '/v1/devices', {
      headers: admin.headers,
      body: { name: 'Door 1' },
    });
    expect(registered.status, registered.text).toBe(201);
    device = { 'x-internal-secret': SECRET, 'x-device-token': registered.body.token };
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  async function openEvent(body: Record<string, unknown> = {}) {
    const created = await t.request('POST', '/v1/events', {
      headers: admin.headers,
      body: { name: 'Festival', ...body },
    });
    expect(created.status, created.text).toBe(201);
    const opened = await t.request('PATCH', `/v1/events/${created.body.id}/status`, {
      headers: admin.headers,
      body: { status: 'open' },
    });
    expect(opened.status, opened.text).toBe(200);
    return created.body as { id: string; publicToken: string; reentry: Reentry };
  }

  /** A person with an identity (its QR code) and their confirmed guest row at `eventId` (unless `onList` is false). */
  async function guestOf(eventId: string, name: string, onList = true) {
    const personId = newId();
    const identityId = newId();
    const tenantId = admin.tenant.tenantId;
    await t.deps.db.prisma.person.create({
      data: { id: personId, tenantId, name, document: `D-${personId}` },
    });
    await t.deps.db.prisma.identity.create({ data: { id: identityId, tenantId, personId } });
    const guest = onList
      ? await t.request('POST', `/v1/events/${eventId}/guests`, {
          headers: admin.headers,
          body: { name, status: 'confirmed', personId },
        })
      : null;
    if (guest) expect(guest.status, guest.text).toBe(201);
    const qr = await t.request('GET', `/v1/checkin/identities/${identityId}/qr-token`, {
      headers: admin.headers,
    });
    expect(qr.status, qr.text).toBe(201);
    return {
      personId,
      guestId: guest?.body.id as string,
      checkinUrl: guest?.body.checkinUrl as string,
      qrToken: qr.body.token as string,
    };
  }

  const manual = (personId: string, eventId: string) =>
    t.request('POST', '/v1/checkin/manual', { headers: admin.headers, body: { personId, eventId } });
  const scan = (qrToken: string, eventId: string) =>
    t.request('GET', `/v1/public/checkin/qr/${qrToken}?eventId=${eventId}`);
  const sync = (items: unknown[]) =>
    t.request('POST', '/v1/sync/batch', { headers: device, body: { items } });
  const hookOf = (checkInId: string) => receiver.waitForBody((b) => b.data?.checkInId === checkInId);
  const admission = (eventId: string, guest: { guestId: string; personId: string }, extra = {}) => ({
    clientId: newId(),
    eventId,
    guestId: guest.guestId,
    personId: guest.personId,
    method: 'qr',
    outcome: 'success',
    recordedAt: new Date(t.deps.clock.now().getTime() - 5_000).toISOString(),
    ...extra,
  });

  describe('the event API', () => {
    it('creates an event with reentry allow by default, takes refuse or flag at creation and through /config, and refuses anything else with 400', async () => {
      const plain = await openEvent();
      expect(plain.reentry).toBe('allow');
      expect(
        (await t.request('GET', `/v1/events/${plain.id}`, { headers: admin.headers })).body.reentry,
      ).toBe('allow');
      expect((await openEvent({ reentry: 'flag' })).reentry).toBe('flag');
      const configured = await t.request('PATCH', `/v1/events/${plain.id}/config`, {
        headers: admin.headers,
        body: { reentry: 'refuse' },
      });
      expect(configured.status, configured.text).toBe(200);
      expect(configured.body.reentry).toBe('refuse');
      expect(
        (await t.request('GET', `/v1/events/${plain.id}`, { headers: admin.headers })).body.reentry,
      ).toBe('refuse');
      const wrong = await t.request('PATCH', `/v1/events/${plain.id}/config`, {
        headers: admin.headers,
        body: { reentry: 'sometimes' },
      });
      expect(wrong.status).toBe(400);
      expect(wrong.body.code).toBe('validation_failed');
    });

    it('sends the event’s rule to devices in the replica', async () => {
      const event = await openEvent({ reentry: 'refuse' });
      const replica = await t.request('GET', `/v1/sync/events/${event.publicToken}/replica`, {
        headers: device,
      });
      expect(replica.status, replica.text).toBe(200);
      expect(replica.body.event).toMatchObject({ id: event.id, reentry: 'refuse' });
    });
  });

  describe('at the door', () => {
    it('allow (default): admits a returning guest again by QR and by hand, without a flag, in one place of the capacity', async () => {
      const event = await openEvent({ capacity: 1 });
      // The one place goes to Ana's guest row; Bia walks up without one.
      const [ana, bia] = [await guestOf(event.id, 'Ana'), await guestOf(event.id, 'Bia', false)];
      const first = await scan(ana.qrToken, event.id);
      const again = await scan(ana.qrToken, event.id);
      const byHand = await manual(ana.personId, event.id);
      for (const res of [first, again, byHand]) {
        expect(res.body, res.text).toMatchObject({ outcome: 'success', reason: null });
      }
      expect((await manual(bia.personId, event.id)).body).toMatchObject({
        outcome: 'denied',
        reason: 'capacity_reached',
      });
      const hook = await hookOf(again.body.checkInId);
      expect(hook.event).toBe('checkin.success');
      expect(hook.data.flags).toBeUndefined();
      expect(hook.data.source).toBeUndefined();
      expect(hook.data.offline).toBeUndefined();
    });

    it('refuse: denies a returning guest with already_checked_in, by QR and by hand, and records the denial', async () => {
      const event = await openEvent({ reentry: 'refuse' });
      const ana = await guestOf(event.id, 'Ana');
      expect((await scan(ana.qrToken, event.id)).body).toMatchObject({ outcome: 'success' });
      const byQr = await scan(ana.qrToken, event.id);
      expect(byQr.body).toMatchObject({
        outcome: 'denied',
        reason: 'already_checked_in',
        alreadyCheckedIn: false,
      });
      const byHand = await manual(ana.personId, event.id);
      expect(byHand.body).toMatchObject({ outcome: 'denied', reason: 'already_checked_in' });
      expect((await hookOf(byHand.body.checkInId)).event).toBe('checkin.denied');
      const denied = await t.request('GET', `/v1/admin/checkins?eventId=${event.id}&outcome=denied`, {
        headers: admin.headers,
      });
      expect(denied.body.items.map((c: { id: string }) => c.id).sort()).toEqual(
        [byQr.body.checkInId, byHand.body.checkInId].sort(),
      );
    });

    it('flag: admits a returning guest and flags the admission already_checked_in (webhook, check-in list)', async () => {
      const event = await openEvent({ reentry: 'flag', capacity: 1 });
      const ana = await guestOf(event.id, 'Ana');
      const first = await scan(ana.qrToken, event.id);
      const again = await manual(ana.personId, event.id);
      expect(first.body).toMatchObject({ outcome: 'success' });
      expect(again.body).toMatchObject({ outcome: 'success', reason: null });
      expect((await hookOf(first.body.checkInId)).data.flags).toBeUndefined();
      expect((await hookOf(again.body.checkInId)).data.flags).toEqual(['already_checked_in']);
      const flagged = await t.request(
        'GET',
        `/v1/admin/checkins?eventId=${event.id}&flag=already_checked_in`,
        {
          headers: admin.headers,
        },
      );
      expect(flagged.body.items.map((c: { id: string }) => c.id)).toEqual([again.body.checkInId]);
    });

    it('checks a guest in by invitation link once whatever the rule: after the door admitted them, a visit answers already_checked_in and records nothing', async () => {
      const event = await openEvent({ reentry: 'allow' });
      const ana = await guestOf(event.id, 'Ana');
      expect((await manual(ana.personId, event.id)).body.outcome).toBe('success');
      const visit = await t.request('GET', new URL(ana.checkinUrl).pathname);
      expect(visit.status, visit.text).toBe(200);
      expect(visit.body).toMatchObject({ result: 'already_checked_in', checkInId: null });
      expect(await t.deps.db.prisma.checkIn.count({ where: { eventId: event.id } })).toBe(1);
    });
  });

  describe('synced uploads', () => {
    it.each<[Reentry, string[]]>([
      ['allow', []],
      ['refuse', ['already_checked_in']],
      ['flag', ['already_checked_in']],
    ])(
      '%s: a device admission of a guest the cloud admitted before is flagged %j',
      async (reentry, flags) => {
        const event = await openEvent({ reentry });
        const ana = await guestOf(event.id, 'Ana');
        expect((await manual(ana.personId, event.id)).body.outcome).toBe('success');
        const item = admission(event.id, ana, { decidedOffline: true });
        const res = await sync([item]);
        expect(res.body.results[0]).toMatchObject({ status: 'accepted', outcome: 'success', flags });
        const hook = await hookOf(item.clientId);
        expect(hook.event).toBe('checkin.success');
        expect(hook.data.flags).toEqual(flags);
      },
    );

    it('records a device’s refusal already_checked_in as it was, unflagged', async () => {
      const event = await openEvent({ reentry: 'refuse' });
      const ana = await guestOf(event.id, 'Ana');
      expect((await manual(ana.personId, event.id)).body.outcome).toBe('success');
      const item = admission(event.id, ana, { outcome: 'denied', reason: 'already_checked_in' });
      expect((await sync([item])).body.results[0]).toMatchObject({
        status: 'accepted',
        outcome: 'denied',
        flags: [],
      });
      expect((await hookOf(item.clientId)).event).toBe('checkin.denied');
    });

    it('says in the webhook where a synced check-in came from: source sync, offline only when decided with the cloud unreachable, late_upload, recordedAt', async () => {
      const event = await openEvent();
      const [ana, bia, caio] = [
        await guestOf(event.id, 'Ana'),
        await guestOf(event.id, 'Bia'),
        await guestOf(event.id, 'Caio'),
      ];
      const now = t.deps.clock.now().getTime();
      const online = admission(event.id, ana, { decidedOffline: false });
      const cutOff = admission(event.id, bia, {
        decidedOffline: true,
        recordedAt: new Date(now - 10 * 60_000).toISOString(),
      });
      // An agent from before `decidedOffline`: its decisions count as offline.
      const older = admission(event.id, caio);
      const res = await sync([online, cutOff, older]);
      expect(res.body.results.map((r: { status: string }) => r.status)).toEqual([
        'accepted',
        'accepted',
        'accepted',
      ]);
      expect((await hookOf(online.clientId)).data).toMatchObject({
        source: 'sync',
        offline: false,
        late_upload: false,
        recordedAt: online.recordedAt,
        flags: [],
      });
      expect((await hookOf(cutOff.clientId)).data).toMatchObject({
        source: 'sync',
        offline: true,
        late_upload: true,
        recordedAt: cutOff.recordedAt,
      });
      expect((await hookOf(older.clientId)).data).toMatchObject({ source: 'sync', offline: true });
    });
  });
});
