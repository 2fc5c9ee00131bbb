// Events over HTTP: CRUD, configuration, the status lifecycle, deletion vs archiving, public branding.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { adminOf, bearer, loggedInUser } from '../support/identity.js';
import { integratorOf } from '../persons/support.js';

const GALA = {
  name: 'Acme Gala',
  description: 'Annual dinner',
  startsAt: '2026-12-01T18:00:00.000Z',
  endsAt: '2026-12-01T23:00:00.000Z',
  timeZone: 'Europe/Lisbon',
  venue: { name: 'Palácio', address: 'Rua Augusta 1, Lisboa', location: { lat: 38.71, lng: -9.14 } },
  capacity: 2,
  checkinMethods: ['qr', 'manual', 'link'],
  geofence: { center: { lat: 38.71, lng: -9.14 } },
  branding: { displayName: 'Gala', primaryColor: '#112233', welcomeText: 'Olá', locale: 'pt-PT' },
};

describe('events', () => {
  let t: TestApp;
  let a: Awaited<ReturnType<typeof adminOf>>;
  let b: Awaited<ReturnType<typeof adminOf>>;
  beforeAll(async () => {
    t = await createTestApp();
    a = await adminOf(t);
    b = await adminOf(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const create = async (body: Record<string, unknown> = GALA, headers = a.headers) => {
    const res = await t.request('POST', '/v1/events', { headers, body });
    expect(res.status).toBe(201);
    return res.body;
  };

  it('creates a draft event with its fields, a public token and the tenant radius as effective radius', async () => {
    const event = await create();
    expect(event).toMatchObject({
      name: 'Acme Gala',
      status: 'draft',
      timeZone: 'Europe/Lisbon',
      venue: { name: 'Palácio', location: { lat: 38.71, lng: -9.14 } },
      capacity: 2,
      checkinMethods: ['qr', 'manual', 'link'],
      geofence: { center: { lat: 38.71, lng: -9.14 }, radiusMetres: null, effectiveRadiusMetres: 200 },
      branding: { displayName: 'Gala', primaryColor: '#112233' },
    });
    expect(event.publicToken).toMatch(/^ev_/);
    const read = await t.request('GET', `/v1/events/${event.id}`, { headers: a.headers });
    expect(read.body).toEqual(event);
  });

  it('refuses bad fields with 400 validation_failed', async () => {
    for (const body of [
      { name: '' },
      { name: 'x', timeZone: 'Mars/Olympus' },
      { name: 'x', checkinMethods: ['qr', 'qr'] },
      { name: 'x', branding: { primaryColor: 'red' } },
      { name: 'x\u0000y' },
      { name: 'x', surprise: true },
    ]) {
      const res = await t.request('POST', '/v1/events', { headers: a.headers, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });

  it('refuses an event that ends before it starts with 400 ends_before_start, on create and on update against the stored dates', async () => {
    const refused = await t.request('POST', '/v1/events', {
      headers: a.headers,
      body: { name: 'x', startsAt: '2026-12-02T00:00:00.000Z', endsAt: '2026-12-01T00:00:00.000Z' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: 'ends_before_start',
      errors: [{ path: 'body.endsAt', message: 'endsAt must not be before startsAt' }],
    });
    const event = await create();
    for (const body of [
      { endsAt: '2026-12-01T17:59:00.000Z' },
      { startsAt: '2026-12-02T00:00:00.000Z' },
      { startsAt: '2026-12-03T00:00:00.000Z', endsAt: '2026-12-02T00:00:00.000Z' },
    ]) {
      const res = await t.request('PATCH', `/v1/events/${event.id}`, { headers: a.headers, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('ends_before_start');
    }
    const same = await t.request('PATCH', `/v1/events/${event.id}`, {
      headers: a.headers,
      body: { endsAt: GALA.startsAt },
    });
    expect(same.status, same.text).toBe(200);
    const elsewhere = await t.request('PATCH', `/v1/events/${event.id}`, {
      headers: b.headers,
      body: { endsAt: '2026-11-01T00:00:00.000Z' },
    });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.code).toBe('not_found');
  });

  it('refuses a capacity below the guests already checked in with 409 capacity_below_checked_in; undone check-ins free their place', async () => {
    const event = await create({ ...GALA, capacity: 10 });
    await t.request('PATCH', `/v1/events/${event.id}/status`, {
      headers: a.headers,
      body: { status: 'open' },
    });
    const checkIns: string[] = [];
    for (const name of ['Ana', 'Bia', 'Caio']) {
      const guest = await t.request('POST', `/v1/events/${event.id}/guests`, {
        headers: a.headers,
        body: { name },
      });
      const res = await t.request('POST', '/v1/checkin/manual', {
        headers: a.headers,
        body: { guestId: guest.body.id, eventId: event.id },
      });
      expect(res.body.outcome, res.text).toBe('success');
      checkIns.push(res.body.checkInId);
    }
    const config = (capacity: number | null, headers = a.headers) =>
      t.request('PATCH', `/v1/events/${event.id}/config`, { headers, body: { capacity } });
    const below = await config(2);
    expect(below.status).toBe(409);
    expect(below.body).toMatchObject({ code: 'capacity_below_checked_in', checkedIn: 3, capacity: 2 });
    expect((await t.request('GET', `/v1/events/${event.id}`, { headers: a.headers })).body.capacity).toBe(10);
    expect((await config(3)).status).toBe(200);
    expect((await config(null)).status).toBe(200);

    const voided = await t.request('POST', `/v1/checkin/${checkIns[0]}/void`, {
      headers: a.headers,
      body: { reason: 'wrong guest' },
    });
    expect(voided.status, voided.text).toBe(200);
    const now = await config(2);
    expect(now.status, now.text).toBe(200);
    expect(now.body.capacity).toBe(2);

    const elsewhere = await config(1, b.headers);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.code).toBe('not_found');
  });

  it('updates fields and configures methods, capacity and geofence', async () => {
    const event = await create();
    const updated = await t.request('PATCH', `/v1/events/${event.id}`, {
      headers: a.headers,
      body: { name: 'Acme Gala 2', venue: null, branding: { displayName: 'G2' } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'Acme Gala 2', venue: null, branding: { displayName: 'G2' } });
    const badDates = await t.request('PATCH', `/v1/events/${event.id}`, {
      headers: a.headers,
      body: { endsAt: '2026-11-30T00:00:00.000Z' },
    });
    expect(badDates.status).toBe(400);
    const config = await t.request('PATCH', `/v1/events/${event.id}/config`, {
      headers: a.headers,
      body: {
        checkinMethods: ['facial'],
        capacity: null,
        geofence: { center: { lat: 1, lng: 2 }, radiusMetres: 50 },
      },
    });
    expect(config.status).toBe(200);
    expect(config.body).toMatchObject({
      checkinMethods: ['facial'],
      capacity: null,
      geofence: { center: { lat: 1, lng: 2 }, radiusMetres: 50, effectiveRadiusMetres: 50 },
    });
    const empty = await t.request('PATCH', `/v1/events/${event.id}/config`, { headers: a.headers, body: {} });
    expect(empty.status).toBe(400);
  });

  it('runs the lifecycle draft -> published -> open -> closed -> open and refuses an illegal move with 409 invalid_transition', async () => {
    const event = await create();
    const move = (status: string) =>
      t.request('PATCH', `/v1/events/${event.id}/status`, { headers: a.headers, body: { status } });
    const illegal = await move('closed');
    expect(illegal.status).toBe(409);
    expect(illegal.headers.get('content-type')).toContain('application/problem+json');
    expect(illegal.body).toMatchObject({
      code: 'invalid_transition',
      from: 'draft',
      to: 'closed',
      allowed: ['published', 'open', 'cancelled'],
    });
    for (const status of ['published', 'open', 'open', 'closed', 'open', 'cancelled']) {
      const res = await move(status);
      expect(res.status, status).toBe(200);
      expect(res.body.status).toBe(status);
    }
    const final = await move('open');
    expect(final.status).toBe(409);
    expect(final.body.code).toBe('invalid_transition');
    const audit = await t.deps.db.prisma.auditLog.findMany({
      where: { targetId: event.id, action: 'event.status_changed' },
    });
    expect(audit).toHaveLength(5);
  });

  it('lists with cursor pages and filters status and start range', async () => {
    const c = await adminOf(t);
    const made = [];
    for (let i = 0; i < 5; i++) {
      made.push(await create({ name: `E${i}`, startsAt: `2027-01-0${i + 1}T10:00:00.000Z` }, c.headers));
    }
    await t.request('PATCH', `/v1/events/${made[1].id}/status`, {
      headers: c.headers,
      body: { status: 'open' },
    });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { items: { id: string }[]; nextCursor: string | null } } = await t.request(
        'GET',
        `/v1/events?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        { headers: c.headers },
      );
      seen.push(...page.body.items.map((e) => e.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(made.map((e) => e.id));
    const open = await t.request('GET', '/v1/events?status=open', { headers: c.headers });
    expect(open.body.items.map((e: { id: string }) => e.id)).toEqual([made[1].id]);
    const range = await t.request(
      'GET',
      '/v1/events?startsFrom=2027-01-02T00:00:00.000Z&startsTo=2027-01-04T00:00:00.000Z',
      { headers: c.headers },
    );
    expect(range.body.items.map((e: { name: string }) => e.name)).toEqual(['E1', 'E2']);
    const bad = await t.request('GET', '/v1/events?cursor=nonsense', { headers: c.headers });
    expect(bad.status).toBe(400);
  });

  it('serves public branding by token without internals, and 404 for drafts', async () => {
    const event = await create();
    const draft = await t.request('GET', `/v1/events/${event.publicToken}/branding`);
    expect(draft.status).toBe(404);
    await t.request('PATCH', `/v1/events/${event.id}/status`, {
      headers: a.headers,
      body: { status: 'published' },
    });
    const res = await t.request('GET', `/v1/events/${event.publicToken}/branding`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      name: 'Acme Gala',
      status: 'published',
      startsAt: GALA.startsAt,
      endsAt: GALA.endsAt,
      timeZone: 'Europe/Lisbon',
      venue: { name: 'Palácio', address: 'Rua Augusta 1, Lisboa' },
      branding: GALA.branding,
    });
    for (const internal of ['id', 'tenantId', 'capacity', 'geofence', 'publicToken', event.id]) {
      expect(res.text).not.toContain(`"${internal}"`);
    }
    expect((await t.request('GET', '/v1/events/ev_unknown_token_0000000/branding')).status).toBe(404);
  });

  it('deletes an event without check-ins and archives one with check-ins, keeping its history', async () => {
    const empty = await create();
    const del = await t.request('DELETE', `/v1/events/${empty.id}`, { headers: a.headers });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: empty.id, result: 'deleted' });
    expect(await t.deps.db.prisma.event.findUnique({ where: { id: empty.id } })).toBeNull();

    const used = await create();
    await t.request('PATCH', `/v1/events/${used.id}/status`, {
      headers: a.headers,
      body: { status: 'open' },
    });
    const person = await t.request('POST', '/v1/persons', {
      headers: a.headers,
      body: { name: 'Ana Lima', document: 'D-1' },
    });
    const checkin = await t.request('POST', '/v1/checkin/manual', {
      headers: a.headers,
      body: { personId: person.body.id, eventId: used.id },
    });
    expect(checkin.body.outcome).toBe('success');
    const archived = await t.request('DELETE', `/v1/events/${used.id}`, { headers: a.headers });
    expect(archived.body).toEqual({ id: used.id, result: 'archived' });
    expect((await t.request('GET', `/v1/events/${used.id}`, { headers: a.headers })).status).toBe(404);
    expect((await t.request('GET', `/v1/events/${used.publicToken}/branding`)).status).toBe(404);
    expect((await t.request('DELETE', `/v1/events/${used.id}`, { headers: a.headers })).status).toBe(404);
    const row = await t.deps.db.prisma.checkIn.findUniqueOrThrow({ where: { id: checkin.body.checkInId } });
    expect(row.eventId).toBe(used.id);
    const again = await t.request('POST', '/v1/checkin/manual', {
      headers: a.headers,
      body: { personId: person.body.id, eventId: used.id },
    });
    expect(again.status).toBe(404);
  });

  it('takes an API key with every scope; a narrower key gets 403 insufficient_scope', async () => {
    const org = await integratorOf(t);
    const made = await t.request('POST', '/v1/events', { headers: org.keyHeaders, body: { name: 'By key' } });
    expect(made.status).toBe(201);
    const apps = await t.request('GET', '/v1/applications', { headers: org.headers });
    const narrow = await t.request('POST', `/v1/applications/${apps.body.items[0].id}/api-keys`, {
      headers: org.headers,
      body: { scopes: ['persons:read'] },
    });
    expect(narrow.status).toBe(201);
    const refused = await t.request('GET', '/v1/events', { headers: bearer(narrow.body.key) });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('insufficient_scope');
    // events:read reads events and guests, and changes nothing.
    const reader = await t.request('POST', `/v1/applications/${apps.body.items[0].id}/api-keys`, {
      headers: org.headers,
      body: { scopes: ['events:read'] },
    });
    const readerKey = bearer(reader.body.key);
    expect((await t.request('GET', '/v1/events', { headers: readerKey })).status).toBe(200);
    expect((await t.request('GET', `/v1/events/${made.body.id}/guests`, { headers: readerKey })).status).toBe(
      200,
    );
    const write = await t.request('POST', `/v1/events/${made.body.id}/guests`, {
      headers: readerKey,
      body: { name: 'Nope' },
    });
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('insufficient_scope');
  });

  it('lets the operator role read events and guests but not change them (403 forbidden)', async () => {
    const opHeaders = await loggedInUser(t, a.tenant.tenantId, 'operator', `op@${a.tenant.slug}.example.com`);
    const event = await create();
    expect((await t.request('GET', `/v1/events/${event.id}`, { headers: opHeaders })).status).toBe(200);
    expect((await t.request('GET', `/v1/events/${event.id}/guests`, { headers: opHeaders })).status).toBe(
      200,
    );
    for (const [method, path, body] of [
      ['POST', '/v1/events', { name: 'Op' }],
      ['PATCH', `/v1/events/${event.id}`, { name: 'Op' }],
      ['POST', `/v1/events/${event.id}/guests`, { name: 'Op' }],
      ['DELETE', `/v1/events/${event.id}`, undefined],
    ] as const) {
      const res = await t.request(method, path, { headers: opHeaders, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
  });

  it('documents every event, guest and link route in OpenAPI, the import as a multipart upload', async () => {
    const doc = (await t.request('GET', '/docs-json')).body;
    const routes: [string, string][] = [
      ['get', '/v1/events'],
      ['post', '/v1/events'],
      ['get', '/v1/events/{id}'],
      ['patch', '/v1/events/{id}'],
      ['patch', '/v1/events/{id}/config'],
      ['patch', '/v1/events/{id}/status'],
      ['delete', '/v1/events/{id}'],
      ['get', '/v1/events/{token}/branding'],
      ['get', '/v1/events/{token}/confirmed-list'],
      ['post', '/v1/events/{id}/list-token'],
      ['delete', '/v1/events/{id}/list-token'],
      ['post', '/v1/events/{id}/guests'],
      ['get', '/v1/events/{id}/guests'],
      ['patch', '/v1/events/{id}/guests/{guestId}'],
      ['delete', '/v1/events/{id}/guests/{guestId}'],
      ['post', '/v1/events/{id}/guests/import'],
      ['post', '/v1/events/{id}/guests/invite'],
      ['post', '/v1/events/{id}/guests/reinvite'],
      ['get', '/v1/events/{eventToken}/guests/{guestToken}'],
      ['patch', '/v1/events/{eventToken}/guests/{guestToken}/confirm'],
      ['get', '/v1/public/checkin/link/{token}'],
    ];
    for (const [method, path] of routes) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(
        Object.keys(op.responses).some((s) => s.startsWith('2')),
        `${method} ${path}`,
      ).toBe(true);
    }
    const upload = doc.paths['/v1/events/{id}/guests/import'].post.requestBody.content;
    expect(Object.keys(upload)).toEqual(['multipart/form-data']);
    expect(doc.components.schemas.CreateEventRequest.example).toMatchObject({ name: 'Acme Summit 2026' });
    expect(doc.paths['/v1/events/{id}/status'].patch.responses['409'].description).toContain(
      'invalid_transition',
    );
  });

  it('answers 404 to tenant B for every tenant A event id and token', async () => {
    const event = await create();
    await t.request('PATCH', `/v1/events/${event.id}/status`, {
      headers: a.headers,
      body: { status: 'open' },
    });
    const tries: [string, string, unknown?][] = [
      ['GET', `/v1/events/${event.id}`],
      ['PATCH', `/v1/events/${event.id}`, { name: 'mine' }],
      ['PATCH', `/v1/events/${event.id}/config`, { capacity: 1 }],
      ['PATCH', `/v1/events/${event.id}/status`, { status: 'closed' }],
      ['DELETE', `/v1/events/${event.id}`],
    ];
    for (const [method, path, body] of tries) {
      const res = await t.request(method, path, { headers: b.headers, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    const list = await t.request('GET', '/v1/events', { headers: b.headers });
    expect(list.body.items.map((e: { id: string }) => e.id)).not.toContain(event.id);
    expect((await t.request('GET', `/v1/events/${event.id}`, { headers: a.headers })).body.status).toBe(
      'open',
    );
  });
});
