// The tenant admin console (/console) driven in real Chromium against the real cloud: sign-in with a
// TOTP code, an event created and its guests imported from a file, persons enrolled from real photos
// (three guided fake-webcam photos, one-photo fallback, one to three files, a refusal naming the photos)
// with each photo's quality shown first, a check-in made through the API appearing live,
// an API key shown once, the webhook URL with a test delivery in the log, and every page in English and
// Brazilian Portuguese on a laptop and a tablet screen. Screenshots go to test/console/screenshots/
// (taken only with UPDATE_SCREENSHOTS=1).
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FaceEngine } from '@portico/face-engine';
import { type Browser, type Page } from 'playwright-core';
import { cameraOf, HAS_CHROMIUM, launchChromium } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import {
  cleanPhotos,
  HAS_LABELLED,
  HAS_MODELS,
  LABELLED_DIR,
  LABELLED_SKIP_REASON,
  sharedFaceEngine,
  type Photo,
} from '../support/faces.js';
import { bearer, loggedInUser, newTenant, PASSWORD, ShiftedClock, totpCodes } from '../support/identity.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { waitForMail } from '../portal/support.js';
import { goTo, LAPTOP, newConsolePage, shot, TABLET } from './support.js';

const INTERNAL_SECRET = 'console-tests-internal-secret-0123456789';
const canRun = HAS_CHROMIUM && HAS_MODELS;

let app: TestApp;
let engine: FaceEngine;
let browser: Browser;
let scratch: string;
let receiver: WebhookReceiver;
let smtp: SmtpSink;
let photos: Photo[];
let page: Page;
/** A second signed-in browser (the Portuguese one), kept for the last test. */
let second: Page;
const cspViolations: string[] = [];
const org = { email: '', headers: {} as Record<string, string>, tenantId: '' };

const newPage = (locale: string, viewport = LAPTOP) =>
  newConsolePage(browser, locale, cspViolations, viewport);

/** The owner's next TOTP code, never one used before (set once MFA is on, in beforeAll). */
let nextCode: () => Promise<string>;
/** The service's clock: the TOTP steps the owner's codes need are taken, not waited for. */
const clock = new ShiftedClock();

/** Signs in through the form, answering the TOTP step. */
async function signIn(p: Page) {
  await p.goto(`${app.url}/console`);
  await p.fill('#email', org.email);
  await p.fill('#password', PASSWORD);
  await p.click('button[type=submit]');
  await p.locator('#mfa-code').waitFor();
  await p.fill('#mfa-code', await nextCode());
  await p.click('button[type=submit]');
  await p.locator('nav[aria-label=Console]').waitFor({ state: 'attached' });
}

const go = (p: Page, hash: string) => goTo(p, app.url, hash);

/** The fake webcam is playing once the video element knows its frame size. */
const webcamPlaying = (p: Page) =>
  expect
    .poll(() => p.locator('#webcam').evaluate((v: { videoWidth: number }) => v.videoWidth))
    .toBeGreaterThan(0);

/** Clicks Save and answers the service's reply to the enrollment call at `path`. */
async function saveAndRead(
  p: Page,
  route: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const [response] = await Promise.all([
    p.waitForResponse((r) => new URL(r.url()).pathname === route && r.request().method() === 'POST', {
      timeout: 30_000,
    }),
    p.click('#save-person'),
  ]);
  return { status: response.status(), body: (await response.json()) as Record<string, unknown> };
}

/** The first `count` photos (sorted) of a labelled identity folder of ../shared/faces, as paths. */
function labelledPhotos(rel: string, count: number): string[] {
  return readdirSync(path.join(LABELLED_DIR, rel))
    .filter((f) => /\.(jpe?g|png)$/i.test(f))
    .sort()
    .slice(0, count)
    .map((f) => path.join(LABELLED_DIR, rel, f));
}

describe.skipIf(!canRun)('admin console in Chromium', () => {
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'portico-console-'));
    photos = await cleanPhotos();
    // The fake webcam shows the second photo: an MJPEG file is JPEG frames one after the other.
    await cameraOf(path.join(scratch, 'face.mjpeg'), photos[1]!.bytes);
    await writeFile(path.join(scratch, 'face.jpg'), photos[0]!.bytes);
    await writeFile(path.join(scratch, 'third.jpg'), photos[2]!.bytes);

    const shared = await sharedFaceEngine(1);
    engine = shared.engine;
    smtp = await startSmtpSink();
    app = await createTestApp({ clock, face: shared.face, env: { INTERNAL_SECRET, SMTP_URL: smtp.url } });
    receiver = await startWebhookReceiver();
    browser = await launchChromium({ camera: path.join(scratch, 'face.mjpeg') });

    // A tenant whose owner has MFA on, with an integration already set up.
    const tenant = await newTenant(app);
    const login = await app.request('POST', '/v1/auth/login', {
      body: { email: tenant.adminEmail, password: PASSWORD },
    });
    const headers = bearer(login.body.accessToken as string);
    const setup = await app.request('POST', '/v1/auth/mfa/setup', { headers });
    nextCode = totpCodes(setup.body.secret as string, clock);
    const code = await nextCode();
    const enable = await app.request('POST', '/v1/auth/mfa/enable', { headers, body: { code } });
    expect(enable.status, enable.text).toBe(200);
    const created = await app.request('POST', '/v1/applications', { headers, body: { name: 'Front desk' } });
    expect(created.status, created.text).toBe(201);
    Object.assign(org, {
      email: tenant.adminEmail,
      headers,
      tenantId: tenant.tenantId,
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await receiver?.close();
    await smtp?.close();
    await engine?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('serves the console under a strict CSP: no inline script, everything from its own origin', async () => {
    const res = await fetch(`${app.url}/console`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await res.text();
    expect(html).not.toMatch(/<script>(?!<)/);
    const js = await fetch(`${app.url}/console/assets/app.js`);
    expect(js.headers.get('content-type')).toMatch(/text\/javascript/);
    expect((await js.text()).length).toBeGreaterThan(10_000);
  });

  it('signs in with e-mail, password and a TOTP code; a reload keeps the session through the refresh cookie', async () => {
    const en = await newPage('en');
    await en.goto(`${app.url}/console`);
    await en.locator('#email').waitFor();
    await shot(en, 'sign-in-en');
    await en.fill('#email', org.email);
    await en.fill('#password', 'wrong password');
    await en.click('button[type=submit]');
    // The console's own sentence for the code; the code itself only in the alert's support details.
    await expect
      .poll(() => en.locator('[role=alert] .error-message').innerText())
      .toBe('The e-mail or password is not right.');
    expect(await en.locator('[role=alert]').getAttribute('data-code')).toBe('invalid_credentials');
    await en.fill('#password', PASSWORD);
    await en.click('button[type=submit]');
    await en.locator('#mfa-code').waitFor();
    // The code field is a new, empty field (the password typed before is nowhere on the page).
    expect(await en.inputValue('#mfa-code')).toBe('');
    expect(await en.evaluate('document.activeElement.id')).toBe('mfa-code');
    await shot(en, 'sign-in-mfa-en');
    await en.context().close();

    page = await newPage('en');
    await signIn(page);
    await page.reload();
    await page.locator('nav[aria-label=Console]').waitFor({ state: 'attached' });
    expect(await page.locator('.who').innerText()).toContain(org.email);
  });

  it('creates an event with methods, capacity, geofence and branding, previewing the kiosk attract screen, and opens it', async () => {
    await go(page, 'events');
    await page.click('#new-event');
    await page.fill('#event-name', 'Acme Summit');
    await page.fill('#event-capacity', '100');
    await page.uncheck('input[name=method-link]');
    await page.fill('input[name=lat]', '38.6979');
    await page.fill('input[name=lng]', '-9.2066');
    await page.fill('input[name=radius]', '300');
    await page.fill('input[name=displayName]', 'Acme Summit 2026');
    await page.fill('textarea[name=welcomeText]', 'Welcome to Lisbon!');
    await expect.poll(() => page.locator('#attract-preview').innerText()).toContain('Welcome to Lisbon!');
    expect(await page.locator('#attract-preview h3').innerText()).toBe('Acme Summit 2026');
    await shot(page, 'event-new-en');
    await page.click('#save-event');
    await page.locator('#status-open').waitFor();
    await page.click('#status-open');
    await expect.poll(() => page.locator('main > p').first().innerText()).toContain('open');

    const events = await app.request('GET', '/v1/events', { headers: org.headers });
    const event = events.body.items.find((e: { name: string }) => e.name === 'Acme Summit');
    expect(event).toMatchObject({
      status: 'open',
      capacity: 100,
      checkinMethods: ['facial', 'qr', 'manual'],
      geofence: { center: { lat: 38.6979, lng: -9.2066 }, radiusMetres: 300 },
      branding: { displayName: 'Acme Summit 2026', welcomeText: 'Welcome to Lisbon!' },
    });
  });

  it('imports guests from a CSV file and shows the report row by row', async () => {
    const csv = path.join(scratch, 'guests.csv');
    await writeFile(
      csv,
      'name,email,document\nRita Lobo,rita@example.com,111\nJoão Reis,joao@example.com,222\n' +
        'Rita again,rita@example.com,333\n,nobody@example.com,444\n',
    );
    await page.setInputFiles('#guests-file', csv);
    await page.click('#upload-guests');
    const report = page.locator('#guest-import-report');
    await report.waitFor();
    expect(await report.innerText()).toMatch(/Created: 2 · Duplicate: 1 · Failed: 1/);
    expect(await report.innerText()).toMatch(/5\s+failed\s+name: missing/);
    await expect.poll(() => page.locator('#guests').innerText()).toContain('João Reis');
    // Counted by the API after the list is read again.
    await expect.poll(() => page.locator('#attendance').innerText()).toContain('pending: 2');
    await shot(page, 'event-guests-en');
  });

  it('reconfigures the event: capacity, methods and branding change, the geofence is removed', async () => {
    await page.getByRole('button', { name: 'Configure' }).click();
    await page.fill('#event-capacity', '150');
    await page.check('input[name=method-link]');
    await page.fill('input[name=lat]', '');
    await page.fill('input[name=lng]', '');
    await page.fill('textarea[name=welcomeText]', 'Bem-vindo a Lisboa!');
    await page.selectOption('select[name=locale]', 'pt-BR');
    await page.click('#save-event');
    await page.locator('#event-form').waitFor({ state: 'detached' });
    const events = await app.request('GET', '/v1/events', { headers: org.headers });
    expect(events.body.items[0]).toMatchObject({
      capacity: 150,
      checkinMethods: ['facial', 'qr', 'link', 'manual'],
      geofence: null,
      branding: { displayName: 'Acme Summit 2026', welcomeText: 'Bem-vindo a Lisboa!', locale: 'pt-BR' },
    });
    expect(await page.locator('#attendance').innerText()).toContain('Capacity: 150');
  });

  it('enrolls a person from one uploaded photo (the one-photo path), showing its quality before saving', async () => {
    await go(page, 'persons');
    await page.click('#new-person');
    await page.fill('#person-name', 'Ana Souza');
    await page.fill('#person-document', 'AS-1');
    await page.fill('#person-email', 'ana@example.com');
    expect(await page.locator('#photos-help').innerText()).toMatch(
      /Three photos from slightly different angles .* recognise the person more reliably than one/,
    );
    await page.setInputFiles('#photo-file', path.join(scratch, 'face.jpg'));
    await page.locator('#quality-1[role=status]').waitFor({ timeout: 30_000 });
    expect(await page.locator('#quality-1').innerText()).toMatch(/Quality: 0\.\d\d .*Good enough to enroll/);
    await shot(page, 'person-new-en');
    const answer = await saveAndRead(page, '/v1/onboarding');
    expect(answer.body).toMatchObject({ photos: 1 });
    await expect.poll(() => page.locator('#persons').innerText(), { timeout: 30_000 }).toContain('Ana Souza');

    const listed = await app.request('GET', '/v1/persons?q=Ana', { headers: org.headers });
    expect(listed.body.items[0]).toMatchObject({ name: 'Ana Souza', enrolled: true });
  });

  it('enrolls a person from three guided webcam photos (straight, slightly left, slightly right), each with its quality and a retake: the template is made from 3', async () => {
    await page.click('#new-person');
    await page.fill('#person-name', 'Bruno Lima');
    await page.fill('#person-document', 'BL-2');
    await page.click('#use-webcam');
    await webcamPlaying(page);
    for (const [i, [counter, instruction]] of [
      ['Photo 1 of 3', /^Ask the person to look straight at the camera/],
      ['Photo 2 of 3', /^Ask the person to turn their head slightly to their left/],
      ['Photo 3 of 3', /^Ask the person to turn their head slightly to their right/],
    ].entries()) {
      expect(await page.locator('#step').innerText()).toBe(counter);
      expect(await page.locator('#instruction').innerText()).toMatch(instruction as RegExp);
      // Saving waits until the set is complete, and says so.
      expect(await page.locator('#save-person').isDisabled()).toBe(true);
      expect(await page.locator('#photos-pending').innerText()).toBe(
        'Take the remaining photos first, or use one photo instead.',
      );
      if (i === 1) await shot(page, 'person-webcam-step-2-en');
      await page.click('#take-photo');
      await expect.poll(() => page.locator('#photos li').count()).toBe(i + 1);
    }
    expect(await page.isVisible('#webcam')).toBe(false);
    await page.click('#retake-3');
    await webcamPlaying(page);
    expect(await page.locator('#step').innerText()).toBe('Photo 3 of 3');
    await page.click('#take-photo');
    for (const n of [1, 2, 3]) {
      await page.locator(`#quality-${n}[role=status]`).waitFor({ timeout: 30_000 });
      expect(await page.locator(`#quality-${n}`).innerText()).toContain('Good enough to enroll');
    }
    expect(await page.locator('#photos').innerText()).toMatch(
      /1 · straight[\s\S]*2 · slightly left[\s\S]*3 · slightly right/,
    );
    expect(await page.locator('#save-person').innerText()).toBe('Save and enroll the face (3 photos)');
    await shot(page, 'person-three-photos-en');
    const answer = await saveAndRead(page, '/v1/onboarding');
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body).toMatchObject({ photos: 3 });
    await expect
      .poll(() => page.locator('#persons').innerText(), { timeout: 30_000 })
      .toContain('Bruno Lima');
    const listed = await app.request('GET', '/v1/persons?q=Bruno', { headers: org.headers });
    expect(listed.body.items[0]).toMatchObject({ enrolled: true });
    expect(
      await app.deps.db.prisma.biometricImage.count({
        where: { personId: listed.body.items[0].id, kind: 'enrollment' },
      }),
    ).toBe(3);
    // Edit is the row's one button; the QR code is in its menu, shown in a dialog.
    const ana = page.locator('#persons tr', { hasText: 'Ana Souza' });
    await ana.getByRole('button', { name: 'More actions: Ana Souza' }).click();
    await ana.getByRole('button', { name: 'QR code' }).click();
    await page.locator('dialog[open] img.qr').waitFor();
    await shot(page, 'persons-en');
    await page.locator('dialog[open]').getByRole('button', { name: 'Close' }).click();
  });

  it('re-enrolls from the webcam with "use one photo instead": one photo is sent', async () => {
    await page
      .locator('#persons tr', { hasText: 'Bruno Lima' })
      .getByRole('button', { name: 'Edit' })
      .click();
    await page.click('#use-webcam');
    await webcamPlaying(page);
    await page.click('#one-photo');
    expect(await page.locator('#step').innerText()).toBe('Photo 1 of 1');
    await page.click('#take-photo');
    expect(await page.locator('#photos li').count()).toBe(1);
    expect(await page.locator('#save-person').innerText()).toBe('Save and enroll the face');
    const answer = await saveAndRead(page, '/v1/public/onboarding/enroll');
    expect(answer.body).toMatchObject({ enrolled: true, photos: 1 });
    await page.locator('#save-person').waitFor({ state: 'detached', timeout: 30_000 });
  });

  it.skipIf(HAS_LABELLED)(`enrolls from three uploaded photos: ${LABELLED_SKIP_REASON}`, () => {});
  it.skipIf(!HAS_LABELLED)(
    'names the photos the service refused (photos 1 and 2 of different people), then enrolls three uploaded photos of one person',
    async () => {
      const same = labelledPhotos('johns/John_Salley', 3);
      await page.click('#new-person');
      await page.fill('#person-name', 'Eva Três');
      await page.fill('#person-document', 'ET-5');
      await page.setInputFiles('#photo-file', [labelledPhotos('bbt/penny', 1)[0]!, same[1]!]);
      await page.locator('#quality-2[role=status]').waitFor({ timeout: 30_000 });
      const differ = await saveAndRead(page, '/v1/onboarding');
      expect(differ.body).toMatchObject({ code: 'photos_differ', photos: [0, 1] });
      await page.getByText('Photos 1 and 2 do not seem to show the same person').waitFor();
      expect(await page.locator('#photos li.refused').count()).toBe(2);
      await shot(page, 'person-photos-differ-en');

      await page.setInputFiles('#photo-file', same);
      await expect.poll(() => page.locator('#photos li.refused').count()).toBe(0);
      await page.locator('#quality-3[role=status]').waitFor({ timeout: 30_000 });
      const answer = await saveAndRead(page, '/v1/onboarding');
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      expect(answer.body).toMatchObject({ photos: 3 });
      await expect
        .poll(() => page.locator('#persons').innerText(), { timeout: 30_000 })
        .toContain('Eva Três');
    },
    60_000,
  );

  it('imports persons from a CSV file with the failed rows listed, edits one and mails its enrollment link', async () => {
    const csv = path.join(scratch, 'persons.csv');
    await writeFile(
      csv,
      'name;document;email\nCarla Dias;CD-3;carla@example.com\nDavi Rocha;DR-4;\nNo Document;;x@example.com\n',
    );
    await page.click('#import-persons');
    await page.setInputFiles('#persons-csv', csv);
    await page.locator('#persons-csv').locator('xpath=../..').getByRole('button', { name: 'Upload' }).click();
    await expect.poll(() => page.locator('main').innerText()).toMatch(/Created: 2 · Updated: 0 · Failed: 1/);
    expect(await page.locator('main').innerText()).toMatch(/Row 4\s+document: missing/);
    await expect.poll(() => page.locator('#persons').innerText()).toContain('Carla Dias');

    const carla = page.locator('#persons tr', { hasText: 'Carla Dias' });
    await carla.getByRole('button', { name: 'Edit' }).click();
    await page.fill('#person-phone', '+55 11 91234-5678');
    await page.click('#save-person');
    // The form closes once the change is saved.
    await page.locator('#save-person').waitFor({ state: 'detached' });
    const listed = await app.request('GET', '/v1/persons?q=Carla', { headers: org.headers });
    expect(listed.body.items[0]).toMatchObject({ phone: '+55 11 91234-5678', email: 'carla@example.com' });

    await carla.getByRole('button', { name: 'More actions: Carla Dias' }).click();
    await carla.getByRole('button', { name: 'Send enrollment link' }).click();
    await expect.poll(() => carla.innerText()).toContain('Enrollment link sent');
    expect(await waitForMail(smtp, 'carla@example.com', /enroll\?token=/)).toBeTruthy();
  });

  it('enrolls an existing person from the edit form, the photo’s quality shown first', async () => {
    const davi = page.locator('#persons tr', { hasText: 'Davi Rocha' });
    await davi.getByRole('button', { name: 'Edit' }).click();
    await page.setInputFiles('#photo-file', path.join(scratch, 'third.jpg'));
    await page.locator('#quality-1[role=status]').waitFor({ timeout: 30_000 });
    expect(await page.locator('#quality-1').innerText()).toContain('Good enough to enroll');
    await page.click('#save-person');
    await page.locator('#save-person').waitFor({ state: 'detached', timeout: 30_000 });
    const listed = await app.request('GET', '/v1/persons?q=Davi', { headers: org.headers });
    expect(listed.body.items[0]).toMatchObject({ name: 'Davi Rocha', enrolled: true });
  });

  it('shows a check-in made through the API live on Today, with the day’s counts', async () => {
    await go(page, 'today');
    await expect.poll(() => page.locator('#live-state').innerText()).toContain('Live:');
    const persons = await app.request('GET', '/v1/persons?q=Ana', { headers: org.headers });
    const events = await app.request('GET', '/v1/events', { headers: org.headers });
    // A manual check-in by the front desk, through the API with the admin's own session.
    const res = await app.request('POST', '/v1/checkin/manual', {
      headers: org.headers,
      body: { personId: persons.body.items[0].id, eventId: events.body.items[0].id },
    });
    expect(res.status, res.text).toBe(200);
    // A row highlighted as arrived through the stream (not listed when the page opened).
    const arrived = page.locator('#live tr.live-item');
    await expect
      .poll(() => arrived.allInnerTexts(), { timeout: 10_000 })
      .toEqual([expect.stringMatching(/Ana Souza\s+Acme Summit\s+manual\s+admitted/)]);
    await expect.poll(() => page.locator('#total-today').innerText(), { timeout: 10_000 }).toBe('1');
  });

  it('shows a kiosk’s offline check-in as it syncs, its photo only when asked for, and the kiosk’s queue', async () => {
    // A kiosk that keeps frames uploads an offline facial check-in of Ana with three more still queued.
    const tenant = `/v1/tenants/${org.tenantId}/settings`;
    await app.request('PATCH', tenant, { headers: org.headers, body: { syncCheckinImages: true } });
    const device = await app.request('POST', '/v1/devices', {
      headers: org.headers,
      body: { name: 'Door 1' },
    });
    expect(device.status, device.text).toBe(201);
    const persons = await app.request('GET', '/v1/persons?q=Ana', { headers: org.headers });
    const events = await app.request('GET', '/v1/events', { headers: org.headers });
    const synced = await app.request('POST', '/v1/sync/batch', {
      headers: { 'x-internal-secret': INTERNAL_SECRET, 'x-device-token': device.body.token },
      body: {
        queueLength: 3,
        items: [
          {
            clientId: randomUUID(),
            method: 'facial',
            outcome: 'success',
            personId: persons.body.items[0].id,
            eventId: events.body.items[0].id,
            recordedAt: new Date(Date.now() - 60_000).toISOString(),
            score: 0.81,
            livenessScore: 0.93,
            frame: photos[0]!.bytes.toString('base64'),
          },
        ],
      },
    });
    expect(synced.body.results?.[0]?.status, synced.text).toBe('accepted');
    const row = page.locator('#live tr.live-item', { hasText: 'face' });
    await row.waitFor({ timeout: 10_000 });
    expect(await page.locator('img.thumb').count()).toBe(0);
    await row.getByRole('button', { name: 'Photo' }).click();
    await row.locator('img.thumb').waitFor();
    expect(
      await row.locator('img.thumb').evaluate((img: { naturalWidth: number }) => img.naturalWidth),
    ).toBeGreaterThan(0);
    await expect
      .poll(() => page.locator('#devices').innerText(), { timeout: 10_000 })
      .toMatch(/Door 1.*\s3$/m);
    await shot(page, 'today-en');
  });

  it('lists check-ins with filters and exports the filtered ones as CSV', async () => {
    await go(page, 'checkins');
    const rows = page.locator('#checkins tbody tr');
    const filter = async (name: string, value: string) => {
      await page.selectOption(`select[name=${name}]`, value);
      await page.click('form[aria-label=Filter] button[type=submit]');
    };
    await expect
      .poll(() => rows.allInnerTexts())
      .toEqual([
        // Newest first by when it was decided: the kiosk decided a minute before the manual check-in.
        expect.stringMatching(/Ana Souza\s+Acme Summit\s+manual\s+admitted/),
        expect.stringMatching(/Ana Souza\s+Acme Summit\s+face\s+admitted\s+0\.81\s+offline, late/),
      ]);
    await filter('method', 'manual');
    await expect.poll(() => rows.allInnerTexts()).toEqual([expect.stringMatching(/manual/)]);
    await filter('method', '');
    await filter('flag', 'offline');
    await expect.poll(() => rows.allInnerTexts()).toEqual([expect.stringMatching(/\tface\t/)]);
    await shot(page, 'checkins-en');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    const csv = (await readFile((await download.path())!, 'utf8')).trim().split('\r\n');
    expect(csv[0]).toMatch(/^id,recordedAt,/);
    expect(csv.slice(1)).toEqual([expect.stringMatching(/,facial,success,.*,Ana Souza,/)]);
  });

  it('creates an API key that is shown once, with a copy button, and never again', async () => {
    await go(page, 'integrations');
    await page.fill('#app-name', 'Badge printer');
    await page.click('#create-app');
    const key = await page.locator('#new-key-value').innerText();
    expect(key).toMatch(/^pk_live_[\w-]{20,}$/);
    await page.click('#copy-key');
    await shot(page, 'integrations-key-en');
    const works = await fetch(`${app.url}/v1/persons`, { headers: { authorization: `Bearer ${key}` } });
    expect(works.status).toBe(200);
    await page.click('#dismiss-key');
    await page.reload();
    await expect.poll(() => page.locator('#applications').innerText()).toContain('Badge printer');
    expect(await page.content()).not.toContain(key);
    await expect
      .poll(() => page.locator('#applications').innerText())
      .toContain(`${key.slice(0, 12)}…${key.slice(-4)}`);
  });

  it('sets the webhook URL, sends a test event and shows its delivery in the log', async () => {
    await page.fill('#webhook-url', receiver.url);
    await page.click('#save-webhook');
    await expect.poll(() => page.locator('[role=status]').innerText()).toContain('Saved');
    await page.click('#send-test');
    const [hook] = await receiver.waitFor(1, 15_000);
    expect(JSON.parse(hook!.rawBody)).toMatchObject({ event: 'webhook.test' });
    // The log refreshes itself.
    await expect
      .poll(() => page.locator('#deliveries').innerText(), { timeout: 15_000 })
      .toMatch(/webhook\.test[\s\S]*delivered/);
    expect(await page.locator('#topics').innerText()).toContain('checkin.success');
    // Where a browser reaches the bus, as the API says: the embedded broker's WebSocket listener
    // (none is advertised for an external broker without MQTT_WS_URL, e.g. CI's Mosquitto).
    const bus = await app.request('GET', '/v1/admin/bus', { headers: org.headers });
    if (bus.body.wsUrl) expect(await page.locator('#bus-ws-url').innerText()).toBe(bus.body.wsUrl);
    else expect(await page.locator('#bus-ws-url').count()).toBe(0);
    await shot(page, 'integrations-en');
  });

  it('saves the thresholds, the door challenge, the guests’ language, geofence radius and age policy', async () => {
    await go(page, 'settings');
    await page.fill('#setting-matchThreshold', '0.6');
    await page.selectOption('#setting-livenessChallenge', 'always');
    await page.selectOption('#setting-defaultLocale', 'pt-BR');
    await page.fill('input[name=minimumAge]', '16');
    await page.selectOption('select[name=belowMinimum]', 'require_guardian_consent');
    await page.click('#save-settings');
    await expect.poll(() => page.locator('[role=status]').innerText()).toContain('Saved');
    const s = await app.request('GET', `/v1/tenants/${org.tenantId}/settings`, { headers: org.headers });
    expect(s.body).toMatchObject({
      matchThreshold: 0.6,
      livenessChallenge: 'always',
      defaultLocale: 'pt-BR',
      age_policy: { minimumAge: 16, belowMinimum: 'require_guardian_consent' },
    });
    // Opened again, the form shows what is stored.
    await page.reload();
    await page.locator('#settings').waitFor();
    expect(await page.locator('select[name=belowMinimum]').inputValue()).toBe('require_guardian_consent');
    expect(await page.inputValue('#setting-matchThreshold')).toBe('0.6');
    expect(await page.locator('#setting-livenessChallenge').inputValue()).toBe('always');
    expect(await page.locator('#setting-defaultLocale').inputValue()).toBe('pt-BR');
    await shot(page, 'settings-en');
    // Back to English for the tests after this one, whose guests' pages and mails are English.
    const back = await app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
      headers: org.headers,
      body: { defaultLocale: 'en' },
    });
    expect(back.status, back.text).toBe(200);
  });

  it('shows the audit log, filtered by action', async () => {
    await go(page, 'audit');
    await page.selectOption('select[name=action]', 'person.');
    await page.click('form[aria-label=Filter] button[type=submit]');
    await expect
      .poll(() => page.locator('#audit tbody').innerText(), { timeout: 15_000 })
      .toContain('person.');
    const actions = await page.locator('#audit tbody td:nth-child(2) code').allInnerTexts();
    expect(actions.length).toBeGreaterThan(0);
    expect(actions.every((a) => a.startsWith('person.'))).toBe(true);
    await shot(page, 'audit-en');
  });

  it('anonymises a person after a confirmation that says what will be erased', async () => {
    await go(page, 'persons');
    const row = page.locator('#persons tr', { hasText: 'Bruno Lima' });
    await row.getByRole('button', { name: 'More actions: Bruno Lima' }).click();
    await row.getByRole('button', { name: 'Anonymise' }).click();
    const dialog = page.locator('dialog[open]');
    expect(await dialog.innerText()).toMatch(/face template and every photo are deleted/);
    await shot(page, 'person-anonymise-en');
    await dialog.getByRole('button', { name: 'Yes, erase' }).click();
    await expect.poll(() => page.locator('#persons').innerText()).not.toContain('Bruno Lima');
    const listed = await app.request('GET', '/v1/persons?q=BL-2', { headers: org.headers });
    expect(listed.body.items).toHaveLength(0);
  });

  it('speaks Brazilian Portuguese when the browser does, and the switch changes it', async () => {
    const pt = await newPage('pt-BR');
    await pt.goto(`${app.url}/console`);
    await pt.getByRole('heading', { name: 'Entrar no console' }).waitFor();
    await shot(pt, 'sign-in-pt-BR');
    await signIn(pt);
    for (const [hash, heading] of [
      ['today', 'Hoje'],
      ['checkins', 'Check-ins'],
      ['persons', 'Pessoas'],
      ['events', 'Eventos e convidados'],
      ['integrations', 'Integrações'],
      ['settings', 'Configurações'],
      ['audit', 'Registro de auditoria'],
    ] as const) {
      await go(pt, hash);
      expect(await pt.locator('main h1').first().innerText()).toBe(heading);
      // Each page's tables are filled once its loads are done (nothing is busy any more).
      await expect.poll(() => pt.locator('[aria-busy=true]').count()).toBe(0);
      await shot(pt, `${hash}-pt-BR`);
    }
    // The API's statuses and outcomes are words too.
    await go(pt, 'events');
    await expect.poll(() => pt.locator('#events').innerText()).toMatch(/Acme Summit\s+aberto/);
    await pt.selectOption('#language', 'en');
    expect(await pt.locator('main h1').first().innerText()).toBe('Events and guests');
    second = pt;
  }, 60_000);

  it('guides the three webcam photos in Brazilian Portuguese', async () => {
    const pt = second;
    await pt.selectOption('#language', 'pt-BR');
    await go(pt, 'persons');
    await pt.click('#new-person');
    expect(await pt.locator('#photos-help').innerText()).toMatch(/Três fotos de ângulos um pouco diferentes/);
    await pt.click('#use-webcam');
    await webcamPlaying(pt);
    for (const [i, [counter, instruction]] of [
      ['Foto 1 de 3', /^Peça à pessoa que olhe de frente para a câmera/],
      ['Foto 2 de 3', /^Peça à pessoa que vire a cabeça levemente para a esquerda dela/],
      ['Foto 3 de 3', /^Peça à pessoa que vire a cabeça levemente para a direita dela/],
    ].entries()) {
      expect(await pt.locator('#step').innerText()).toBe(counter);
      expect(await pt.locator('#instruction').innerText()).toMatch(instruction as RegExp);
      if (i === 1) await shot(pt, 'person-webcam-step-2-pt-BR');
      await pt.click('#take-photo');
    }
    for (const n of [1, 2, 3]) await pt.locator(`#quality-${n}[role=status]`).waitFor({ timeout: 30_000 });
    expect(await pt.locator('#save-person').innerText()).toBe('Salvar e cadastrar o rosto (3 fotos)');
    await shot(pt, 'person-three-photos-pt-BR');
    // Not saved: this face is Bruno's already. The last test expects the English console.
    await pt.getByRole('button', { name: 'Cancelar' }).click();
    await pt.selectOption('#language', 'en');
  }, 60_000);

  it('is readable on a tablet and usable from the keyboard', async () => {
    const tablet = page;
    await tablet.setViewportSize(TABLET);
    await go(tablet, 'today');
    await shot(tablet, 'today-tablet-en');
    await go(tablet, 'events');
    await tablet.locator('#events tbody tr').first().getByRole('button').click();
    await tablet.locator('#guests').waitFor();
    await shot(tablet, 'event-tablet-en');
    // Tab moves through the sidebar's links; Enter follows one.
    await go(tablet, 'today');
    await tablet.locator('nav a').first().focus();
    await tablet.keyboard.press('Tab'); // Door
    await tablet.keyboard.press('Tab');
    await tablet.keyboard.press('Enter');
    await expect.poll(() => tablet.locator('main h1').first().innerText()).toBe('Check-ins');
    // The focused link shows a focus ring (the page's DOM, evaluated in the browser).
    expect(await tablet.evaluate('document.activeElement.textContent')).toBe('Check-ins');
    expect(await tablet.evaluate('getComputedStyle(document.activeElement).outlineStyle')).not.toBe('none');
    await tablet.setViewportSize(LAPTOP);
  });

  it('switches to the sandbox: its own persons, the live ones untouched', async () => {
    await go(page, 'persons');
    await expect.poll(() => page.locator('#persons').innerText()).toContain('Ana Souza');
    await page.check('#sandbox');
    await page.locator('.sandbox-banner').waitFor();
    await expect.poll(() => page.locator('main').innerText()).toContain('Nothing yet.');
    await page.click('#new-person');
    await page.fill('#person-name', 'Sandra Teste');
    await page.fill('#person-document', 'SB-1');
    await page.click('#save-person');
    await expect.poll(() => page.locator('#persons').innerText()).toContain('Sandra Teste');
    await shot(page, 'persons-sandbox-en');
    await page.uncheck('#sandbox');
    await expect.poll(() => page.locator('#persons').innerText()).toContain('Ana Souza');
    expect(await page.locator('#persons').innerText()).not.toContain('Sandra Teste');
    const live = await app.request('GET', '/v1/persons?q=Sandra', { headers: org.headers });
    expect(live.body.items).toEqual([]);
  });

  it('shows an operator only the pages of running check-in', async () => {
    const email = `door@${org.email.split('@')[1]}`;
    await loggedInUser(app, org.tenantId, 'operator', email);
    const operator = await newPage('en');
    await operator.goto(`${app.url}/console#/settings`);
    await operator.fill('#email', email);
    await operator.fill('#password', PASSWORD);
    await operator.click('button[type=submit]');
    await operator.locator('nav[aria-label=Console]').waitFor({ state: 'attached' });
    expect(await operator.locator('nav a').allInnerTexts()).toEqual([
      'Today',
      'Door',
      'Check-ins',
      'Persons',
      'Events and guests',
    ]);
    // A manager's page asked for by its address opens Today instead.
    expect(await operator.locator('main h1').first().innerText()).toBe('Today');
    await operator.context().close();
  });

  it('signs out: the refresh cookie no longer opens the console', async () => {
    await page.click('#sign-out');
    await page.locator('#email').waitFor();
    await page.reload();
    await page.locator('#email').waitFor();
    expect(cspViolations).toEqual([]);
  });

  it('goes back to sign-in when the session is ended elsewhere (its renewal is refused)', async () => {
    await go(second, 'persons');
    // The page's own calls are answered (a renewal in flight would outlive the revocation below).
    await expect.poll(() => second.locator('#persons').innerText()).toContain('Ana Souza');
    await expect.poll(() => second.locator('[aria-busy=true]').count()).toBe(0);
    await app.deps.db.prisma.refreshSession.updateMany({
      where: { tenantId: org.tenantId, revokedAt: null },
      data: { revokedAt: new Date(), revokedReason: 'logout' },
    });
    await second.click('nav a[href="#/today"]');
    await second.locator('#email').waitFor();
    await second.context().close();
  });
});
