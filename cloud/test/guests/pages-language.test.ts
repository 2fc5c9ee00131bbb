// The person-facing pages read in Brazilian Portuguese in real Chromium on a phone: the invitation, the
// check-in landing, self-enrollment and the person portal (sign-in, every section once signed in, an
// organisation that holds only guest entries, the deletion confirmation), each in the states a person
// meets (answers, refusals, invalid links). No text, label, alt text or dialog holds a word of the pages'
// English dictionary that their Portuguese says differently; the same check finds English on the
// English pages.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integratorOf } from '../persons/support.js';
import { cameraOf, HAS_CHROMIUM, launchChromium } from '../support/chromium.js';
import { facelessPng } from '../support/faces.js';
import { englishIn, englishOnlyWords, textsOn } from '../support/page-language.js';
import {
  enrollDirectly,
  fakeJpeg,
  PUBLIC_URL,
  startPortalApp,
  waitForMail,
  type PortalApp,
} from '../portal/support.js';

type Dictionary = Record<'en' | 'pt-BR', Record<string, string>>;
// The pages' own dictionary, as the browser loads it (a plain ES module of the pages).
const { TEXTS } = (await import(
  new URL('../../src/modules/pages/assets/texts.js', import.meta.url).href
)) as { TEXTS: Dictionary };
const ENGLISH = englishOnlyWords(TEXTS.en, TEXTS['pt-BR']);

/**
 * A service code (`internal_error`) read as a word of a sentence: a page shows one only in a `code`
 * element, which the reader leaves out (it is in no language).
 */
const RAW_CODE = /\b[a-z]+(?:_[a-z0-9]+)+\b/;

const EMAIL = 'beatriz.lima@example.com';
const GUEST_ONLY = 'lia.convidada@example.com';

let app: PortalApp;
let browser: Browser;
let scratch: string;
type Org = Awaited<ReturnType<typeof integratorOf>>;
let aurora: Org;
let feira: Org;

/** A tenant with a Portuguese name that speaks pt-BR to its guests and persons. */
async function portugueseTenant(name: string): Promise<Org> {
  const org = await integratorOf(app);
  await app.deps.db.prisma.tenant.update({ where: { id: org.tenantId }, data: { name } });
  const set = await app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
    headers: org.headers,
    body: { defaultLocale: 'pt-BR' },
  });
  expect(set.status, set.text).toBe(200);
  return org;
}

/** An event of `org` moved through `statuses` (e.g. published, open). */
async function eventOf(org: Org, body: Record<string, unknown>, statuses: string[] = ['published']) {
  const created = await app.request('POST', '/v1/events', {
    headers: org.headers,
    body: {
      startsAt: '2026-11-29T22:00:00.000Z',
      endsAt: '2026-11-30T01:30:00.000Z',
      timeZone: 'America/Sao_Paulo',
      venue: { name: 'Teatro Municipal', address: 'Praça Ramos de Azevedo, São Paulo' },
      ...body,
    },
  });
  expect(created.status, created.text).toBe(201);
  await setStatus(org, created.body.id, ...statuses);
  return created.body as { id: string; publicToken: string };
}

async function setStatus(org: Org, eventId: string, ...statuses: string[]) {
  for (const status of statuses) {
    const res = await app.request('PATCH', `/v1/events/${eventId}/status`, {
      headers: org.headers,
      body: { status },
    });
    expect(res.status, res.text).toBe(200);
  }
}

async function guestOf(org: Org, eventId: string, name: string, email?: string) {
  const res = await app.request('POST', `/v1/events/${eventId}/guests`, {
    headers: org.headers,
    body: { name, ...(email ? { email } : {}) },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; guestToken: string; confirmUrl: string; checkinUrl: string };
}

async function manualCheckin(org: Org, eventId: string, guestId: string) {
  const res = await app.request('POST', '/v1/checkin/manual', {
    headers: org.headers,
    body: { guestId, eventId },
  });
  expect(res.status, res.text).toBe(200);
}

let documents = 0;

/** A person of `org` and their check-in QR code (its link is what a phone opens when it scans it). */
async function qrCodeOf(org: Org, name: string) {
  const person = await app.request('POST', '/v1/persons', {
    headers: org.keyHeaders,
    body: { name, document: `QR-${++documents}` },
  });
  expect(person.status, person.text).toBe(201);
  const identityId = person.body.identityId as string;
  const qr = await app.request('GET', `/v1/checkin/identities/${identityId}/qr-token`, {
    headers: org.keyHeaders,
  });
  expect(qr.status, qr.text).toBe(201);
  return { identityId, url: qr.body.url as string };
}

/** The e-mailed link on this test server (mails carry PUBLIC_URL). */
const local = (link: string) => link.replace(PUBLIC_URL, app.url);

/**
 * A phone in `locale`; what it reads goes through `read(state)`, which keeps the English it finds
 * (dialogs included) under that state's name in `english`.
 */
async function phone(locale: string) {
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 1,
    locale,
    permissions: ['camera'],
  });
  const page = await context.newPage();
  const dialogs: string[] = [];
  const csp: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.accept();
  });
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) csp.push(m.text());
  });
  const english: Record<string, string[]> = {};
  const read = async (state: string) => {
    const texts = [...(await textsOn(page)), ...dialogs.splice(0)];
    const left = [...englishIn(texts, ENGLISH), ...texts.filter((text) => RAW_CODE.test(text))];
    if (left.length) english[state] = left;
  };
  return { page, read, english, csp };
}

/** Waits until `selector`'s text is no longer `before` (a page's answer replaced what it showed). */
const changed = (page: Page, selector: string, before: string) =>
  expect.poll(() => page.locator(selector).innerText(), { timeout: 10_000 }).not.toBe(before);

describe.skipIf(!HAS_CHROMIUM)('person-facing pages in Portuguese, in Chromium', () => {
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'portico-pages-language-'));
    app = await startPortalApp();
    aurora = await portugueseTenant('Associação Cultural Aurora');
    feira = await portugueseTenant('Feira do Livro de Olinda');
    browser = await launchChromium({
      camera: await cameraOf(path.join(scratch, 'grey.mjpeg'), await facelessPng()),
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('has a Portuguese text for every English one, and English words to look for', () => {
    expect(Object.keys(TEXTS['pt-BR']).sort()).toEqual(Object.keys(TEXTS.en).sort());
    for (const word of ['invitation', 'confirm', 'your', 'sign-in', 'photo', 'erased']) {
      expect(ENGLISH.has(word), word).toBe(true);
    }
    // Words both languages use are not English left behind.
    for (const word of ['check-in', 'link', 'e-mail', 'qr']) expect(ENGLISH.has(word), word).toBe(false);
  });

  it('reads the invitation in Portuguese: open, confirmed, declined, full, closed, checked in, invalid', async () => {
    const gala = await eventOf(aurora, { name: 'Noite de Gala' });
    const rita = await guestOf(aurora, gala.id, 'Rita Lobo', 'rita@example.com');
    const { page, read, english, csp } = await phone('pt-BR');
    await page.goto(local(rita.confirmUrl));
    await page.locator('#ticket-qr').waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('pt-BR');
    expect(await page.title()).toBe('Convite — Noite de Gala');
    await read('invitation');
    // The calendar file is named after the event, not "invitation.ics".
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#add-to-calendar')]);
    expect(download.suggestedFilename()).toBe('noite-de-gala.ics');
    await page.click('#confirm');
    await page.locator('#status .notice').waitFor();
    await read('confirmed');
    await page.click('#decline');
    await page.locator('#decline').waitFor({ state: 'hidden' });
    await read('declined');

    // One place, taken by another guest.
    const full = await eventOf(aurora, { name: 'Sarau Lotado', capacity: 1 });
    const first = await guestOf(aurora, full.id, 'Caio Prado');
    const taken = await app.request(
      'PATCH',
      `/v1/events/${full.publicToken}/guests/${first.guestToken}/confirm`,
    );
    expect(taken.status, taken.text).toBe(200);
    const late = await guestOf(aurora, full.id, 'Rita Lobo');
    await page.goto(local(late.confirmUrl));
    await page.click('#confirm');
    await page.locator('#status .notice').waitFor();
    await read('event full');

    const closed = await eventOf(aurora, { name: 'Sarau Encerrado' }, ['published', 'open', 'closed']);
    const after = await guestOf(aurora, closed.id, 'Rita Lobo');
    await page.goto(local(after.confirmUrl));
    await page.click('#confirm');
    await page.locator('#status .notice').waitFor();
    await read('event closed');

    const open = await eventOf(aurora, { name: 'Noite Aberta' }, ['published', 'open']);
    const inside = await guestOf(aurora, open.id, 'Rita Lobo');
    await manualCheckin(aurora, open.id, inside.id);
    await page.goto(local(inside.confirmUrl));
    await page.locator('#status .notice').waitFor();
    await read('checked in');

    await page.goto(`${app.url}/e/${gala.publicToken}/g/${'z'.repeat(32)}`);
    await page.locator('.notice.error').waitFor();
    await read('invalid link');
    await page.context().close();
    expect(english).toEqual({});
    expect(csp).toEqual([]);
  }, 90_000);

  it('reads the check-in landing in Portuguese: before the doors open, checked in, again, refused, invalid', async () => {
    const show = await eventOf(aurora, { name: 'Noite de Jazz', capacity: 1 });
    const joana = await guestOf(aurora, show.id, 'Joana Prado');
    const { page, read, english, csp } = await phone('pt-BR');
    await page.goto(local(joana.checkinUrl));
    await page.locator('#checkin').waitFor();
    await read('landing');
    await page.click('#checkin');
    await page.locator('#status .notice').waitFor();
    await read('doors not open');
    await setStatus(aurora, show.id, 'open');
    await page.click('#checkin');
    await page.locator('#checkin').waitFor({ state: 'hidden' });
    await read('checked in');
    await page.reload();
    await page.click('#checkin');
    await page.locator('#checkin').waitFor({ state: 'hidden' });
    await read('already checked in');

    // The one place is taken: the next guest is refused, and told why in words.
    const pedro = await guestOf(aurora, show.id, 'Pedro Alves');
    await page.goto(local(pedro.checkinUrl));
    await page.click('#checkin');
    await page.locator('#status .notice.error').waitFor();
    expect(await page.locator('#status').innerText()).toContain('o evento está lotado');
    await read('refused');

    await page.goto(`${app.url}/c/${'x'.repeat(32)}`);
    await page.locator('.notice.error').waitFor();
    await read('invalid link');
    await page.context().close();
    expect(english).toEqual({});
    expect(csp).toEqual([]);
  }, 60_000);

  it('reads self-enrollment in Portuguese: the steps, the photos, every answer of the service, an invalid link', async () => {
    const person = await app.request('POST', '/v1/persons', {
      headers: aurora.keyHeaders,
      body: { name: 'Marta Rocha', document: 'MR-1', email: 'marta@example.com', birthDate: '1990-05-05' },
    });
    expect(person.status, person.text).toBe(201);
    const sent = await app.request('POST', `/v1/persons/${person.body.id}/send-enrollment-link`, {
      headers: aurora.keyHeaders,
    });
    expect(sent.status, sent.text).toBe(200);
    const mail = await waitForMail(app.smtp, 'marta@example.com', /enroll\?token=/);
    const { page, read, english, csp } = await phone('pt-BR');
    await page.goto(local(/(https:\/\/\S+\/enroll\?token=\S+)/.exec(mail)![1]!));
    await page.locator('#use-camera').waitFor();
    await read('start');

    // Three guided camera photos.
    await page.click('#use-camera');
    await page.locator('#camera-box').waitFor();
    await expect
      .poll(() => page.locator('#camera').evaluate((video: { videoWidth: number }) => video.videoWidth))
      .toBeGreaterThan(0);
    await read('camera, photo 1');
    await page.click('#take-photo');
    await read('camera, photo 2');
    await page.click('#take-photo');
    await page.click('#take-photo');
    await page.locator('#camera-box').waitFor({ state: 'hidden' });
    await read('three photos');
    await page.click('#submit');
    await page.locator('#result .notice').waitFor();
    await read('consent missing');
    await page.check('#consent');

    // The service's own answer (no face engine in this app), then every other answer it can give.
    const sendAndRead = async (state: string) => {
      const before = await page.locator('#result').innerText();
      await page.click('#submit');
      await changed(page, '#result', before);
      await page.locator('#result .notice').waitFor();
      await read(state);
    };
    await sendAndRead('engine unavailable');
    const answers: [string, number, Record<string, unknown>][] = [
      ['face_quality_too_low', 422, { quality: 0.31, required: 0.5, photo: 1 }],
      ['photos_differ', 422, { photos: [0, 2] }],
      ['no_face_detected', 422, {}],
      ['unsupported_image', 400, {}],
      ['image_too_large', 413, {}],
      ['payload_too_large', 413, {}],
      ['duplicate_face', 409, {}],
      ['guardian_consent_required', 403, {}],
      ['birth_date_required', 403, {}],
      ['age_below_minimum', 403, {}],
      ['token_expired', 400, {}],
      ['internal_error', 500, {}],
    ];
    for (const [code, status, extra] of answers) {
      await page.route('**/v1/public/onboarding/enroll', (route) =>
        route.fulfill({ status, json: { code, message: code, ...extra } }),
      );
      await sendAndRead(code);
      // A failure the page has no words for: said in words, its code apart for support staff.
      if (status === 500) {
        expect(await page.locator('#result .notice').innerText()).toContain('Algo deu errado.');
        expect(await page.locator('#result .notice code').innerText()).toBe(code);
      }
      await page.unroute('**/v1/public/onboarding/enroll');
      // From then on the page asks for the guardian's consent too.
      if (code === 'guardian_consent_required') await page.check('#guardian');
    }
    // One photo instead of three; then photos chosen as files (one too many), refused together.
    await page.click('#one-photo');
    await read('one photo');
    const png = await facelessPng();
    await page.setInputFiles(
      '#file',
      [1, 2, 3, 4].map((n) => ({ name: `foto-${n}.png`, mimeType: 'image/png', buffer: png })),
    );
    await expect.poll(() => page.locator('#thumbs li').count()).toBe(3);
    await read('files');
    await page.route('**/v1/public/onboarding/enroll', (route) =>
      route.fulfill({ status: 422, json: { code: 'photos_differ', message: 'x', photos: [0, 1] } }),
    );
    await sendAndRead('files refused');
    await page.unroute('**/v1/public/onboarding/enroll');
    await page.route('**/v1/public/onboarding/enroll', (route) =>
      route.fulfill({ status: 200, json: { enrolled: true, quality: 0.87, photos: 3 } }),
    );
    await sendAndRead('enrolled');
    // Numbers as Portuguese writes them, too.
    expect(await page.locator('#result').innerText()).toContain('(qualidade 0,87)');

    await page.goto(`${app.url}/enroll?token=et_${'x'.repeat(40)}`);
    await page.locator('.notice.error').waitFor();
    await read('invalid link');
    await page.context().close();
    expect(english).toEqual({});
    expect(csp).toEqual([]);
  }, 90_000);

  it('reads the portal in Portuguese: sign-in, every section, a guest-only organisation, withdrawal, export, deletion', async () => {
    // Beatriz: a person of Aurora (face enrolled, checked in by staff) and only a guest of the Feira.
    const beatriz = await app.request('POST', '/v1/persons', {
      headers: aurora.keyHeaders,
      body: { name: 'Beatriz Lima', document: 'BL-1', email: EMAIL },
    });
    expect(beatriz.status, beatriz.text).toBe(201);
    await enrollDirectly(app, aurora.tenantId, beatriz.body.id, fakeJpeg());
    const checked = await app.request('POST', '/v1/checkin/manual', {
      headers: aurora.headers,
      body: { personId: beatriz.body.id },
    });
    expect(checked.status, checked.text).toBe(200);
    // At the Feira: on the lists of events in every guest status, one without a date, one checked in.
    for (const [name, email] of [
      ['Beatriz Lima', EMAIL],
      ['Lia Convidada', GUEST_ONLY],
    ] as const) {
      const there = await eventOf(feira, { name: 'Lançamento' }, ['published', 'open']);
      const guest = await guestOf(feira, there.id, name, email);
      await manualCheckin(feira, there.id, guest.id);
      const talk = await eventOf(feira, { name: 'Roda de Conversa', startsAt: undefined, endsAt: undefined });
      await guestOf(feira, talk.id, name, email);
      const invited = await eventOf(feira, { name: 'Oficina de Poesia' });
      const onList = await guestOf(feira, invited.id, name, email);
      const sent = await app.request('POST', `/v1/events/${invited.id}/guests/invite`, {
        headers: feira.headers,
        body: { guestIds: [onList.id] },
      });
      expect(sent.status, sent.text).toBe(200);
      for (const [answer, session] of [
        ['confirm', 'Sessão da Manhã'],
        ['decline', 'Sessão da Tarde'],
      ] as const) {
        const answered = await eventOf(feira, { name: session });
        const g = await guestOf(feira, answered.id, name, email);
        const res = await app.request(
          'PATCH',
          `/v1/events/${answered.publicToken}/guests/${g.guestToken}/${answer}`,
        );
        expect(res.status, res.text).toBe(200);
      }
    }
    await app.deps.db.prisma.rateLimitBucket.deleteMany({ where: { key: { startsWith: 'portal-link:' } } });

    const { page, read, english, csp } = await phone('pt-BR');
    await page.goto(`${app.url}/portal/login?token=ml_${'x'.repeat(40)}`);
    await page.locator('.notice.error').waitFor();
    await read('sign-in, link not valid');
    await page.fill('#email', EMAIL);
    await page.click('#send-link');
    await page.locator('.notice.ok').waitFor();
    await read('sign-in, link sent');
    const mail = await waitForMail(app.smtp, EMAIL, /portal\/login\?token=/);
    await page.goto(local(/(https:\/\/\S+\/portal\/login\?token=\S+)/.exec(mail)![1]!));
    await page.locator('#organisations article.org').first().waitFor();
    expect(await page.locator('#organisations article.org').count()).toBe(2);
    expect(await page.locator('#biometrics').innerText()).toContain('(qualidade 0,87)');
    await read('signed in');

    await page.click('#biometrics button.danger');
    await page.locator('#bio-status .notice').waitFor();
    await read('face erased');
    await page.click('#export');
    await page.locator('#rights .notice').waitFor();
    await read('export');
    await page.click('#request-delete');
    await page.locator('#deletion-note .notice').waitFor();
    await read('deletion requested');
    const confirmMail = await waitForMail(app.smtp, EMAIL, /portal\/delete\?token=/);
    const confirmLink = local(/(https:\/\/\S+\/portal\/delete\?token=\S+)/.exec(confirmMail)![1]!);
    await page.goto(confirmLink);
    await page.locator('#confirm-delete').waitFor();
    await read('deletion confirmation');
    await page.click('#confirm-delete');
    await page.locator('.notice').waitFor();
    await read('deletion confirmed');
    await page.goto(confirmLink);
    await page.click('#confirm-delete');
    await page.locator('.notice.error').waitFor();
    await read('deletion link used');
    await page.goto(`${app.url}/portal`);
    await page.locator('#deletion-status').waitFor();
    await read('deletion scheduled');
    await page.click('#sign-out');
    await page.locator('#send-link').waitFor();
    await read('signed out');
    await page.context().close();

    // An address held only on guest lists: no record, no face, its guest entries and check-ins.
    const lia = await phone('pt-BR');
    await lia.page.goto(`${app.url}/portal`);
    await lia.page.fill('#email', GUEST_ONLY);
    await lia.page.click('#send-link');
    const liaMail = await waitForMail(app.smtp, GUEST_ONLY, /portal\/login\?token=/);
    await lia.page.goto(local(/(https:\/\/\S+\/portal\/login\?token=\S+)/.exec(liaMail)![1]!));
    await lia.page.locator('#organisations article.org').first().waitFor();
    expect(await lia.page.locator('#organisations').innerText()).toContain('Sem cadastro pessoal');
    await lia.read('guest only');
    await lia.page.context().close();

    expect({ ...english, ...lia.english }).toEqual({});
    expect([...csp, ...lia.csp]).toEqual([]);
  }, 120_000);

  it('reads a check-in QR code opened in a browser in Portuguese; the visit checks no one in', async () => {
    const qr = await qrCodeOf(aurora, 'Caio Prado');
    const { page, read, english, csp } = await phone('pt-BR');
    await page.goto(local(qr.url));
    await page.locator('h1').waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('pt-BR');
    expect(await page.title()).toBe('Código de check-in');
    expect(await page.locator('main').innerText()).toContain('Este é um código de check-in');
    await read('QR code');
    await page.context().close();
    expect(english).toEqual({});
    expect(csp).toEqual([]);
    expect(await app.deps.db.prisma.checkIn.count({ where: { identityId: qr.identityId } })).toBe(0);
  }, 60_000);

  it('serves each page in its language and titled before its script runs: invitation, landing, enrollment, portal', async () => {
    /** The `<html lang>` and `<title>` of the HTML as served, no script run. */
    const headOf = async (url: string, acceptLanguage: string) => {
      const res = await fetch(url, { headers: { accept: 'text/html', 'accept-language': acceptLanguage } });
      expect(res.status, url).toBe(200);
      const html = await res.text();
      return {
        lang: /<html lang="([^"]*)">/.exec(html)?.[1],
        title: /<title>([^<]*)<\/title>/.exec(html)?.[1],
      };
    };
    const gala = await eventOf(aurora, { name: 'Noite de Gala' });
    const rita = await guestOf(aurora, gala.id, 'Rita Lobo', 'rita.lobo@example.com');
    // The tenant's pt-BR (the event has no language of its own) over an English browser; the page's ?lang=.
    expect(await headOf(local(rita.confirmUrl), 'en-US,en;q=0.9')).toEqual({
      lang: 'pt-BR',
      title: 'Convite — Noite de Gala',
    });
    expect(await headOf(`${local(rita.confirmUrl)}?lang=en`, 'pt-BR')).toEqual({
      lang: 'en',
      title: 'Invitation — Noite de Gala',
    });
    expect(await headOf(local(rita.checkinUrl), 'en')).toEqual({
      lang: 'pt-BR',
      title: 'Check-in — Noite de Gala',
    });
    // Enrollment has no event: the person's saved language (none here), the browser's, the tenant's.
    const person = await app.request('POST', '/v1/persons', {
      headers: aurora.keyHeaders,
      body: { name: 'Otávio Reis', document: 'OR-1', email: 'otavio@example.com' },
    });
    expect(person.status, person.text).toBe(201);
    const sent = await app.request('POST', `/v1/persons/${person.body.id}/send-enrollment-link`, {
      headers: aurora.keyHeaders,
    });
    expect(sent.status, sent.text).toBe(200);
    const mail = await waitForMail(app.smtp, 'otavio@example.com', /enroll\?token=/);
    const enroll = local(/(https:\/\/\S+\/enroll\?token=\S+)/.exec(mail)![1]!);
    expect(await headOf(enroll, 'pt-BR')).toEqual({
      lang: 'pt-BR',
      title: 'Cadastre seu rosto — Associação Cultural Aurora',
    });
    expect(await headOf(enroll, 'en')).toEqual({
      lang: 'en',
      title: 'Register your face — Associação Cultural Aurora',
    });
    // The portal speaks for no one organisation: the browser's language.
    expect(await headOf(`${app.url}/portal`, 'pt-BR,pt;q=0.9')).toEqual({
      lang: 'pt-BR',
      title: 'Meus dados',
    });
    expect(await headOf(`${app.url}/portal`, 'en')).toEqual({ lang: 'en', title: 'My data' });
    expect(await headOf(`${app.url}/portal/delete?token=dl_x`, 'pt-BR')).toEqual({
      lang: 'pt-BR',
      title: 'Confirme a exclusão',
    });
    // A link that names no one: the browser's language, no event to name.
    expect(await headOf(`${app.url}/c/${'x'.repeat(32)}`, 'pt-BR')).toEqual({
      lang: 'pt-BR',
      title: 'Check-in',
    });
    expect(await headOf(`${app.url}/e/${gala.publicToken}/g/${'z'.repeat(32)}`, 'en')).toEqual({
      lang: 'en',
      title: 'Invitation',
    });
  });

  it('finds English on the same pages in English (the check can fail)', async () => {
    const { page, read, english } = await phone('en');
    await page.goto(`${app.url}/portal?lang=en`);
    await page.locator('#send-link').waitFor();
    await read('portal sign-in');
    const gala = await eventOf(aurora, { name: 'Noite de Gala' });
    const rita = await guestOf(aurora, gala.id, 'Rita Lobo');
    await page.goto(`${local(rita.confirmUrl)}?lang=en`);
    await page.locator('#ticket-qr').waitFor();
    await read('invitation');
    // The QR code's page: no event, no saved language: the browser's English before the tenant's pt-BR.
    await page.goto(local((await qrCodeOf(aurora, 'Caio Prado')).url));
    await page.locator('h1').waitFor();
    await read('QR code');
    await page.context().close();
    expect(Object.keys(english)).toEqual(['portal sign-in', 'invitation', 'QR code']);
    expect(english['invitation']!.length).toBeGreaterThan(5);
  }, 60_000);
});
