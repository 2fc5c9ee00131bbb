// Guests and persons in their language over HTTP: the tenant's default locale, the order the pages'
// language is chosen in, the mails read from a real SMTP server (language, dates written out in the
// event's time zone, no ISO timestamp, no English word in Portuguese) and the invitation's calendar file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetMfa, resetPassword } from '../../src/modules/auth/operator.js';
import { integratorOf } from '../persons/support.js';
import { bearer, PASSWORD, totp } from '../support/identity.js';
import { wordsOf } from '../support/page-language.js';
import {
  decodeMail,
  PUBLIC_URL,
  signIn,
  startPortalApp,
  waitForMail,
  type PortalApp,
} from '../portal/support.js';

const STARTS = '2026-11-29T22:00:00.000Z';
const ENDS = '2026-11-30T01:30:00.000Z';
const WHEN_PT = 'domingo, 29 de novembro, 19:00 (Horário Padrão de Brasília)';
const WHEN_EN = 'Sunday, 29 November, 19:00 (Brasilia Standard Time)';
const ISO_TIMESTAMP = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
/**
 * Words of the English mails that have no place in a Portuguese one, as `wordsOf` reads a text (the
 * pages' check): a generated name such as "Tenant tmwzpm6on5" holds no word "on".
 */
const ENGLISH = new Set(
  `hello invite invites invitation reminder confirm attendance entrance keep register open until valid
   your you ready erased expires deletion sign-in signed the and at on time standard coordinated
   sunday monday tuesday wednesday thursday friday saturday november december unknown`.split(/\s+/),
);

let app: PortalApp;
let org: Awaited<ReturnType<typeof integratorOf>>;
let seq = 0;

/** Subject (RFC 2047 words decoded) and body of a decoded message. */
function partsOf(mail: string): { subject: string; body: string } {
  const [head, ...rest] = mail.split(/\r?\n\r?\n/);
  const raw = /^Subject: (.*(?:\r?\n[ \t].*)*)/m.exec(head!)?.[1] ?? '';
  const subject = raw
    .replace(/\r?\n[ \t]/g, ' ')
    .replace(/=\?utf-8\?([QB])\?([^?]*)\?=\s*/gi, (_, enc: string, text: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(
            text
              .replace(/_/g, ' ')
              .replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
            'latin1',
          ).toString('utf8'),
    );
  return { subject, body: rest.join('\n\n') };
}

/** Each mail's subject and text a person reads (links and addresses left out): no ISO timestamp, no English. */
function expectPortuguese(mails: string[]) {
  for (const mail of mails) {
    const { subject, body } = partsOf(mail);
    const words = `${subject}\n${body}`.replace(/https?:\/\/\S+/g, '').replace(/\S+@\S+/g, '');
    expect(words, subject).not.toMatch(ISO_TIMESTAMP);
    expect(
      wordsOf(words).filter((w) => ENGLISH.has(w)),
      subject,
    ).toEqual([]);
  }
}

async function setDefaultLocale(tenantId: string, locale: string) {
  const res = await app.request('PATCH', `/v1/tenants/${tenantId}/settings`, {
    headers: org.headers,
    body: { defaultLocale: locale },
  });
  expect(res.status, res.text).toBe(200);
}

async function publishedEvent(branding: Record<string, unknown> = {}) {
  const created = await app.request('POST', '/v1/events', {
    headers: org.headers,
    body: {
      name: 'Noite de Gala',
      startsAt: STARTS,
      endsAt: ENDS,
      timeZone: 'America/Sao_Paulo',
      venue: { name: 'Teatro Municipal', address: 'Praça Ramos, São Paulo' },
      branding,
    },
  });
  expect(created.status, created.text).toBe(201);
  const published = await app.request('PATCH', `/v1/events/${created.body.id}/status`, {
    headers: org.headers,
    body: { status: 'published' },
  });
  expect(published.status, published.text).toBe(200);
  return created.body as { id: string; publicToken: string };
}

async function guestOf(eventId: string, name = 'Rita Lobo', email = `guest${++seq}@example.com`) {
  const res = await app.request('POST', `/v1/events/${eventId}/guests`, {
    headers: org.headers,
    body: { name, email },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; email: string; guestToken: string; checkinUrl: string };
}

async function invite(eventId: string, guestId: string, kind: 'invite' | 'reinvite' = 'invite') {
  const res = await app.request('POST', `/v1/events/${eventId}/guests/${kind}`, {
    headers: org.headers,
    body: { guestIds: [guestId] },
  });
  expect(res.status, res.text).toBe(200);
  expect(res.body.sent, res.text).toBe(1);
}

const invitation = (event: { publicToken: string }, guest: { guestToken: string }, headers = {}, q = '') =>
  app.request('GET', `/v1/events/${event.publicToken}/guests/${guest.guestToken}${q}`, { headers });

describe('guests in their language', () => {
  beforeAll(async () => {
    app = await startPortalApp();
    org = await integratorOf(app);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  it('keeps a tenant default locale: en at first, pt-BR once set, anything else 400', async () => {
    const other = await integratorOf(app);
    const read = await app.request('GET', `/v1/tenants/${other.tenantId}/settings`, {
      headers: other.headers,
    });
    expect(read.status, read.text).toBe(200);
    expect(read.body.defaultLocale).toBe('en');
    const refused = await app.request('PATCH', `/v1/tenants/${other.tenantId}/settings`, {
      headers: other.headers,
      body: { defaultLocale: 'fr' },
    });
    expect(refused.status).toBe(400);
    const set = await app.request('PATCH', `/v1/tenants/${other.tenantId}/settings`, {
      headers: other.headers,
      body: { defaultLocale: 'pt-BR' },
    });
    expect(set.status, set.text).toBe(200);
    expect(set.body.defaultLocale).toBe('pt-BR');
  });

  it('speaks the tenant default on an event without a language, whatever the browser says', async () => {
    await setDefaultLocale(org.tenantId, 'pt-BR');
    const event = await publishedEvent();
    const guest = await guestOf(event.id);
    const res = await invitation(event, guest, { 'accept-language': 'en-US,en;q=0.9' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.locale).toBe('pt-BR');
    expect(res.body.when).toBe(WHEN_PT);
    const tenant = await app.deps.db.prisma.tenant.findUniqueOrThrow({ where: { id: org.tenantId } });
    expect(res.body.organisation).toEqual({ name: tenant.name });
  });

  it("speaks the event's own language over the tenant's and the browser's; the page's ?lang= wins", async () => {
    await setDefaultLocale(org.tenantId, 'pt-BR');
    const event = await publishedEvent({ locale: 'en' });
    const guest = await guestOf(event.id);
    const res = await invitation(event, guest, { 'accept-language': 'pt-BR,pt;q=0.9' });
    expect(res.body.locale).toBe('en');
    expect(res.body.when).toBe(WHEN_EN);
    const chosen = await invitation(event, guest, {}, '?lang=pt-BR');
    expect(chosen.body.locale).toBe('pt-BR');
    expect(chosen.body.when).toBe(WHEN_PT);
  });

  it('tells the check-in landing whose link it is, for which event, in the event language; records nothing', async () => {
    await setDefaultLocale(org.tenantId, 'pt-BR');
    const event = await publishedEvent();
    const guest = await guestOf(event.id, 'Joana Prado');
    const token = guest.checkinUrl.split('/').pop()!;
    const res = await app.request('GET', `/v1/public/checkin/link/${token}/landing`, {
      headers: { 'accept-language': 'en' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      locale: 'pt-BR',
      guest: { displayName: 'Joana' },
      event: { name: 'Noite de Gala', when: WHEN_PT, venue: 'Teatro Municipal, Praça Ramos, São Paulo' },
    });
    const row = await app.deps.db.prisma.guest.findUniqueOrThrow({ where: { id: guest.id } });
    expect(row.checkedInAt).toBeNull();
    const unknown = await app.request('GET', `/v1/public/checkin/link/${'x'.repeat(32)}/landing`);
    expect(unknown.status).toBe(404);
  });

  it('serves the enrollment page in the saved language, then the browser’s, then the tenant default', async () => {
    await setDefaultLocale(org.tenantId, 'en');
    const email = `saved${++seq}@example.com`;
    const person = await app.request('POST', '/v1/persons', {
      headers: org.keyHeaders,
      body: { name: 'Ana Saved', email, document: `D${seq}A` },
    });
    expect(person.status, person.text).toBe(201);
    const tokenOf = async () => {
      const sent = await app.request('POST', `/v1/persons/${person.body.id}/send-enrollment-link`, {
        headers: org.keyHeaders,
      });
      expect(sent.status, sent.text).toBe(200);
      const mail = await waitForMail(app.smtp, email, /enroll\?token=/);
      return { mail, token: decodeURIComponent(/enroll\?token=(\S+)/.exec(mail)![1]!) };
    };
    const verify = (token: string, headers: Record<string, string> = {}) =>
      app.request('POST', '/v1/public/onboarding/verify-token', {
        headers,
        body: { enrollment_token: token },
      });

    const first = await tokenOf();
    expect(partsOf(first.mail).subject).toMatch(/^Register your face for check-in/);
    expect((await verify(first.token)).body.locale).toBe('en');
    expect((await verify(first.token, { 'accept-language': 'pt-BR' })).body.locale).toBe('pt-BR');

    // The person saves Portuguese in their data portal: it wins over the browser, and their mail follows.
    const { headers } = await signIn(app, email);
    const saved = await app.request('PATCH', '/v1/me/notification-preferences', {
      headers,
      body: { language: 'pt-BR' },
    });
    expect(saved.status, saved.text).toBe(200);
    const second = await tokenOf();
    expect(partsOf(second.mail).subject).toMatch(/^Cadastre seu rosto/);
    const verified = await verify(second.token, { 'accept-language': 'en' });
    expect(verified.body.locale).toBe('pt-BR');
    expect(verified.body.organisation.name).toMatch(/^Tenant /);
  });

  it('mails the invitation in the event language with the date written out in its time zone', async () => {
    await setDefaultLocale(org.tenantId, 'en');
    const pt = await publishedEvent({ locale: 'pt-BR' });
    const en = await publishedEvent();
    const ptGuest = await guestOf(pt.id, 'Rita Lobo');
    const enGuest = await guestOf(en.id, 'Mary Smith');
    await invite(pt.id, ptGuest.id);
    await invite(en.id, enGuest.id);
    const ptMail = partsOf(await waitForMail(app.smtp, ptGuest.email, /Noite de Gala/));
    const enMail = partsOf(await waitForMail(app.smtp, enGuest.email, /Noite de Gala/));
    expect(ptMail.subject).toBe('Convite: Noite de Gala');
    expect(ptMail.body).toContain(`Olá, Rita Lobo,`);
    expect(ptMail.body).toContain(WHEN_PT);
    expect(ptMail.body).toContain('em Teatro Municipal, Praça Ramos, São Paulo');
    expect(enMail.subject).toBe('Invitation: Noite de Gala');
    expect(enMail.body).toContain(WHEN_EN);
  });

  it('writes every mail a guest or person can get in pt-BR without an ISO timestamp or an English word', async () => {
    await setDefaultLocale(org.tenantId, 'pt-BR');
    const email = `todo${++seq}@example.com`;
    const mails: string[] = [];

    // Invitation and reminder.
    const event = await publishedEvent();
    const guest = await guestOf(event.id, 'Paula Reis', email);
    await invite(event.id, guest.id);
    mails.push(await waitForMail(app.smtp, email, /Convite: Noite de Gala/));
    // A reminder goes an hour after the invitation at the earliest: the invitation is made older.
    await app.deps.db.prisma.guest.update({
      where: { id: guest.id },
      data: { invitedAt: new Date(app.clock.now().getTime() - 61 * 60_000) },
    });
    await invite(event.id, guest.id, 'reinvite');
    mails.push(await waitForMail(app.smtp, email, /Lembrete: Noite de Gala/));

    // Enrollment link (tenant default, no saved language yet).
    const person = await app.request('POST', '/v1/persons', {
      headers: org.keyHeaders,
      body: { name: 'Paula Reis', email, document: `D${seq}P` },
    });
    expect(person.status, person.text).toBe(201);
    const sent = await app.request('POST', `/v1/persons/${person.body.id}/send-enrollment-link`, {
      headers: org.keyHeaders,
    });
    expect(sent.status, sent.text).toBe(200);
    mails.push(await waitForMail(app.smtp, email, /enroll\?token=/));

    // The portal's: sign-in link, sign-in alert, deletion confirmation, export ready.
    const requested = await app.request('POST', '/v1/portal/auth/magic-link', {
      body: { email, language: 'pt-BR' },
    });
    expect(requested.status, requested.text).toBe(202);
    mails.push(await waitForMail(app.smtp, email, /portal\/login\?token=/));
    const { headers } = await signIn(app, email);
    const prefs = await app.request('PATCH', '/v1/me/notification-preferences', {
      headers,
      body: { language: 'pt-BR', signInAlerts: true },
    });
    expect(prefs.status, prefs.text).toBe(200);
    await signIn(app, email);
    mails.push(await waitForMail(app.smtp, email, /Novo acesso/));
    const deletion = await app.request('POST', '/v1/me/deletion-request', { headers });
    expect(deletion.status, deletion.text).toBe(201);
    mails.push(await waitForMail(app.smtp, email, /portal\/delete\?token=/));
    const exported = await app.request('POST', '/v1/me/data-export', { headers, body: {} });
    expect(exported.status, exported.text).toBe(202);
    mails.push(await waitForMail(app.smtp, email, /portal\/data-exports/, 30_000));

    expect(mails).toHaveLength(7);
    expectPortuguese(mails);
    expect(decodeMail(mails[0]!)).toContain(WHEN_PT);
  }, 60_000);

  it('writes the team invitation and the password mails in pt-BR without an ISO timestamp or an English word', async () => {
    const mails: string[] = [];
    // A tenant of its own: the reset below ends its admin's sessions.
    const team = await integratorOf(app);
    // A team invitation, in the language the inviter's console sends.
    const invitee = `equipe${++seq}@example.com`;
    const invited = await app.request('POST', '/v1/team/members', {
      headers: team.headers,
      body: { email: invitee, role: 'operator', language: 'pt-BR' },
    });
    expect(invited.status, invited.text).toBe(201);
    mails.push(await waitForMail(app.smtp, invitee, /accept-invite\?token=/));
    // The admin's password reset: the mailed link, then the confirmation once it is used (in the
    // language the admin's console last signed in with).
    const email = team.tenant.adminEmail;
    const signedIn = await app.request('POST', '/v1/auth/login', {
      body: { email, password: PASSWORD, language: 'pt-BR' },
    });
    expect(signedIn.status, signedIn.text).toBe(200);
    const forgot = await app.request('POST', '/v1/auth/password/forgot', {
      body: { email, language: 'pt-BR' },
    });
    expect(forgot.status, forgot.text).toBe(202);
    const link = await waitForMail(app.smtp, email, /reset-password\?token=/);
    mails.push(link);
    const token = decodeURIComponent(/reset-password\?token=(\S+)/.exec(link)![1]!);
    const reset = await app.request('POST', '/v1/auth/password/reset', {
      body: { token, password: 'uma senha nova e longa 2026' },
    });
    expect(reset.status, reset.text).toBe(200);
    mails.push(await waitForMail(app.smtp, email, /senha/i, 15_000));
    expectPortuguese(mails);
  }, 60_000);

  it('writes the mails about a console account’s safety in pt-BR: recovery code used, MFA and password reset by the operator', async () => {
    const mails: string[] = [];
    const team = await integratorOf(app);
    const email = team.tenant.adminEmail;
    // The console signed in in Portuguese: its mails follow. MFA on, then a recovery code in its place.
    const first = await app.request('POST', '/v1/auth/login', {
      body: { email, password: PASSWORD, language: 'pt-BR' },
    });
    expect(first.status, first.text).toBe(200);
    const headers = bearer(first.body.accessToken);
    const setup = await app.request('POST', '/v1/auth/mfa/setup', { headers });
    const enabled = await app.request('POST', '/v1/auth/mfa/enable', {
      headers,
      body: { code: await totp(setup.body.secret, app.clock.now()) },
    });
    expect(enabled.status, enabled.text).toBe(200);
    app.clock.advance(30_000);
    const ticket = await app.request('POST', '/v1/auth/login', { body: { email, password: PASSWORD } });
    expect(ticket.body.mfaRequired, ticket.text).toBe(true);
    const recovered = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: ticket.body.mfaTicket, recoveryCode: enabled.body.recoveryCodes.codes[0] },
    });
    expect(recovered.status, recovered.text).toBe(200);
    mails.push(await waitForMail(app.smtp, email, /código\(s\) de recuperação/));
    // The operator's `pnpm portico user reset-mfa | reset-password` (the same functions, in process).
    await resetMfa(app.deps, email);
    mails.push(await waitForMail(app.smtp, email, /desativou a verificação em duas etapas/, 15_000));
    await resetPassword({ ...app.deps, publicUrl: PUBLIC_URL }, email);
    mails.push(await waitForMail(app.smtp, email, /iniciou a redefinição da senha/, 15_000));
    expectPortuguese(mails);
  }, 60_000);

  it('writes the self-registration confirmation in the tenant’s pt-BR, its end written out', async () => {
    const open = await integratorOf(app);
    const set = await app.request('PATCH', `/v1/tenants/${open.tenantId}/settings`, {
      headers: open.headers,
      body: { selfRegistration: 'open_verified', defaultLocale: 'pt-BR' },
    });
    expect(set.status, set.text).toBe(200);
    const { slug } = await app.deps.db.prisma.tenant.findUniqueOrThrow({ where: { id: open.tenantId } });
    const email = `cadastro${++seq}@example.com`;
    const registered = await app.request('POST', '/v1/public/onboarding/register', {
      body: { tenantSlug: slug, name: 'Davi Nunes', document: `D${seq}R`, email },
    });
    expect(registered.status, registered.text).toBe(202);
    const mail = await waitForMail(app.smtp, email, /enroll\?token=/);
    expect(partsOf(mail).subject).toMatch(/^Confirme seu cadastro em /);
    expect(decodeMail(mail)).toMatch(/vale até \p{L}+-feira|vale até (sábado|domingo)/u);
    expectPortuguese([mail]);
  });

  it('writes the self-registration confirmation in the browser’s language when the person saved none', async () => {
    const open = await integratorOf(app);
    const set = await app.request('PATCH', `/v1/tenants/${open.tenantId}/settings`, {
      headers: open.headers,
      body: { selfRegistration: 'open_verified', defaultLocale: 'en' },
    });
    expect(set.status, set.text).toBe(200);
    const { slug } = await app.deps.db.prisma.tenant.findUniqueOrThrow({ where: { id: open.tenantId } });
    const email = `navegador${++seq}@example.com`;
    const registered = await app.request('POST', '/v1/public/onboarding/register', {
      headers: { 'accept-language': 'pt-BR,pt;q=0.9,en;q=0.8' },
      body: { tenantSlug: slug, name: 'Davi Nunes', document: `D${seq}B`, email },
    });
    expect(registered.status, registered.text).toBe(202);
    const mail = await waitForMail(app.smtp, email, /enroll\?token=/);
    expect(partsOf(mail).subject).toMatch(/^Confirme seu cadastro em /);
    expectPortuguese([mail]);
  });

  it('serves a check-in QR code opened in a browser in the event’s language, its holder’s saved one, the browser’s, the tenant’s', async () => {
    await setDefaultLocale(org.tenantId, 'pt-BR');
    const email = `qr${++seq}@example.com`;
    const person = await app.request('POST', '/v1/persons', {
      headers: org.keyHeaders,
      body: { name: 'Caio Prado', email, document: `D${seq}Q` },
    });
    expect(person.status, person.text).toBe(201);
    const identityId = person.body.identityId as string;
    const qr = await app.request('GET', `/v1/checkin/identities/${identityId}/qr-token`, {
      headers: org.keyHeaders,
    });
    expect(qr.status, qr.text).toBe(201);
    const visit = async (token: string, headers: Record<string, string> = {}, query = '') => {
      const res = await app.request('GET', `/v1/public/checkin/qr/${token}${query}`, {
        headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8', ...headers },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      return res.text;
    };
    const PT = ['<html lang="pt-BR">', '<title>Código de check-in</title>', 'Este é um código de check-in'];
    const EN = ['<html lang="en">', '<title>Check-in code</title>', 'does not check you in'];
    const expectIn = (html: string, words: string[]) => {
      for (const w of words) expect(html).toContain(w);
    };

    expectIn(await visit(qr.body.token), PT); // the tenant's default
    expectIn(await visit(qr.body.token, { 'accept-language': 'en-GB,en;q=0.9' }), EN); // the browser's
    // The holder saves Portuguese in their data portal: it wins over the browser and the tenant's English.
    await setDefaultLocale(org.tenantId, 'en');
    const { headers } = await signIn(app, email);
    const saved = await app.request('PATCH', '/v1/me/notification-preferences', {
      headers,
      body: { language: 'pt-BR' },
    });
    expect(saved.status, saved.text).toBe(200);
    expectIn(await visit(qr.body.token, { 'accept-language': 'en' }), PT);
    // Read for an event: the event's own language first.
    const event = await publishedEvent({ locale: 'en' });
    expectIn(await visit(qr.body.token, { 'accept-language': 'pt-BR' }, `?eventId=${event.id}`), EN);
    // A code that names no one: the browser's language. No visit checked anyone in.
    expectIn(await visit('x'.repeat(43), { 'accept-language': 'pt-BR' }), PT);
    expect(await app.deps.db.prisma.checkIn.count({ where: { identityId } })).toBe(0);
  });

  it('names the calendar file after the event, in ASCII, whatever the language', async () => {
    await setDefaultLocale(org.tenantId, 'pt-BR');
    const fileOf = async (name: string) => {
      const created = await app.request('POST', '/v1/events', {
        headers: org.headers,
        body: { name, startsAt: STARTS, endsAt: ENDS, timeZone: 'America/Sao_Paulo' },
      });
      expect(created.status, created.text).toBe(201);
      const event = created.body as { id: string; publicToken: string };
      await app.request('PATCH', `/v1/events/${event.id}/status`, {
        headers: org.headers,
        body: { status: 'published' },
      });
      const view = await invitation(event, await guestOf(event.id));
      const res = await fetch(app.url + view.body.calendarUrl);
      expect(res.status).toBe(200);
      return res.headers.get('content-disposition');
    };
    expect(await fileOf('Noite de Gala')).toBe('attachment; filename="noite-de-gala.ics"');
    expect(await fileOf('  Sarau São João: 2ª edição!  ')).toBe(
      'attachment; filename="sarau-sao-joao-2a-edicao.ics"',
    );
    // Nothing of the name left in ASCII: the event's day where it takes place.
    expect(await fileOf('夜会')).toBe('attachment; filename="2026-11-29.ics"');
  });

  it('offers the invitation as a calendar file: the event in UTC, escaped text, CRLF, a UID per guest and event', async () => {
    await setDefaultLocale(org.tenantId, 'en');
    const created = await app.request('POST', '/v1/events', {
      headers: org.headers,
      body: {
        name: 'Gala; dinner, and\\dance',
        description: 'Doors at 18:30.\nBlack tie.',
        startsAt: STARTS,
        endsAt: ENDS,
        timeZone: 'America/Sao_Paulo',
        venue: { name: 'Teatro Municipal', address: 'Praça Ramos, São Paulo' },
      },
    });
    expect(created.status, created.text).toBe(201);
    const event = created.body as { id: string; publicToken: string };
    await app.request('PATCH', `/v1/events/${event.id}/status`, {
      headers: org.headers,
      body: { status: 'published' },
    });
    const guest = await guestOf(event.id);
    const other = await guestOf(event.id);
    const view = await invitation(event, guest);
    expect(view.body.calendarUrl).toBe(
      `/v1/events/${event.publicToken}/guests/${guest.guestToken}/calendar.ics`,
    );
    const res = await fetch(app.url + view.body.calendarUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    const ics = await res.text();
    // Every line ends in CRLF, none longer than 75 octets.
    expect(ics.endsWith('\r\n')).toBe(true);
    for (const line of ics.split('\r\n').slice(0, -1)) {
      expect(line).not.toMatch(/[\r\n]/);
      expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
    }
    const fields = parseIcs(ics);
    expect(fields.get('BEGIN')).toBe('VCALENDAR');
    expect(fields.get('VERSION')).toBe('2.0');
    expect(fields.get('DTSTART')).toBe('20261129T220000Z');
    expect(fields.get('DTEND')).toBe('20261130T013000Z');
    expect(fields.get('SUMMARY')).toBe('Gala; dinner, and\\dance');
    expect(fields.get('LOCATION')).toBe('Teatro Municipal, Praça Ramos, São Paulo');
    expect(fields.get('DESCRIPTION')).toContain('Doors at 18:30.\nBlack tie.');
    expect(fields.get('URL')).toBe(`${PUBLIC_URL}/e/${event.publicToken}/g/${guest.guestToken}`);
    // The raw text escapes what RFC 5545 says a TEXT value escapes.
    expect(unfold(ics)).toContain('SUMMARY:Gala\\; dinner\\, and\\\\dance');

    const again = parseIcs(await (await fetch(app.url + view.body.calendarUrl)).text());
    expect(again.get('UID')).toBe(fields.get('UID'));
    const otherView = await invitation(event, other);
    const otherIcs = parseIcs(await (await fetch(app.url + otherView.body.calendarUrl)).text());
    expect(otherIcs.get('UID')).not.toBe(fields.get('UID'));
    expect(fields.get('UID')).toMatch(/^[0-9a-f]{32}@portico\.example\.com$/);

    const unknown = await fetch(
      `${app.url}/v1/events/${event.publicToken}/guests/${'z'.repeat(32)}/calendar.ics`,
    );
    expect(unknown.status).toBe(404);
  });

  it('shows the QR ticket: a PNG of the guest’s own check-in link', async () => {
    const event = await publishedEvent();
    const guest = await guestOf(event.id);
    const view = await invitation(event, guest);
    expect(view.body.ticket.url).toBe(guest.checkinUrl);
    expect(view.body.ticket.qrCode).toMatch(/^data:image\/png;base64,/);
    const png = Buffer.from(view.body.ticket.qrCode.split(',')[1], 'base64');
    expect(png.subarray(1, 4).toString()).toBe('PNG');
  });
});

/** Content lines unfolded (a CRLF followed by a space joins the next line). */
function unfold(ics: string): string {
  return ics.replace(/\r\n /g, '');
}

/** name -> value of an iCalendar file, TEXT escapes undone (names repeated keep the first value). */
function parseIcs(ics: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of unfold(ics).split('\r\n').filter(Boolean)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).split(';')[0]!;
    const value = line
      .slice(colon + 1)
      .replace(/\\([\\;,nN])/g, (_, c: string) => (c === 'n' || c === 'N' ? '\n' : c));
    if (!fields.has(name)) fields.set(name, value);
  }
  return fields;
}
