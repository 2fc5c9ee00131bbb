// Guests in the portal (issue 26) over real HTTP and a real SMTP exchange: an address found only on
// guest lists signs in with the same magic link, sees per organisation what each holds (two tenants
// listed apart, nothing of another address), exports it, and a confirmed deletion reaches those guest
// entries and leaves their check-ins as statistics without the person.
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integratorOf } from '../persons/support.js';
import {
  adminHeaders,
  PUBLIC_URL,
  requestLink,
  signIn,
  startPortalApp,
  waitForMail,
  type PortalApp,
} from './support.js';

const GUEST = 'rita.guest@example.com';
const OTHER = 'otto.guest@example.com';

let app: PortalApp;
type Org = Awaited<ReturnType<typeof integratorOf>> & { name: string };
let north: Org;
let south: Org;
const ids = {} as Record<
  'galaGuest' | 'galaEvent' | 'galaCheckin' | 'talkGuest' | 'ottoGuest' | 'fairGuest' | 'fairEvent',
  string
>;

async function organisation(name: string): Promise<Org> {
  const org = await integratorOf(app);
  await app.deps.db.prisma.tenant.update({ where: { id: org.tenantId }, data: { name } });
  return { ...org, name };
}

/** An event of the tenant (opened when asked) with one guest; answers the guest's id. */
async function guestOf(
  org: Org,
  event: { name: string; startsAt?: string; endsAt?: string; timeZone?: string; open?: boolean },
  guest: { name: string; email: string; document?: string; phone?: string },
) {
  const headers = await adminHeaders(app, org);
  const { open, ...body } = event;
  const created = await app.request('POST', '/v1/events', { headers, body });
  expect(created.status, created.text).toBe(201);
  for (const status of open ? ['published', 'open'] : ['published']) {
    const res = await app.request('PATCH', `/v1/events/${created.body.id}/status`, {
      headers,
      body: { status },
    });
    expect(res.status, res.text).toBe(200);
  }
  const added = await app.request('POST', `/v1/events/${created.body.id}/guests`, { headers, body: guest });
  expect(added.status, added.text).toBe(201);
  return { eventId: created.body.id as string, guestId: added.body.id as string, headers };
}

beforeAll(async () => {
  app = await startPortalApp();
  north = await organisation('North Hall');
  south = await organisation('South Arena');
  // North: Rita on two events' lists, checked in by staff at the open one; Otto on the same list.
  const gala = await guestOf(
    north,
    {
      name: 'Winter Gala',
      startsAt: '2026-12-12T22:00:00.000Z',
      endsAt: '2026-12-13T02:00:00.000Z',
      timeZone: 'America/Sao_Paulo',
      open: true,
    },
    { name: 'Rita Guest', email: GUEST, document: 'RG-778', phone: '+55 11 90000-1111' },
  );
  ids.galaGuest = gala.guestId;
  ids.galaEvent = gala.eventId;
  const checkin = await app.request('POST', '/v1/checkin/manual', {
    headers: gala.headers,
    body: { guestId: gala.guestId, eventId: gala.eventId },
  });
  expect(checkin.status, checkin.text).toBe(200);
  ids.galaCheckin = checkin.body.checkInId ?? checkin.body.id;
  const talk = await guestOf(
    north,
    { name: 'Spring Talk', startsAt: '2027-03-01T12:00:00.000Z' },
    {
      name: 'R. Guest',
      email: GUEST,
    },
  );
  ids.talkGuest = talk.guestId;
  const otto = await app.request('POST', `/v1/events/${gala.eventId}/guests`, {
    headers: gala.headers,
    body: { name: 'Otto Other', email: OTHER },
  });
  expect(otto.status, otto.text).toBe(201);
  ids.ottoGuest = otto.body.id;
  // South wrote the address in capitals: the same address for the portal.
  const fair = await guestOf(
    south,
    { name: 'Book Fair', startsAt: '2027-01-20T13:00:00.000Z' },
    {
      name: 'Rita G.',
      email: GUEST.toUpperCase(),
    },
  );
  ids.fairGuest = fair.guestId;
  ids.fairEvent = fair.eventId;
}, 60_000);
afterAll(() => app?.close());

describe('an address found only on guest lists', () => {
  it('gets the sign-in mail (no person holds it) and signs in with it', async () => {
    expect(
      await app.deps.db.prisma.person.count({ where: { email: { equals: GUEST, mode: 'insensitive' } } }),
    ).toBe(0);
    const { body } = await signIn(app, GUEST);
    expect(body).toMatchObject({ tokenType: 'Bearer', sessionId: expect.any(String) });
  });

  it('is answered exactly as an unknown address, and an address on no list gets no mail', async () => {
    await app.deps.db.prisma.rateLimitBucket.deleteMany({ where: { key: { startsWith: 'portal-link:' } } });
    const known = await requestLink(app, GUEST);
    const unknown = await requestLink(app, 'never.listed@example.com');
    expect(known.status).toBe(202);
    expect(unknown.status).toBe(202);
    expect(unknown.body).toEqual(known.body);
    await waitForMail(app.smtp, GUEST, /portal\/login\?token=/);
    expect(app.smtp.messages.some((m) => m.includes('never.listed@example.com'))).toBe(false);
  });

  it('is held to the same 5 links an hour per address (429 rate_limited)', async () => {
    await app.deps.db.prisma.rateLimitBucket.deleteMany({ where: { key: { startsWith: 'portal-link:' } } });
    for (let i = 0; i < 5; i++) expect((await requestLink(app, GUEST)).status).toBe(202);
    const limited = await requestLink(app, GUEST);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    for (let i = 0; i < 5; i++) await waitForMail(app.smtp, GUEST, /portal\/login\?token=/);
  });

  it('gets no mail once its only guest entry is removed', async () => {
    const { guestId, eventId, headers } = await guestOf(
      north,
      { name: 'Removed' },
      {
        name: 'Gone',
        email: 'gone.guest@example.com',
      },
    );
    const removed = await app.request('DELETE', `/v1/events/${eventId}/guests/${guestId}`, { headers });
    expect(removed.status, removed.text).toBe(204);
    await app.deps.db.prisma.rateLimitBucket.deleteMany({ where: { key: { startsWith: 'portal-link:' } } });
    expect((await requestLink(app, 'gone.guest@example.com')).status).toBe(202);
    // A known address's mail queued after it shows the worker has passed the removed one.
    expect((await requestLink(app, OTHER)).status).toBe(202);
    await waitForMail(app.smtp, OTHER, /portal\/login\?token=/);
    expect(app.smtp.messages.some((m) => m.includes('gone.guest@example.com'))).toBe(false);
  });
});

describe('what each organisation holds, as the portal shows it', () => {
  it('lists both organisations apart, with the guest entries, their events and the check-in', async () => {
    const { headers } = await signIn(app, GUEST);
    const res = await app.request('GET', '/v1/me/organisations', { headers });
    expect(res.status, res.text).toBe(200);
    expect(res.body.items.map((o: { tenantName: string }) => o.tenantName)).toEqual([
      'North Hall',
      'South Arena',
    ]);
    const [n, s] = res.body.items;
    expect(n).toMatchObject({ tenantId: north.tenantId, person: null, checkinsTotal: 1 });
    // Newest event first.
    expect(n.guests).toEqual([
      expect.objectContaining({
        id: ids.talkGuest,
        eventName: 'Spring Talk',
        status: 'pending',
        name: 'R. Guest',
      }),
      expect.objectContaining({
        id: ids.galaGuest,
        eventName: 'Winter Gala',
        eventStartsAt: '2026-12-12T22:00:00.000Z',
        eventEndsAt: '2026-12-13T02:00:00.000Z',
        eventTimeZone: 'America/Sao_Paulo',
        status: 'checked_in',
        checkedInAt: expect.any(String),
      }),
    ]);
    expect(n.checkins).toEqual([
      expect.objectContaining({ eventName: 'Winter Gala', method: 'manual', outcome: 'success' }),
    ]);
    // No scores, no biometric fields, no tokens of the guest's links.
    expect(JSON.stringify(res.body)).not.toMatch(/score|template|embedding|Token|document|RG-778/i);
    expect(s).toMatchObject({ tenantId: south.tenantId, person: null, checkins: [], checkinsTotal: 0 });
    expect(s.guests).toEqual([expect.objectContaining({ id: ids.fairGuest, eventName: 'Book Fair' })]);
    // Another address on the same list is never shown.
    expect(res.text).not.toContain(ids.ottoGuest);
    expect(res.text).not.toContain('Otto');
  });

  it('lists the guest check-in in the history too', async () => {
    const { headers } = await signIn(app, GUEST);
    const res = await app.request('GET', '/v1/me/checkins', { headers });
    expect(res.status, res.text).toBe(200);
    expect(res.body.items).toEqual([
      expect.objectContaining({ tenantName: 'North Hall', eventName: 'Winter Gala', method: 'manual' }),
    ]);
  });

  it('shows the other address only its own entry', async () => {
    const { headers } = await signIn(app, OTHER);
    const res = await app.request('GET', '/v1/me/organisations', { headers });
    expect(res.body.items).toHaveLength(1);
    expect(res.body.items[0]).toMatchObject({ tenantName: 'North Hall', checkins: [], checkinsTotal: 0 });
    expect(res.body.items[0].guests.map((g: { id: string }) => g.id)).toEqual([ids.ottoGuest]);
    expect(res.text).not.toMatch(/Rita|South Arena|Spring Talk/);
  });

  it('shows the person record beside the guest entries when the organisation holds one', async () => {
    const email = 'pat.both@example.com';
    const person = await app.request('POST', '/v1/persons', {
      headers: south.keyHeaders,
      body: { name: 'Pat Both', document: 'PB-1', email },
    });
    expect(person.status, person.text).toBe(201);
    const { guestId } = await guestOf(south, { name: 'Poetry Night' }, { name: 'Pat', email });
    const { headers } = await signIn(app, email);
    const res = await app.request('GET', '/v1/me/organisations', { headers });
    expect(res.body.items).toEqual([
      expect.objectContaining({
        tenantName: 'South Arena',
        person: { id: person.body.id, name: 'Pat Both', email, phone: null, enrolled: false },
        guests: [expect.objectContaining({ id: guestId, eventName: 'Poetry Night' })],
      }),
    ]);
  });

  it('is refused without a portal JWT (401)', async () => {
    const res = await app.request('GET', '/v1/me/organisations', { headers: north.headers });
    expect(res.status).toBe(401);
  });
});

describe('export and deletion of guest entries', () => {
  it('exports every guest entry of both organisations and the guest check-in, without scores of others', async () => {
    const { headers } = await signIn(app, GUEST);
    const requested = await app.request('POST', '/v1/me/data-export', { headers, body: {} });
    expect(requested.status, requested.text).toBe(202);
    const mail = await waitForMail(app.smtp, GUEST, /Your data export is ready/);
    const link = new RegExp(`${PUBLIC_URL}(/v1/portal/data-exports/[^\\s]+)`).exec(mail)![1]!;
    const res = await fetch(app.url + link);
    expect(res.status).toBe(200);
    const zip = await JSZip.loadAsync(Buffer.from(await res.arrayBuffer()));
    const read = async (name: string) => JSON.parse(await zip.file(name)!.async('string'));
    expect(await read('persons.json')).toEqual([]);
    const guests = await read('guests.json');
    expect(guests.map((g: { id: string }) => g.id).sort()).toEqual(
      [ids.galaGuest, ids.talkGuest, ids.fairGuest].sort(),
    );
    expect(guests).toContainEqual(
      expect.objectContaining({
        id: ids.galaGuest,
        tenantName: 'North Hall',
        eventName: 'Winter Gala',
        name: 'Rita Guest',
        email: GUEST,
        document: 'RG-778',
        phone: '+55 11 90000-1111',
        status: 'checked_in',
      }),
    );
    expect(guests).toContainEqual(expect.objectContaining({ id: ids.fairGuest, tenantName: 'South Arena' }));
    const checkins = await read('checkins.json');
    expect(checkins).toEqual([
      expect.objectContaining({ guestId: ids.galaGuest, eventName: 'Winter Gala', method: 'manual' }),
    ]);
    const text = JSON.stringify(
      await Promise.all(Object.keys(zip.files).map((f) => zip.file(f)?.async('string'))),
    );
    expect(text).not.toContain('Otto');
    expect(text).not.toContain(ids.ottoGuest);
  });

  it('a confirmed deletion de-identifies the guest entries at both organisations; the check-in stays as a count', async () => {
    const { prisma } = app.deps.db;
    const { headers } = await signIn(app, GUEST);
    const requested = await app.request('POST', '/v1/me/deletion-request', { headers });
    expect(requested.status, requested.text).toBe(201);
    const mail = await waitForMail(app.smtp, GUEST, /Confirm the deletion of your data/);
    const token = /token to the portal: (dc_[A-Za-z0-9_-]+)/.exec(mail)![1]!;
    // Both organisations were told, though neither holds a person with the address.
    const told = await prisma.outboxEvent.findMany({ where: { name: 'identity.deletion_requested' } });
    expect(new Set(told.map((e) => e.tenantId))).toEqual(new Set([north.tenantId, south.tenantId]));
    const confirmed = await app.request('POST', '/v1/portal/auth/deletion-confirm', { body: { token } });
    expect(confirmed.status, confirmed.text).toBe(200);
    app.clock.advance(169 * 3_600_000);
    const deadline = Date.now() + 10_000;
    while (
      (await prisma.deletionRequest.findUniqueOrThrow({ where: { id: requested.body.id } })).status !==
      'completed'
    ) {
      if (Date.now() > deadline) throw new Error('the erasure did not run');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const entries = await prisma.guest.findMany({
      where: { id: { in: [ids.galaGuest, ids.talkGuest, ids.fairGuest] } },
    });
    expect(entries).toHaveLength(3);
    for (const g of entries) {
      expect(g).toMatchObject({
        name: 'Anonymised',
        email: null,
        phone: null,
        document: null,
        birthDate: null,
      });
    }
    // The attendance stays right: the entry is still checked in, its check-in still counted.
    expect(entries.find((g) => g.id === ids.galaGuest)!.status).toBe('checked_in');
    const checkin = await prisma.checkIn.findFirstOrThrow({ where: { guestId: ids.galaGuest } });
    expect(checkin).toMatchObject({ anonymised: true, personId: null, latitude: null, longitude: null });
    expect(await prisma.checkIn.count({ where: { eventId: ids.galaEvent } })).toBe(1);
    // Nothing of the address is left in the guests or check-ins; Otto's entry is untouched.
    const left = await prisma.guest.findMany({ where: { email: { equals: GUEST, mode: 'insensitive' } } });
    expect(left).toEqual([]);
    expect(await prisma.guest.findUniqueOrThrow({ where: { id: ids.ottoGuest } })).toMatchObject({
      name: 'Otto Other',
      email: OTHER,
    });
    // Signing in again finds nothing held: no sign-in mail.
    const signInMails = () =>
      app.smtp.messages.filter(
        (m) => /^To: rita\.guest@example\.com$/im.test(m) && m.includes('portal/login'),
      ).length;
    const before = signInMails();
    await prisma.rateLimitBucket.deleteMany({ where: { key: { startsWith: 'portal-link:' } } });
    expect((await requestLink(app, GUEST)).status).toBe(202);
    expect((await requestLink(app, OTHER)).status).toBe(202);
    await waitForMail(app.smtp, OTHER, /portal\/login\?token=/);
    expect(signInMails()).toBe(before);
  });
});
