// The public side of guests: guest by token, confirmation, link check-in, the confirmed list; what a
// person-linked guest's QR check-in does; and tenant isolation of every event and guest id and token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { adminOf, loggedInUser } from '../support/identity.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/** Field names and values no public guest form may carry. */
const FORBIDDEN_KEYS = ['document', 'phone', 'birthDate', 'email', 'embedding', 'template', 'personId'];

function expectNoPersonalData(text: string, values: string[]) {
  for (const key of FORBIDDEN_KEYS) expect(text).not.toContain(`"${key}"`);
  for (const value of values) expect(text).not.toContain(value);
}

describe('guests by token', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let a: Awaited<ReturnType<typeof adminOf>>;
  beforeAll(async () => {
    t = await createTestApp();
    receiver = await startWebhookReceiver();
    a = await adminOf(t);
    await t.request('PATCH', `/v1/tenants/${a.tenant.tenantId}/settings`, {
      body: { webhookUrl: receiver.url },
      headers: a.headers,
    });
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const newEvent = async (body: Record<string, unknown> = {}, status?: string) => {
    const res = await t.request('POST', '/v1/events', {
      headers: a.headers,
      body: { name: 'Gala', ...body },
    });
    expect(res.status).toBe(201);
    if (status) await setStatus(res.body.id, status);
    return res.body as { id: string; publicToken: string };
  };
  const setStatus = async (id: string, status: string) => {
    const res = await t.request('PATCH', `/v1/events/${id}/status`, { headers: a.headers, body: { status } });
    expect(res.status).toBe(200);
  };
  const addGuest = async (eventId: string, body: Record<string, unknown>) => {
    const res = await t.request('POST', `/v1/events/${eventId}/guests`, { headers: a.headers, body });
    expect(res.status, res.text).toBe(201);
    return res.body;
  };
  const linkToken = (guest: { checkinUrl: string }) => guest.checkinUrl.split('/').at(-1)!;
  /** The list token of an event, made by its admin, and the header that carries it. */
  const listTokens = new Map<string, string>();
  const listToken = async (event: { id: string }) => {
    if (!listTokens.has(event.id)) {
      const res = await t.request('POST', `/v1/events/${event.id}/list-token`, { headers: a.headers });
      expect(res.status, res.text).toBe(201);
      listTokens.set(event.id, res.body.token);
    }
    return { 'x-list-token': listTokens.get(event.id)! };
  };
  const confirmedList = async (event: { id: string; publicToken: string }, query = '') =>
    t.request('GET', `/v1/events/${event.publicToken}/confirmed-list${query}`, {
      headers: await listToken(event),
    });
  const PERSONAL = {
    email: 'rita@example.com',
    phone: '+351 912 345 678',
    document: 'DOC-99',
    birthDate: '1990-04-30',
  };

  it('shows a guest by token with minimal data only, and confirms idempotently', async () => {
    const event = await newEvent({}, 'published');
    const guest = await addGuest(event.id, { name: 'Rita Maria Lobo', ...PERSONAL });
    const path = `/v1/events/${event.publicToken}/guests/${guest.guestToken}`;
    const read = await t.request('GET', path);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ displayName: 'Rita', status: 'pending', event: { name: 'Gala' } });
    expectNoPersonalData(read.text, ['Lobo', ...Object.values(PERSONAL), guest.id, event.id]);

    const first = await t.request('PATCH', `${path}/confirm`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'confirmed', confirmedAt: expect.any(String) });
    expectNoPersonalData(first.text, Object.values(PERSONAL));
    const second = await t.request('PATCH', `${path}/confirm`);
    expect(second.body).toEqual(first.body);
    const audits = await t.deps.db.prisma.auditLog.count({
      where: { targetId: guest.id, action: 'guest.confirmed' },
    });
    expect(audits).toBe(1);
    expect(
      (await t.request('GET', `/v1/events/${event.publicToken}/guests/gt_not_a_real_token_000`)).status,
    ).toBe(404);
  });

  it('respects capacity and the event status when confirming', async () => {
    const event = await newEvent({ capacity: 1 }, 'published');
    const g1 = await addGuest(event.id, { name: 'One' });
    const g2 = await addGuest(event.id, { name: 'Two' });
    const confirm = (g: { guestToken: string }) =>
      t.request('PATCH', `/v1/events/${event.publicToken}/guests/${g.guestToken}/confirm`);
    expect((await confirm(g1)).status).toBe(200);
    const full = await confirm(g2);
    expect(full.status).toBe(409);
    expect(full.body).toMatchObject({ code: 'event_full', capacity: 1 });
    const byAdmin = await t.request('PATCH', `/v1/events/${event.id}/guests/${g2.id}`, {
      headers: a.headers,
      body: { status: 'confirmed' },
    });
    expect(byAdmin.status).toBe(409);
    await setStatus(event.id, 'cancelled');
    const closed = await confirm(g2);
    expect(closed.status).toBe(409);
    expect(closed.body.code).toBe('event_not_open');

    const draft = await newEvent();
    const g3 = await addGuest(draft.id, { name: 'Three' });
    const hidden = await t.request(
      'PATCH',
      `/v1/events/${draft.publicToken}/guests/${g3.guestToken}/confirm`,
    );
    expect(hidden.status).toBe(404);
  });

  it('declines by token idempotently; a declined place can be taken; a checked-in guest cannot decline', async () => {
    const event = await newEvent({ capacity: 1 }, 'open');
    const g1 = await addGuest(event.id, { name: 'One' });
    const g2 = await addGuest(event.id, { name: 'Two' });
    const answer = (g: { guestToken: string }, action: 'confirm' | 'decline') =>
      t.request('PATCH', `/v1/events/${event.publicToken}/guests/${g.guestToken}/${action}`);
    expect((await answer(g1, 'confirm')).status).toBe(200);
    expect((await answer(g2, 'confirm')).body.code).toBe('event_full');
    const declined = await answer(g1, 'decline');
    expect(declined.status).toBe(200);
    expect(declined.body.status).toBe('declined');
    expect(await answer(g1, 'decline')).toMatchObject({ status: 200, body: declined.body });
    expect((await answer(g2, 'confirm')).body.status).toBe('confirmed');
    // The confirmed list reports g1's removal to kiosks.
    const list = await confirmedList(event);
    expect(list.body.items.map((i: { name: string }) => i.name)).toEqual(['Two']);

    const visit = await t.request('GET', `/v1/public/checkin/link/${linkToken(g2)}`);
    expect(visit.body.result).toBe('checked_in');
    const late = await answer(g2, 'decline');
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('already_checked_in');
  });

  it('checks a guest in by link once, only while the event is open, with event and guest in the webhook', async () => {
    const event = await newEvent({ checkinMethods: ['link'] }, 'published');
    const guest = await addGuest(event.id, { name: 'Link Guest', email: 'link@example.com' });
    const url = `/v1/public/checkin/link/${linkToken(guest)}`;
    const early = await t.request('GET', url);
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('event_not_open');
    expect(await t.deps.db.prisma.checkIn.count({ where: { guestId: guest.id } })).toBe(0);

    await setStatus(event.id, 'open');
    const head = await fetch(t.url + url, { method: 'HEAD' });
    expect(head.status).toBe(204);
    const prefetch = await t.request('GET', url, { headers: { 'sec-purpose': 'prefetch' } });
    expect(prefetch.status).toBe(204);
    expect(await t.deps.db.prisma.checkIn.count({ where: { guestId: guest.id } })).toBe(0);

    const first = await t.request('GET', url);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      result: 'checked_in',
      reason: null,
      guest: { displayName: 'Link' },
      event: { name: 'Gala' },
      checkInId: expect.any(String),
    });
    expectNoPersonalData(first.text, ['link@example.com']);
    const row = await t.deps.db.prisma.checkIn.findUniqueOrThrow({ where: { id: first.body.checkInId } });
    expect(row).toMatchObject({ method: 'link', outcome: 'success', eventId: event.id, guestId: guest.id });
    const hook = await receiver.waitForBody((b) => b.data.checkInId === first.body.checkInId);
    expect(hook).toMatchObject({
      event: 'checkin.success',
      data: { eventId: event.id, guestId: guest.id, method: 'link', personId: null },
    });
    const listed = await t.request('GET', `/v1/events/${event.id}/guests`, { headers: a.headers });
    expect(listed.body.items[0]).toMatchObject({ status: 'checked_in', checkedInAt: first.body.checkedInAt });

    const visits = await Promise.all([1, 2, 3].map(() => t.request('GET', url)));
    for (const v of visits) {
      expect(v.status).toBe(200);
      expect(v.body).toMatchObject({
        result: 'already_checked_in',
        checkInId: null,
        checkedInAt: first.body.checkedInAt,
      });
    }
    expect(await t.deps.db.prisma.checkIn.count({ where: { guestId: guest.id } })).toBe(1);
    const undo = await t.request('PATCH', `/v1/events/${event.id}/guests/${guest.id}`, {
      headers: a.headers,
      body: { status: 'pending' },
    });
    expect(undo.status).toBe(409);
    expect(undo.body.code).toBe('conflict');
  });

  it('records one check-in when first visits race', async () => {
    const event = await newEvent({}, 'open');
    const guest = await addGuest(event.id, { name: 'Racer' });
    const url = `/v1/public/checkin/link/${linkToken(guest)}`;
    const visits = await Promise.all([1, 2, 3, 4].map(() => t.request('GET', url)));
    expect(visits.map((v) => v.status)).toEqual([200, 200, 200, 200]);
    expect(visits.filter((v) => v.body.result === 'checked_in')).toHaveLength(1);
    expect(await t.deps.db.prisma.checkIn.count({ where: { guestId: guest.id } })).toBe(1);
  });

  it('applies the event rules to link check-ins: method not allowed and capacity', async () => {
    const noLink = await newEvent({ checkinMethods: ['qr'] }, 'open');
    const g = await addGuest(noLink.id, { name: 'No Link' });
    const denied = await t.request('GET', `/v1/public/checkin/link/${linkToken(g)}`);
    expect(denied.body).toMatchObject({ result: 'denied', reason: 'method_not_allowed', checkedInAt: null });

    const small = await newEvent({ capacity: 1 }, 'open');
    const g1 = await addGuest(small.id, { name: 'First' });
    const g2 = await addGuest(small.id, { name: 'Second' });
    expect((await t.request('GET', `/v1/public/checkin/link/${linkToken(g1)}`)).body.result).toBe(
      'checked_in',
    );
    const full = await t.request('GET', `/v1/public/checkin/link/${linkToken(g2)}`);
    expect(full.body).toMatchObject({ result: 'denied', reason: 'capacity_reached' });
  });

  it('checks in the guest linked to a person who checks in by QR at the event', async () => {
    const event = await newEvent({}, 'open');
    const person = await t.request('POST', '/v1/persons', {
      headers: a.headers,
      body: { name: 'Qr Person', document: 'QR-1' },
    });
    const guest = await addGuest(event.id, {
      name: 'Qr Person',
      personId: person.body.id,
      status: 'confirmed',
    });
    const qr = await t.request('GET', `/v1/checkin/identities/${person.body.identityId}/qr-token`, {
      headers: a.headers,
    });
    const scan = await t.request('GET', `/v1/public/checkin/qr/${qr.body.token}?eventId=${event.id}`);
    expect(scan.body.outcome).toBe('success');
    const row = await t.deps.db.prisma.checkIn.findUniqueOrThrow({ where: { id: scan.body.checkInId } });
    expect(row.guestId).toBe(guest.id);
    const list = await confirmedList(event);
    expect(list.body.items).toEqual([
      { guestId: guest.id, name: 'Qr Person', status: 'checked_in', checkedInAt: expect.any(String) },
    ]);
    const link = await t.request('GET', `/v1/public/checkin/link/${linkToken(guest)}`);
    expect(link.body.result).toBe('already_checked_in');
  });

  it('keeps the confirmed list from the invitation’s event token: it needs the event’s list token (401 without), which an admin makes and rotates', async () => {
    const event = await newEvent({}, 'published');
    const guest = await addGuest(event.id, { name: 'Listed', status: 'confirmed' });
    const path = `/v1/events/${event.publicToken}/confirmed-list`;
    const bare = await t.request('GET', path);
    expect(bare.status, bare.text).toBe(401);
    expect(bare.body.code).toBe('unauthorized');
    expect(bare.text).not.toContain('Listed');
    // What the invitation's tokens still open: the branding and the guest's own data.
    expect((await t.request('GET', `/v1/events/${event.publicToken}/branding`)).status).toBe(200);
    const own = await t.request('GET', `/v1/events/${event.publicToken}/guests/${guest.guestToken}`);
    expect(own.status).toBe(200);
    expect(own.body.displayName).toBe('Listed');

    const operator = await loggedInUser(t, a.tenant.tenantId, 'operator', `op@${a.tenant.slug}.example.com`);
    const refused = await t.request('POST', `/v1/events/${event.id}/list-token`, { headers: operator });
    expect(refused.status).toBe(403);
    const made = await t.request('POST', `/v1/events/${event.id}/list-token`, { headers: a.headers });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toEqual({ token: expect.stringMatching(/^plt_/), createdAt: expect.any(String) });
    const row = await t.deps.db.prisma.event.findUniqueOrThrow({ where: { id: event.id } });
    expect(JSON.stringify(row)).not.toContain(made.body.token);
    const read = await t.request('GET', path, { headers: { 'x-list-token': made.body.token } });
    expect(read.status, read.text).toBe(200);
    expect(read.body.items.map((i: { name: string }) => i.name)).toEqual(['Listed']);
    for (const wrong of [event.publicToken, `${made.body.token}x`, 'plt_nope']) {
      const res = await t.request('GET', path, { headers: { 'x-list-token': wrong } });
      expect(res.status, wrong).toBe(401);
      expect(res.body.code).toBe('invalid_token');
    }
    // Another event's list token opens only its own event.
    const other = await newEvent({}, 'published');
    expect((await t.request('GET', path, { headers: await listToken(other) })).status).toBe(401);

    // Rotation: the new token works at once, the old one no longer; revocation ends it.
    const rotated = await t.request('POST', `/v1/events/${event.id}/list-token`, { headers: a.headers });
    expect(rotated.body.token).not.toBe(made.body.token);
    expect((await t.request('GET', path, { headers: { 'x-list-token': made.body.token } })).status).toBe(401);
    expect((await t.request('GET', path, { headers: { 'x-list-token': rotated.body.token } })).status).toBe(
      200,
    );
    expect(
      (await t.request('DELETE', `/v1/events/${event.id}/list-token`, { headers: a.headers })).status,
    ).toBe(204);
    expect((await t.request('GET', path, { headers: { 'x-list-token': rotated.body.token } })).status).toBe(
      401,
    );
    expect(
      (await t.request('DELETE', `/v1/events/${event.id}/list-token`, { headers: a.headers })).status,
    ).toBe(404);
  });

  it('serves the confirmed list in pages, then only changes since the checkpoint, removals included', async () => {
    const event = await newEvent({}, 'published');
    const guests = [];
    for (let i = 0; i < 7; i++) {
      guests.push(
        await addGuest(event.id, {
          name: `Guest ${i}`,
          email: `g${i}@example.com`,
          phone: `+1 555 000${i}`,
          document: `D-${i}`,
          birthDate: '1980-01-01',
          ...(i < 5 ? { status: 'confirmed' } : {}),
        }),
      );
    }
    const base = `/v1/events/${event.publicToken}/confirmed-list`;
    const headers = await listToken(event);
    const fetchAll = async (query: string) => {
      const items: { guestId: string }[] = [];
      const removed: string[] = [];
      let next: string | null = null;
      let checkpoint = '';
      let pages = 0;
      do {
        const res = await t.request('GET', `${base}?${query}${next ? `&cursor=${next}` : ''}`, { headers });
        expect(res.status).toBe(200);
        expectNoPersonalData(res.text, ['@example.com', '+1 555', 'D-', '1980-01-01']);
        items.push(...res.body.items);
        removed.push(...res.body.removed);
        next = res.body.nextCursor;
        checkpoint = res.body.checkpoint;
        pages++;
      } while (next);
      return { items, removed, checkpoint, pages };
    };
    const full = await fetchAll('limit=2');
    expect(full.pages).toBe(3);
    expect(full.items.map((g) => g.guestId).sort()).toEqual(
      guests
        .slice(0, 5)
        .map((g) => g.id)
        .sort(),
    );
    expect(full.removed).toEqual([]);

    const none = await t.request('GET', `${base}?since=${full.checkpoint}`, { headers });
    expect(none.body).toEqual({ items: [], removed: [], nextCursor: null, checkpoint: full.checkpoint });

    // Changes: one removed, one declined, one confirmed, one renamed.
    await t.request('DELETE', `/v1/events/${event.id}/guests/${guests[0].id}`, { headers: a.headers });
    await t.request('PATCH', `/v1/events/${event.id}/guests/${guests[1].id}`, {
      headers: a.headers,
      body: { status: 'declined' },
    });
    await t.request('PATCH', `/v1/events/${event.publicToken}/guests/${guests[5].guestToken}/confirm`);
    await t.request('PATCH', `/v1/events/${event.id}/guests/${guests[2].id}`, {
      headers: a.headers,
      body: { name: 'Guest Two Renamed' },
    });
    const delta = await fetchAll(`since=${full.checkpoint}&limit=3`);
    expect(delta.removed.sort()).toEqual([guests[0].id, guests[1].id].sort());
    expect(delta.items).toEqual([
      { guestId: guests[5].id, name: 'Guest 5', status: 'confirmed', checkedInAt: null },
      { guestId: guests[2].id, name: 'Guest Two Renamed', status: 'confirmed', checkedInAt: null },
    ]);
    const after = await t.request('GET', `${base}?since=${delta.checkpoint}`, { headers });
    expect(after.body).toMatchObject({ items: [], removed: [] });

    const bad = await t.request('GET', `${base}?cursor=garbage`, { headers });
    expect(bad.status).toBe(400);
    for (const since of ['99999999999999999999', '-1', 'abc']) {
      expect((await t.request('GET', `${base}?since=${since}`, { headers })).status, since).toBe(400);
    }
    const draft = await newEvent();
    expect((await confirmedList(draft)).status).toBe(404);
  });

  it('answers 404 to tenant B for every tenant A event and guest id and token', async () => {
    const event = await newEvent({}, 'open');
    const guest = await addGuest(event.id, { name: 'Private', email: 'private@example.com' });
    const b = await adminOf(t);
    const ids = [event.id, event.publicToken];
    const tries: [string, string, unknown?][] = [];
    for (const id of ids) {
      tries.push(
        ['GET', `/v1/events/${id}`],
        ['PATCH', `/v1/events/${id}`, { name: 'x' }],
        ['PATCH', `/v1/events/${id}/config`, { capacity: 1 }],
        ['PATCH', `/v1/events/${id}/status`, { status: 'closed' }],
        ['GET', `/v1/events/${id}/guests`],
        ['POST', `/v1/events/${id}/guests`, { name: 'Intruder' }],
        ['POST', `/v1/events/${id}/guests/invite`],
        ['POST', `/v1/events/${id}/guests/reinvite`],
        ['POST', `/v1/events/${id}/list-token`],
        ['DELETE', `/v1/events/${id}/list-token`],
        ['DELETE', `/v1/events/${id}`],
      );
      for (const guestRef of [guest.id, guest.guestToken]) {
        tries.push(
          ['PATCH', `/v1/events/${id}/guests/${guestRef}`, { name: 'x' }],
          ['DELETE', `/v1/events/${id}/guests/${guestRef}`],
        );
      }
    }
    for (const [method, path, body] of tries) {
      const res = await t.request(method, path, { headers: b.headers, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    const form = new FormData();
    form.append('file', new Blob(['name\nIntruder\n']), 'x.csv');
    const upload = await fetch(`${t.url}/v1/events/${event.id}/guests/import`, {
      method: 'POST',
      headers: b.headers,
      body: form,
    });
    expect(upload.status).toBe(404);
    const still = await t.request('GET', `/v1/events/${event.id}/guests`, { headers: a.headers });
    expect(still.body.items).toMatchObject([{ id: guest.id, name: 'Private', email: 'private@example.com' }]);
    expect((await t.request('GET', `/v1/events/${event.id}`, { headers: a.headers })).body.status).toBe(
      'open',
    );
  });

  it('stops serving the tokens of an archived event', async () => {
    const event = await newEvent({}, 'open');
    const guest = await addGuest(event.id, { name: 'Archived Guest', status: 'confirmed' });
    expect((await t.request('GET', `/v1/public/checkin/link/${linkToken(guest)}`)).body.result).toBe(
      'checked_in',
    );
    await listToken(event);
    const del = await t.request('DELETE', `/v1/events/${event.id}`, { headers: a.headers });
    expect(del.body.result).toBe('archived');
    expect((await confirmedList(event)).status).toBe(404);
    for (const path of [
      `/v1/events/${event.publicToken}/branding`,
      `/v1/events/${event.publicToken}/guests/${guest.guestToken}`,
      `/v1/public/checkin/link/${linkToken(guest)}`,
    ]) {
      expect((await t.request('GET', path)).status, path).toBe(404);
    }
    expect(await t.deps.db.prisma.checkIn.count({ where: { guestId: guest.id, eventId: event.id } })).toBe(1);
  });
});
