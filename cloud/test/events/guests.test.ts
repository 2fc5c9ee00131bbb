// Guests over HTTP: CRUD, search, status filter, cursor pages, person links, spreadsheet import (real
// CSV and XLSX files) and invitations through a real SMTP exchange.
import type { AddressInfo } from 'node:net';
import ExcelJS from 'exceljs';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { adminOf } from '../support/identity.js';

/** A real SMTP server that refuses recipients whose address starts with "bounce". */
async function startSmtp() {
  const messages: { to: string; raw: string }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onRcptTo(address, _session, done) {
      if (address.address.startsWith('bounce')) done(new Error('550 mailbox unavailable'));
      else done();
    },
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        messages.push({ to: session.envelope.rcptTo[0]!.address, raw: Buffer.concat(chunks).toString() });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
    messages,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Quoted-printable soft line breaks and escapes undone, so links can be read from a raw message. */
const plain = (raw: string) =>
  raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));

describe('guests', () => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let a: Awaited<ReturnType<typeof adminOf>>;
  beforeAll(async () => {
    smtp = await startSmtp();
    t = await createTestApp({ env: { SMTP_URL: smtp.url, PUBLIC_URL: 'https://tickets.example.com' } });
    a = await adminOf(t);
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  const newEvent = async (body: Record<string, unknown> = {}) => {
    const res = await t.request('POST', '/v1/events', {
      headers: a.headers,
      body: { name: 'Gala', ...body },
    });
    expect(res.status).toBe(201);
    return res.body as { id: string; publicToken: string };
  };
  const publish = async (eventId: string) => {
    const res = await t.request('PATCH', `/v1/events/${eventId}/status`, {
      headers: a.headers,
      body: { status: 'published' },
    });
    expect(res.status, res.text).toBe(200);
  };
  const addGuest = async (eventId: string, body: Record<string, unknown>) => {
    const res = await t.request('POST', `/v1/events/${eventId}/guests`, { headers: a.headers, body });
    expect(res.status, res.text).toBe(201);
    return res.body;
  };
  const upload = (eventId: string, file: Blob, name: string) => {
    const form = new FormData();
    form.append('file', file, name);
    return fetch(`${t.url}/v1/events/${eventId}/guests/import`, {
      method: 'POST',
      headers: a.headers,
      body: form,
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any })); // eslint-disable-line @typescript-eslint/no-explicit-any -- tests assert on shapes
  };

  it('creates, reads in lists, updates and removes guests; refuses duplicates with 409 duplicate_guest', async () => {
    const event = await newEvent();
    const rita = await addGuest(event.id, {
      name: 'Rita Lobo',
      email: 'rita@example.com',
      phone: '+351 912 000 000',
      document: 'DOC-1',
      birthDate: '1990-04-30',
    });
    expect(rita).toMatchObject({
      eventId: event.id,
      status: 'pending',
      personId: null,
      inviteCount: 0,
      confirmUrl: `https://tickets.example.com/e/${event.publicToken}/g/${rita.guestToken}`,
    });
    expect(rita.checkinUrl).toMatch(/^https:\/\/tickets\.example\.com\/v1\/public\/checkin\/link\/lk_/);
    const dupEmail = await t.request('POST', `/v1/events/${event.id}/guests`, {
      headers: a.headers,
      body: { name: 'Other', email: 'RITA@example.com' },
    });
    expect(dupEmail.status).toBe(409);
    expect(dupEmail.body).toMatchObject({ code: 'duplicate_guest', guestId: rita.id });

    const patched = await t.request('PATCH', `/v1/events/${event.id}/guests/${rita.id}`, {
      headers: a.headers,
      body: { phone: null, status: 'confirmed' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ phone: null, status: 'confirmed', confirmedAt: expect.any(String) });

    const del = await t.request('DELETE', `/v1/events/${event.id}/guests/${rita.id}`, { headers: a.headers });
    expect(del.status).toBe(204);
    const row = await t.deps.db.prisma.guest.findUniqueOrThrow({ where: { id: rita.id } });
    expect(row).toMatchObject({ email: null, document: null, birthDate: null, name: 'Rita Lobo' });
    expect(row.deletedAt).not.toBeNull();
    const again = await t.request('DELETE', `/v1/events/${event.id}/guests/${rita.id}`, {
      headers: a.headers,
    });
    expect(again.status).toBe(404);
    // Removed: the e-mail is free again.
    await addGuest(event.id, { name: 'Rita Again', email: 'rita@example.com' });
  });

  it('searches name, e-mail and document, filters by status and pages with a cursor', async () => {
    const event = await newEvent();
    const names = ['Ana Alves', 'Bruno Braga', 'Carla Costa', 'Duarte Dias', 'Eva Esteves'];
    for (const [i, name] of names.entries()) {
      await addGuest(event.id, {
        name,
        email: `g${i}@example.com`,
        document: `X-${i}`,
        ...(i % 2 === 0 ? { status: 'confirmed' } : {}),
      });
    }
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { items: { name: string }[]; nextCursor: string | null } } = await t.request(
        'GET',
        `/v1/events/${event.id}/guests?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        { headers: a.headers },
      );
      ids.push(...page.body.items.map((g) => g.name));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(ids).toEqual(names);
    const q = async (query: string) =>
      (
        await t.request('GET', `/v1/events/${event.id}/guests?${query}`, { headers: a.headers })
      ).body.items.map((g: { name: string }) => g.name);
    expect(await q('q=braga')).toEqual(['Bruno Braga']);
    expect(await q('q=G3%40EXAMPLE')).toEqual(['Duarte Dias']);
    expect(await q('q=X-4')).toEqual(['Eva Esteves']);
    expect(await q('status=confirmed')).toEqual(['Ana Alves', 'Carla Costa', 'Eva Esteves']);
    expect(await q('status=confirmed&q=carla')).toEqual(['Carla Costa']);
    // `%` and `_` are matched as themselves, not as LIKE wildcards.
    expect(await q('q=%25')).toEqual([]);
    expect(await q('q=_')).toEqual([]);
    const bad = await t.request('GET', `/v1/events/${event.id}/guests?status=maybe`, { headers: a.headers });
    expect(bad.status).toBe(400);
  });

  it('links a guest to a person of the tenant only', async () => {
    const event = await newEvent();
    const person = await t.request('POST', '/v1/persons', {
      headers: a.headers,
      body: { name: 'Linked Person', document: 'LP-1' },
    });
    const guest = await addGuest(event.id, { name: 'Linked Person' });
    const linked = await t.request('PATCH', `/v1/events/${event.id}/guests/${guest.id}`, {
      headers: a.headers,
      body: { personId: person.body.id },
    });
    expect(linked.body.personId).toBe(person.body.id);
    const other = await adminOf(t);
    const stranger = await t.request('POST', '/v1/persons', {
      headers: other.headers,
      body: { name: 'Stranger', document: 'S-1' },
    });
    const refused = await t.request('PATCH', `/v1/events/${event.id}/guests/${guest.id}`, {
      headers: a.headers,
      body: { personId: stranger.body.id },
    });
    expect(refused.status).toBe(404);
    const second = await t.request('POST', `/v1/events/${event.id}/guests`, {
      headers: a.headers,
      body: { name: 'Same person twice', personId: person.body.id },
    });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('duplicate_guest');
  });

  it('imports a CSV file with a per-row report: bad rows and duplicates reported, good rows stored', async () => {
    const event = await newEvent();
    await addGuest(event.id, { name: 'Already There', email: 'there@example.com' });
    const csv =
      '\uFEFFNome;E-mail;Telefone;Documento;Birth date;Notes\n' +
      'Ana Alves;ana@example.com;+351 1;A-1;1990-01-02;vip\n' +
      ';nobody@example.com;;;;\n' +
      'Bad Mail;not-an-email;;;;\n' +
      'Ana Again;ANA@example.com;;;;\n' +
      'Old Friend;there@example.com;;;;\n' +
      'Same Doc;;;A-1;;\n' +
      'Bruno Braga;;;B-2;31/12/1990;\n' +
      'Carla Costa;carla@example.com;;;;\n';
    const res = await upload(event.id, new Blob([csv], { type: 'text/csv' }), 'guests.csv');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 2, duplicates: 3, failed: 3 });
    const byRow = Object.fromEntries(res.body.results.map((r: { row: number }) => [r.row, r]));
    expect(byRow[2]).toMatchObject({ status: 'created', guestId: expect.any(String) });
    expect(byRow[3]).toMatchObject({ status: 'failed', errors: [{ path: 'rows.3.name' }] });
    expect(byRow[4]).toMatchObject({ status: 'failed', errors: [{ path: 'rows.4.email' }] });
    expect(byRow[5]).toMatchObject({ status: 'duplicate', duplicateOf: 'row 2' });
    expect(byRow[6]).toMatchObject({ status: 'duplicate', duplicateOf: expect.any(String) });
    expect(byRow[7]).toMatchObject({ status: 'duplicate', duplicateOf: 'row 2' });
    expect(byRow[8]).toMatchObject({ status: 'failed', errors: [{ path: 'rows.8.birthDate' }] });
    expect(byRow[9]).toMatchObject({ status: 'created' });
    const ana = await t.deps.db.prisma.guest.findUniqueOrThrow({ where: { id: byRow[2].guestId } });
    expect(ana).toMatchObject({
      name: 'Ana Alves',
      email: 'ana@example.com',
      phone: '+351 1',
      document: 'A-1',
      status: 'pending',
    });
    expect(ana.birthDate?.toISOString()).toBe('1990-01-02T00:00:00.000Z');
    expect(await t.deps.db.prisma.guest.count({ where: { eventId: event.id } })).toBe(3);
  });

  it('imports a real XLSX file (first sheet, dates and numbers as cells)', async () => {
    const event = await newEvent();
    const book = new ExcelJS.Workbook();
    const sheet = book.addWorksheet('Guests');
    sheet.addRow(['Full name', 'Email', 'Document', 'Date of birth']);
    sheet.addRow(['Duarte Dias', 'duarte@example.com', 12345678, new Date(Date.UTC(1985, 5, 15))]);
    sheet.addRow(['', 'empty@example.com', 'X', null]);
    sheet.addRow([
      'Eva Esteves',
      { text: 'eva@example.com', hyperlink: 'mailto:eva@example.com' },
      'E-1',
      null,
    ]);
    const data = Buffer.from(await book.xlsx.writeBuffer());
    const res = await upload(
      event.id,
      new Blob([data], { type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' }),
      'guests.xlsx',
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 2, duplicates: 0, failed: 1 });
    const list = await t.request('GET', `/v1/events/${event.id}/guests`, { headers: a.headers });
    expect(list.body.items).toMatchObject([
      { name: 'Duarte Dias', email: 'duarte@example.com', document: '12345678', birthDate: '1985-06-15' },
      { name: 'Eva Esteves', email: 'eva@example.com', document: 'E-1' },
    ]);
  });

  it('refuses an upload that is not a spreadsheet, not multipart, or has no name column', async () => {
    const event = await newEvent();
    const png = await upload(
      event.id,
      new Blob([Buffer.from('\x89PNG\r\n')], { type: 'image/png' }),
      'x.png',
    );
    expect(png.status).toBe(400);
    expect(png.body.code).toBe('unsupported_file');
    const broken = await upload(event.id, new Blob([Buffer.from('PK\x03\x04garbage')]), 'x.xlsx');
    expect(broken.status).toBe(400);
    expect(broken.body.code).toBe('unsupported_file');
    const noName = await upload(event.id, new Blob(['email\nx@example.com\n']), 'x.csv');
    expect(noName.status).toBe(400);
    expect(noName.body.code).toBe('validation_failed');
    const json = await t.request('POST', `/v1/events/${event.id}/guests/import`, {
      headers: a.headers,
      body: { rows: [] },
    });
    expect(json.status).toBe(415);
    expect(json.body.code).toBe('unsupported_media_type');
    // A body that ends inside the file: 400, and the server stays up.
    const truncated = await t.request('POST', `/v1/events/${event.id}/guests/import`, {
      headers: { ...a.headers, 'content-type': 'multipart/form-data; boundary=XyZ' },
      raw: '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="g.csv"\r\n\r\nname\nAna\n',
    });
    expect(truncated.status, truncated.text).toBe(400);
    expect(truncated.body.code).toBe('validation_failed');
    expect((await t.request('GET', '/v1/health/live')).status).toBe(200);
  });

  it('invites through SMTP once per guest, reinvites, and reports a failed mail for its guest only', async () => {
    const event = await newEvent({ startsAt: '2026-12-01T18:00:00.000Z', timeZone: 'Europe/Lisbon' });
    const ok = await addGuest(event.id, { name: 'Ok Guest', email: 'ok@example.com' });
    const bounce = await addGuest(event.id, { name: 'Bounce Guest', email: 'bounce@example.com' });
    const noMail = await addGuest(event.id, { name: 'No Mail' });
    await publish(event.id);
    const before = smtp.messages.length;

    const first = await t.request('POST', `/v1/events/${event.id}/guests/invite`, { headers: a.headers });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ sent: 1, failed: 1, skipped: 0, remaining: 0 });
    const failed = first.body.results.find((r: { guestId: string }) => r.guestId === bounce.id);
    expect(failed).toMatchObject({ status: 'failed', reason: expect.stringContaining('550') });
    expect(smtp.messages.length).toBe(before + 1);
    const mail = plain(smtp.messages.at(-1)!.raw);
    expect(smtp.messages.at(-1)!.to).toBe('ok@example.com');
    expect(mail).toContain('Subject: Invitation: Gala');
    expect(mail).toContain(ok.confirmUrl);
    expect(mail).toContain(ok.checkinUrl);
    // The date written out in the event's time zone, never an ISO timestamp.
    expect(mail).toContain('Tuesday, 1 December, 18:00 (Western European Standard Time)');

    const okRow = await t.request('GET', `/v1/events/${event.id}/guests?q=Ok`, { headers: a.headers });
    expect(okRow.body.items[0]).toMatchObject({ status: 'invited', inviteCount: 1, lastInviteError: null });
    const bounceRow = await t.request('GET', `/v1/events/${event.id}/guests?q=Bounce`, {
      headers: a.headers,
    });
    expect(bounceRow.body.items[0]).toMatchObject({ status: 'pending', inviteCount: 0 });
    expect(bounceRow.body.items[0].lastInviteError).toContain('550');

    // Again: nobody is mailed twice; the bounced guest is tried again (and fails again).
    const second = await t.request('POST', `/v1/events/${event.id}/guests/invite`, {
      headers: a.headers,
      body: { guestIds: [ok.id, noMail.id, bounce.id, '01a20000-0000-7000-8000-000000000000'] },
    });
    expect(second.body.results).toEqual([
      { guestId: '01a20000-0000-7000-8000-000000000000', status: 'skipped', reason: 'not_found' },
      { guestId: ok.id, status: 'skipped', reason: 'already_invited' },
      { guestId: noMail.id, status: 'skipped', reason: 'no_email' },
      { guestId: bounce.id, status: 'failed', reason: expect.stringContaining('550') },
    ]);
    expect(smtp.messages.length).toBe(before + 1);

    const tooSoon = await t.request('POST', `/v1/events/${event.id}/guests/reinvite`, { headers: a.headers });
    expect(tooSoon.body).toMatchObject({ sent: 0 });
    await t.deps.db.prisma.guest.update({
      where: { id: ok.id },
      data: { invitedAt: new Date(Date.now() - 2 * 60 * 60_000) },
    });
    const re = await t.request('POST', `/v1/events/${event.id}/guests/reinvite`, { headers: a.headers });
    expect(re.body).toMatchObject({ sent: 1, results: [{ guestId: ok.id, status: 'sent' }] });
    expect(smtp.messages.length).toBe(before + 2);
    expect(plain(smtp.messages.at(-1)!.raw)).toContain('Subject: Reminder: Gala');
    const again = await t.request('POST', `/v1/events/${event.id}/guests/reinvite`, {
      headers: a.headers,
      body: { guestIds: [ok.id] },
    });
    expect(again.body.results).toEqual([{ guestId: ok.id, status: 'skipped', reason: 'recently_sent' }]);
  });

  it('mails a guest once when two invite calls race', async () => {
    const event = await newEvent();
    await addGuest(event.id, { name: 'Race Guest', email: 'race@example.com' });
    await publish(event.id);
    const before = smtp.messages.length;
    const calls = await Promise.all(
      [1, 2, 3].map(() => t.request('POST', `/v1/events/${event.id}/guests/invite`, { headers: a.headers })),
    );
    expect(calls.map((c) => c.status)).toEqual([200, 200, 200]);
    expect(calls.reduce((n, c) => n + c.body.sent, 0)).toBe(1);
    expect(smtp.messages.filter((m) => m.to === 'race@example.com')).toHaveLength(1);
    expect(smtp.messages.length).toBe(before + 1);
  });

  it('refuses to invite the guests of a draft event with 409 event_not_published and mails nobody; once published their links work', async () => {
    const event = await newEvent({ startsAt: '2026-12-01T18:00:00.000Z' });
    const guests = [];
    for (let i = 0; i < 3; i++) {
      guests.push(await addGuest(event.id, { name: `Draft Guest ${i}`, email: `draft${i}@example.com` }));
    }
    const before = smtp.messages.length;
    for (const kind of ['invite', 'reinvite']) {
      for (const body of [undefined, { guestIds: [guests[0].id] }]) {
        const res = await t.request('POST', `/v1/events/${event.id}/guests/${kind}`, {
          headers: a.headers,
          ...(body ? { body } : {}),
        });
        expect(res.status, `${kind} ${JSON.stringify(body)}`).toBe(409);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(res.body).toMatchObject({ code: 'event_not_published', status: 409, eventStatus: 'draft' });
      }
    }
    // Nothing reached the SMTP server and nobody is marked invited.
    await new Promise((r) => setTimeout(r, 200));
    expect(smtp.messages.length).toBe(before);
    const rows = await t.request('GET', `/v1/events/${event.id}/guests`, { headers: a.headers });
    expect(rows.body.items.map((g: { status: string }) => g.status)).toEqual([
      'pending',
      'pending',
      'pending',
    ]);

    // Published, the same call mails everyone, and the link each mail carries answers.
    await publish(event.id);
    const sent = await t.request('POST', `/v1/events/${event.id}/guests/invite`, { headers: a.headers });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toMatchObject({ sent: 3, failed: 0 });
    const mails = smtp.messages.slice(before).map((m) => plain(m.raw));
    expect(mails).toHaveLength(3);
    for (const guest of guests) {
      const mail = mails.find((m) => m.includes(guest.confirmUrl));
      expect(mail, guest.name).toBeDefined();
      const [, eventToken, guestToken] = /\/e\/([^/\s]+)\/g\/([^\s]+)/.exec(guest.confirmUrl)!;
      const page = await t.request('GET', `/v1/events/${eventToken}/guests/${guestToken}`);
      expect(page.status, page.text).toBe(200);
      expect(page.body.status).toBe('invited');
    }
  });

  it('answers 404 not_found, not event_not_published, to another tenant inviting a draft event', async () => {
    const event = await newEvent();
    await addGuest(event.id, { name: 'Hidden', email: 'hidden@example.com' });
    const b = await adminOf(t);
    const res = await t.request('POST', `/v1/events/${event.id}/guests/invite`, { headers: b.headers });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });

  it('limits invitation calls per event with 429 rate_limited', async () => {
    const event = await newEvent();
    await publish(event.id);
    let last = 200;
    for (let i = 0; i < 21; i++) {
      last = (await t.request('POST', `/v1/events/${event.id}/guests/invite`, { headers: a.headers })).status;
    }
    expect(last).toBe(429);
  });
});
