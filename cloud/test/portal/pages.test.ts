// The person-facing pages driven in real Chromium on a phone-sized screen: self-enrollment with a fake
// camera fed by a real photo, the guest invitation, and the portal (sign-in by e-mailed link, data,
// biometric withdrawal, export, deletion and its confirmation), in English and Brazilian Portuguese.
// Screenshots go to test/portal/screenshots/.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FaceEngine } from '@portico/face-engine';
import { type Browser, type Page } from 'playwright-core';
import { cameraOf, HAS_CHROMIUM, launchChromium } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { cleanPhotos, HAS_MODELS, sharedFaceEngine } from '../support/faces.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp.js';
import { adminHeaders, PUBLIC_URL, tenantWithPerson, waitForMail } from './support.js';

// The committed screenshots are rewritten only when asked (UPDATE_SCREENSHOTS=1), so a test run leaves
// the working tree as it was; otherwise they go to a scratch folder.
const COMMITTED_SHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));
let SHOTS = COMMITTED_SHOTS;
const canRun = HAS_CHROMIUM && HAS_MODELS;

let app: TestApp & { smtp: SmtpSink };
let engine: FaceEngine;
let browser: Browser;
let scratch: string;
let camera: string;

/** The e-mailed link on this test server (mails carry PUBLIC_URL). */
const local = (link: string) => link.replace(PUBLIC_URL, app.url);

async function phone(lang: string): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 1,
    locale: lang,
    permissions: ['camera'],
  });
  const page = await context.newPage();
  page.on('dialog', (d) => void d.accept());
  return page;
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

describe.skipIf(!canRun)('person-facing pages in Chromium', () => {
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'portico-pages-'));
    if (process.env.UPDATE_SCREENSHOTS !== '1') SHOTS = path.join(scratch, 'screenshots');
    await mkdir(SHOTS, { recursive: true });
    const [photo] = await cleanPhotos();
    camera = await cameraOf(path.join(scratch, 'face.mjpeg'), photo!.bytes);
    const shared = await sharedFaceEngine(1);
    engine = shared.engine;
    const smtp = await startSmtpSink();
    app = Object.assign(await createTestApp({ face: shared.face, env: { SMTP_URL: smtp.url, PUBLIC_URL } }), {
      smtp,
    });
    browser = await launchChromium({ camera });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await app?.smtp.close();
    await engine?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const EMAIL = 'maria.pages@example.com';
  let org: Awaited<ReturnType<typeof tenantWithPerson>>;

  it('self-enrollment: the e-mailed link opens a page that enrolls the face from the camera and shows the quality', async () => {
    org = await tenantWithPerson(app, {
      name: 'Maria Pages',
      document: 'MP-1',
      email: EMAIL,
      birthDate: '1990-05-05',
    });
    const sent = await app.request('POST', `/v1/persons/${org.personId}/send-enrollment-link`, {
      headers: org.keyHeaders,
    });
    expect(sent.status, sent.text).toBe(200);
    const mail = await waitForMail(app.smtp, EMAIL, /enroll\?token=/);
    const link = local(/(https:\/\/\S+\/enroll\?token=\S+)/.exec(mail)![1]!);

    const pt = await phone('pt-BR');
    await pt.goto(`${link}&lang=pt-BR`);
    await pt.getByText('Cadastre seu rosto').waitFor();
    await shot(pt, 'enroll-start-pt-BR');
    await pt.context().close();

    const page = await phone('en');
    await page.goto(`${link}&lang=en`);
    await page.getByText('Register your face').waitFor();
    await page.check('#consent');
    await page.click('#use-camera');
    // The fake camera is playing once the video element knows its frame size.
    await expect
      .poll(() => page.locator('#camera').evaluate((video: { videoWidth: number }) => video.videoWidth))
      .toBeGreaterThan(0);
    await shot(page, 'enroll-camera-en');
    await page.click('#take-photo');
    await page.click('#submit');
    await page.locator('#result .quality').waitFor({ timeout: 30_000 });
    const text = await page.locator('#result').innerText();
    expect(text).toMatch(/Your face is registered \(quality 0\.\d\d\)/);
    await shot(page, 'enroll-done-en');
    await page.context().close();
    const person = await app.deps.db.prisma.person.findUniqueOrThrow({ where: { id: org.personId } });
    expect(person.enrolledAt).not.toBeNull();
  }, 60_000);

  it('invitation: the confirmation link shows the event’s branding in its language, confirms attendance and declines', async () => {
    const admin = await adminHeaders(app, org);
    const event = await app.request('POST', '/v1/events', {
      headers: admin,
      body: {
        name: 'Gala 2026',
        startsAt: '2026-12-12T22:00:00.000Z',
        timeZone: 'America/Sao_Paulo',
        venue: { name: 'Teatro Municipal', address: 'Praça Ramos de Azevedo, São Paulo' },
        branding: {
          displayName: 'Gala de Fim de Ano',
          primaryColor: '#7a1f5c',
          welcomeText: 'Uma noite para celebrar.',
          locale: 'pt-BR',
        },
      },
    });
    expect(event.status, event.text).toBe(201);
    const published = await app.request('PATCH', `/v1/events/${event.body.id}/status`, {
      headers: admin,
      body: { status: 'published' },
    });
    expect(published.status, published.text).toBe(200);
    const guest = await app.request('POST', `/v1/events/${event.body.id}/guests`, {
      headers: admin,
      body: { name: 'Maria Pages', email: EMAIL },
    });
    expect(guest.status, guest.text).toBe(201);

    const page = await phone('en');
    await page.goto(local(guest.body.confirmUrl));
    await page.getByText('Olá, Maria!').waitFor();
    await shot(page, 'invitation-pt-BR');
    await page.click('#confirm');
    await page.getByText('Sua presença está confirmada').waitFor();
    await shot(page, 'invitation-confirmed-pt-BR');
    const row = await app.deps.db.prisma.guest.findUniqueOrThrow({ where: { id: guest.body.id } });
    expect(row.status).toBe('confirmed');
    // Plans change: declining frees the place, and the page offers to confirm again.
    await page.click('#decline');
    await page.getByText('Você recusou este convite').waitFor();
    expect(await page.isVisible('#confirm')).toBe(true);
    await shot(page, 'invitation-declined-pt-BR');
    await page.context().close();
    const declined = await app.deps.db.prisma.guest.findUniqueOrThrow({ where: { id: guest.body.id } });
    expect(declined.status).toBe('declined');
  }, 60_000);

  it('check-in link: opening it in a browser records nothing; the tap on the landing page checks in', async () => {
    const admin = await adminHeaders(app, org);
    const event = await app.request('POST', '/v1/events', { headers: admin, body: { name: 'Open Day' } });
    expect(event.status, event.text).toBe(201);
    const setStatus = (status: string) =>
      app.request('PATCH', `/v1/events/${event.body.id}/status`, { headers: admin, body: { status } });
    expect((await setStatus('published')).status).toBe(200);
    const guest = await app.request('POST', `/v1/events/${event.body.id}/guests`, {
      headers: admin,
      body: { name: 'Rui Link' },
    });
    expect(guest.status, guest.text).toBe(201);
    const checkIns = () => app.deps.db.prisma.checkIn.count({ where: { guestId: guest.body.id } });

    const page = await phone('en');
    await page.goto(local(guest.body.checkinUrl));
    expect(new URL(page.url()).pathname).toMatch(/^\/c\//);
    await page.getByText('Check in now').waitFor();
    await shot(page, 'checkin-link-en');
    expect(await checkIns()).toBe(0);
    await page.click('#checkin');
    await page.getByText('The doors are not open yet').waitFor();
    expect(await checkIns()).toBe(0);
    expect((await setStatus('open')).status).toBe(200);
    await page.click('#checkin');
    await page.getByText('Welcome, Rui! You are checked in at Open Day.').waitFor();
    await shot(page, 'checkin-link-done-en');
    await page.context().close();
    expect(await checkIns()).toBe(1);
  }, 60_000);

  it('portal: sign in by the e-mailed link, see data, withdraw biometrics, export, ask for and confirm deletion', async () => {
    const admin = await adminHeaders(app, org);
    await app.request('POST', '/v1/checkin/manual', { headers: admin, body: { personId: org.personId } });

    const page = await phone('pt-BR');
    await page.goto(`${app.url}/portal?lang=pt-BR`);
    await page.fill('#email', EMAIL);
    await page.click('#send-link');
    await page.getByText('link de acesso está a caminho').waitFor();
    await shot(page, 'portal-sign-in-pt-BR');
    const mail = await waitForMail(app.smtp, EMAIL, /portal\/login\?token=/);
    await page.goto(local(/(https:\/\/\S+\/portal\/login\?token=\S+)/.exec(mail)![1]!));
    await page.locator('#biometrics').waitFor();
    const tenant = await app.deps.db.prisma.tenant.findUniqueOrThrow({ where: { id: org.tenantId } });
    expect(await page.locator('#profile').innerText()).toContain(tenant.name);
    expect(await page.locator('#checkins li').count()).toBe(1);
    await shot(page, 'portal-pt-BR');

    await page.goto(`${app.url}/portal?lang=en`);
    await page.locator('#biometrics').waitFor();
    await shot(page, 'portal-en');
    await page.click('#biometrics button.danger');
    await page.getByText(/Erased at .*: 1 template\(s\), 1 image\(s\)/).waitFor();
    await shot(page, 'portal-revoked-en');
    expect(await app.deps.db.prisma.faceTemplate.count({ where: { personId: org.personId } })).toBe(0);

    await page.check('#include-images');
    await page.click('#export');
    await page.getByText('Your export is being prepared').waitFor();
    await waitForMail(app.smtp, EMAIL, /Your data export is ready/);

    await page.click('#request-delete');
    await page.getByText('Check your e-mail to confirm the deletion').waitFor();
    await shot(page, 'portal-deletion-requested-en');
    const confirmMail = await waitForMail(app.smtp, EMAIL, /Confirm the deletion/);
    const confirmLink = local(/(https:\/\/\S+\/portal\/delete\?token=\S+)/.exec(confirmMail)![1]!);
    await page.goto(confirmLink);
    await page.click('#confirm-delete');
    await page.getByText(/Confirmed\. Your data will be erased on/).waitFor();
    await shot(page, 'portal-deletion-confirmed-en');
    await page.context().close();
    const request = await app.deps.db.prisma.deletionRequest.findFirstOrThrow({
      orderBy: { requestedAt: 'desc' },
    });
    expect(request.status).toBe('confirmed');
  }, 60_000);
});
