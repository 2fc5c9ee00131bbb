// The kiosk UI in real Chromium, against the real cloud and the real device agent (a child process),
// with a fake camera fed from real face photos (../shared/faces): a face coming into view starts the
// check-in without a touch, and the time from the face in view to the result is printed per person
// (issue 24's door target: 2.5 s); an enrolled guest is welcomed by name, a stranger is not, with the cloud stopped the offline banner shows the queue and check-ins
// still succeed, and a still photo fails the liveness challenge. Screens the journey cannot reach
// cheaply (outside the geofence, event closed or full, no face) are shown from answers of the agent's
// documented shape, served by Playwright's routing. The live face guide says "come closer" to a face
// placed small and "move left" to one off-centre (the agent's detector); the staff fallback refuses a
// wrong PIN, locks out, and checks a guest in by name, online and offline. Every screen is shot in
// English and Brazilian Portuguese (the events' branding locale) into test/screenshots/ when
// UPDATE_SCREENSHOTS=1.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import QRCode from 'qrcode';
import { type BrowserContext, type Page } from 'playwright-core';
import {
  CHROMIUM,
  chromiumCpuSeconds,
  HAS_CHROMIUM,
  launchChromiumProfile,
  screenshot,
  writeMjpeg,
} from '@portico/test-support/chromium';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integratorOf } from '../../cloud/test/persons/support.js';
import {
  base64,
  HAS_LABELLED,
  HAS_MODELS,
  LABELLED_DIR,
  LABELLED_SKIP_REASON,
  MODELS_SKIP_REASON,
  sharedFaceEngine,
} from '@portico/test-support/faces';
import {
  agentCall,
  agentEnv,
  confirmedGuest,
  deviceToken,
  openEvent,
  replicaCaughtUp,
  startAgentProcess,
  startCloud,
  until,
  type AgentProcess,
  type Cloud,
} from '../../test/support/edge.js';
import { hashPin } from '../../device-agent/src/pin.js';
import { startKioskServer, type KioskServer } from '../src/server.js';

const canRun = HAS_CHROMIUM && HAS_MODELS && HAS_LABELLED;
if (!canRun) {
  console.warn(
    `[kiosk] browser tests skipped: ${!HAS_CHROMIUM ? `${CHROMIUM} not installed` : !HAS_MODELS ? MODELS_SKIP_REASON : LABELLED_SKIP_REASON}`,
  );
}
// sharp is the face engine's dependency: load the engine's copy.
type Sharp = (input: Buffer) => {
  resize(width: number): ReturnType<Sharp>;
  extend(o: {
    top: number;
    bottom: number;
    left: number;
    right: number;
    background: string;
  }): ReturnType<Sharp>;
  jpeg(options: { quality: number }): ReturnType<Sharp>;
  toBuffer(): Promise<Buffer>;
};
const sharp = createRequire(fileURLToPath(new URL('../../shared/face-engine/package.json', import.meta.url)))(
  'sharp',
) as Sharp;

const STAFF_PIN = '482913';
const STAFF_SESSION_S = 6;
/**
 * Long enough that the right PIN typed during the lock-out (seven clicks) is still refused on a loaded
 * machine: with 2 s, a CI run with three test files at a time typed past the end of the lock-out.
 */
const STAFF_LOCKOUT_S = 6;

const SHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));
const LANGS = ['en', 'pt-BR'] as const;

const photosOf = async (rel: string) => {
  const dir = path.join(LABELLED_DIR, rel);
  const files = (await readdir(dir)).filter((f) => /\.(jpe?g|png)$/i.test(f)).sort();
  return Promise.all(files.map((f) => readFile(path.join(dir, f))));
};

/**
 * A 640x480 MJPEG camera showing one photo on a grey wall: by default the 150 px crop enlarged to
 * 300 px and centred; `size`, `left` and `top` place it elsewhere (small: far away; off-centre).
 */
async function cameraFile(
  dir: string,
  name: string,
  photo: Buffer,
  place: { size: number; left: number; top: number } = { size: 300, left: 170, top: 90 },
) {
  const face = await sharp(photo).resize(place.size).toBuffer();
  const frame = await sharp(face)
    .extend({
      top: place.top,
      bottom: 480 - place.top - place.size,
      left: place.left,
      right: 640 - place.left - place.size,
      background: '#8a8a8a',
    })
    .jpeg({ quality: 90 })
    .toBuffer();
  const file = path.join(dir, `${name}.mjpeg`);
  await writeMjpeg(file, frame);
  return file;
}

/** The grey wall with nobody in front of it, as a JPEG. */
const emptyWall = () =>
  (sharp as unknown as (o: { create: object }) => ReturnType<Sharp>)({
    create: { width: 640, height: 480, channels: 3, background: '#8a8a8a' },
  })
    .jpeg({ quality: 90 })
    .toBuffer();

/**
 * People arriving at the door, one after another: a 640x480 MJPEG (Chromium plays it at 30 frames a
 * second, in a loop) of `awayS` seconds of the grey wall, then `presentS` seconds of the photo, moving
 * a few pixels from frame to frame as a person standing does (a still picture repeated is what a
 * photo held up or injected looks like). By default one person every 3 s: 20 a minute.
 */
async function arrivalsFile(dir: string, name: string, photo: Buffer, awayS = 1, presentS = 2) {
  const wall = await emptyWall();
  const frames: Buffer[] = Array.from({ length: Math.round(awayS * 30) }, () => wall);
  for (let i = 0; i < presentS * 30; i++) {
    const size = 340 + Math.round(6 * Math.sin(i / 5));
    const left = 150 + Math.round(4 * Math.sin(i / 3));
    const top = 60 + Math.round(3 * Math.cos(i / 4));
    const face = await sharp(photo).resize(size).toBuffer();
    frames.push(
      await sharp(face)
        .extend({ top, bottom: 480 - top - size, left, right: 640 - left - size, background: '#8a8a8a' })
        .jpeg({ quality: 90 })
        .toBuffer(),
    );
  }
  const file = path.join(dir, `${name}.mjpeg`);
  await writeFile(file, Buffer.concat(frames));
  return file;
}

/** The middle value (the lower of the two middle ones for an even count). */
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

describe.skipIf(!canRun)('kiosk UI in Chromium with the agent and the cloud', { timeout: 120_000 }, () => {
  let scratch: string;
  let cloud: Cloud;
  let engine: Awaited<ReturnType<typeof sharedFaceEngine>>['engine'];
  let agent: AgentProcess | undefined;
  let kiosk: KioskServer;
  /**
   * One Chromium per camera, each with a profile of its own for the whole file, as a kiosk keeps its
   * profile: the branding cached in localStorage while online is what the attract screen shows offline,
   * and the detector's WebAssembly is compiled once, not at every page.
   */
  const browsers: Record<
    'leonard' | 'stranger' | 'qr' | 'far' | 'offCentre' | 'empty' | 'still' | 'arrivals' | 'quiet',
    BrowserContext
  > = {} as never;
  const launch = (who: string, camera: string) =>
    launchChromiumProfile(path.join(scratch, `profile-${who}`), {
      camera,
      viewport: { width: 1280, height: 800 },
      deviceScaleFactor: 1,
      permissions: ['camera'],
    });
  let emptyCamera: string;
  const events: Record<(typeof LANGS)[number], { id: string; publicToken: string }> = {} as never;
  let org: Awaited<ReturnType<typeof integratorOf>>;
  let checkinUrl: string;
  let quietCamera: string;
  /** João Conceição, on both events' lists without a face: for the staff's manual check-in. */
  const joao: Record<(typeof LANGS)[number], string> = {} as never;

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'portico-kiosk-'));
    const shared = await sharedFaceEngine(1);
    engine = shared.engine;
    cloud = await startCloud({}, shared.face);
    org = await integratorOf(cloud.app);
    // Still photos cannot blink: liveness is switched on only for the last test. Leonard's second
    // photo scores about 0.57 against his first, on the default accept line: a lower accept line keeps
    // this journey's welcome certain (the step-up between the lines has its own test, step-up.test.ts).
    const settings = await cloud.app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
      headers: org.headers,
      body: { requireLiveness: false, matchThreshold: 0.5 },
    });
    expect(settings.status, settings.text).toBe(200);
    const branding = {
      en: {
        displayName: 'Acme Premiere',
        welcomeText: 'Doors open at 19:00',
        primaryColor: '#0b5fff',
        locale: 'en',
      },
      'pt-BR': {
        displayName: 'Estreia Acme',
        welcomeText: 'Portas abertas às 19h',
        primaryColor: '#0a7d3b',
        locale: 'pt-BR',
      },
    };
    for (const lang of LANGS) {
      events[lang] = await openEvent(cloud.app, org.headers, {
        name: branding[lang].displayName,
        branding: branding[lang],
      });
    }
    const leonard = await photosOf('bbt/leonard');
    const person = await cloud.app.request('POST', '/v1/persons', {
      headers: org.keyHeaders,
      body: { name: 'Leonard Hofstadter', document: 'DOC-LH' },
    });
    const enrolled = await cloud.app.request('POST', '/v1/public/onboarding/enroll', {
      headers: org.keyHeaders,
      body: { personId: person.body.id, frame: base64(leonard[0]!) },
    });
    expect(enrolled.status, enrolled.text).toBe(200);
    // Bernadette, for the door's time per person (enrolled from another photo than the camera shows).
    const bernadette = await cloud.app.request('POST', '/v1/persons', {
      headers: org.keyHeaders,
      body: { name: 'Bernadette Rostenkowski', document: 'DOC-BR' },
    });
    const bernadetteEnrolled = await cloud.app.request('POST', '/v1/public/onboarding/enroll', {
      headers: org.keyHeaders,
      body: { personId: bernadette.body.id, frame: base64((await photosOf('bbt/bernadette'))[0]!) },
    });
    expect(bernadetteEnrolled.status, bernadetteEnrolled.text).toBe(200);
    for (const lang of LANGS) {
      await confirmedGuest(cloud.app, org.headers, events[lang].id, {
        name: 'Bernadette Rostenkowski',
        personId: bernadette.body.id,
      });
      const guest = await confirmedGuest(cloud.app, org.headers, events[lang].id, {
        name: 'Leonard Hofstadter',
        personId: person.body.id,
      });
      if (lang === 'en') checkinUrl = guest.checkinUrl;
      const other = await cloud.app.request('POST', `/v1/events/${events[lang].id}/guests`, {
        headers: org.headers,
        body: { name: 'João Conceição', status: 'confirmed' },
      });
      expect(other.status, other.text).toBe(201);
      joao[lang] = other.body.id;
    }
    const token = await deviceToken(cloud.app, org.headers, 'Door');
    agent = await startAgentProcess(
      await agentEnv(cloud.url, token, [events.en.publicToken, events['pt-BR'].publicToken], {
        AGENT_FACE: 'on',
        STAFF_PIN_HASH: hashPin(STAFF_PIN),
        STAFF_PIN_ATTEMPTS: '3',
        STAFF_LOCKOUT_S: String(STAFF_LOCKOUT_S),
        STAFF_SESSION_S: String(STAFF_SESSION_S),
      }),
    );
    await until(
      async () =>
        (await agentCall(agent!, 'GET', '/status')).body.events.every(
          (e: { templates: number }) => e.templates === 2,
        ),
      60_000,
      'replicas with templates',
    );
    kiosk = await startKioskServer({ agentUrl: agent.url, cloudUrl: cloud.url });
    // The camera shows another photo of Leonard than the one enrolled; the stranger is Raj.
    browsers.leonard = await launch('leonard', await cameraFile(scratch, 'leonard', leonard[1]!));
    browsers.stranger = await launch(
      'stranger',
      await cameraFile(scratch, 'raj', (await photosOf('bbt/raj'))[0]!),
    );
    // The face guide's cases: Leonard small in the middle (far away), and large but at the camera's
    // left and low (off-centre: on the guest's right, so "move to your left").
    browsers.far = await launch(
      'far',
      await cameraFile(scratch, 'far', leonard[1]!, { size: 100, left: 270, top: 190 }),
    );
    browsers.offCentre = await launch(
      'off-centre',
      await cameraFile(scratch, 'off-centre', leonard[1]!, { size: 220, left: 20, top: 200 }),
    );
    // Nobody in front of the kiosk: the attract screen stays.
    emptyCamera = await writeMjpeg(path.join(scratch, 'empty.mjpeg'), await emptyWall());
    browsers.empty = await launch('empty', emptyCamera);
    // Bernadette's photo, enlarged to 340 px: the passive model scores it 0.97-1.0 placed so, moving a
    // little or not (a still picture of her, and people arriving at the door).
    const live = (await photosOf('bbt/bernadette'))[1]!;
    const nearer = { size: 340, left: 150, top: 60 };
    browsers.still = await launch('still', await cameraFile(scratch, 'still', live, nearer));
    browsers.arrivals = await launch('arrivals', await arrivalsFile(scratch, 'arrivals', live));
    // Nobody for 12 s (long enough for the detector to load, attract to slow down after 5 s and the
    // test to watch it at that pace), then Bernadette for 2 s.
    quietCamera = await arrivalsFile(scratch, 'quiet', live, 12, 2);
    browsers.quiet = await launch('quiet', quietCamera);
    // The QR code of Leonard's invitation to the English event, held up to the camera.
    const qr = await sharp(await QRCode.toBuffer(checkinUrl, { width: 380, margin: 4 }))
      .extend({ top: 50, bottom: 50, left: 130, right: 130, background: '#ffffff' })
      .jpeg({ quality: 90 })
      .toBuffer();
    const qrCamera = path.join(scratch, 'qr.mjpeg');
    await writeMjpeg(qrCamera, qr);
    browsers.qr = await launch('qr', qrCamera);
  }, 180_000);

  afterAll(async () => {
    for (const b of Object.values(browsers)) await b?.close();
    await kiosk?.close();
    await agent?.kill('SIGKILL');
    await cloud?.close();
    await engine?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  /** With `clock`, the page's clock runs as the real one until the test moves it on (`page.clock`). */
  async function open(
    who: keyof typeof browsers,
    lang: (typeof LANGS)[number],
    options: { clock?: boolean } = {},
  ): Promise<Page> {
    const page = await browsers[who].newPage();
    if (options.clock) await page.clock.install();
    page.on('pageerror', (e) => console.error(`[kiosk page] ${e.message}`));
    await page.goto(`${kiosk.url}/?event=${events[lang].publicToken}`);
    await page.locator('main').first().waitFor();
    return page;
  }
  /**
   * The attract screen with the event's name and its branding's welcome text, as a kiosk nobody stands
   * at shows it. Before the branding comes (from the cloud, or cached) the name can come from the agent,
   * and the branding's arrival then draws the screen again with the welcome text above the buttons: a
   * tap in between lands where the button was (on a loaded CI run, the QR button's tap started a face
   * check-in instead).
   */
  const attractShown = async (page: Page, lang: (typeof LANGS)[number]) => {
    await page
      .locator('[data-screen="attract"] h1', { hasText: lang === 'en' ? 'Acme Premiere' : 'Estreia Acme' })
      .waitFor();
    await page
      .locator('[data-screen="attract"] .welcome-text', {
        hasText: lang === 'en' ? 'Doors open at 19:00' : 'Portas abertas às 19h',
      })
      .waitFor();
  };
  const shot = (page: Page, name: string) => screenshot(page, SHOTS, name);
  /** A face in view starts the check-in by itself: the result screen it comes to. */
  async function checkIn(page: Page) {
    await page.locator('main.result').waitFor({ timeout: 30_000 });
    return page.locator('main.result');
  }
  const title = (page: Page) => page.locator('#result-title').innerText();
  const metrics = (page: Page) =>
    page.evaluate(() => (window as unknown as { kioskMetrics: Record<string, unknown> }).kioskMetrics);

  it('welcomes an enrolled guest by first name without a touch, in the language of the event, then waits for them to step away', async () => {
    for (const lang of LANGS) {
      const idle = await open('empty', lang);
      await attractShown(idle, lang);
      // Nobody in view: nothing starts.
      await idle.waitForTimeout(1000);
      expect(await idle.locator('[data-screen="attract"][data-armed="true"]').count()).toBe(1);
      await shot(idle, `1-attract-${lang}`);
      await idle.close();

      const page = await open('leonard', lang);
      const result = await checkIn(page);
      expect(await result.getAttribute('data-screen')).toMatch(/welcome/);
      expect(await title(page)).toBe(lang === 'en' ? 'Welcome, Leonard!' : 'Bem-vindo(a), Leonard!');
      await shot(page, `4-welcome-${lang}`);
      // Back to attract, and not a second check-in while Leonard is still in front of the camera.
      await page.locator('[data-screen="attract"]').waitFor({ timeout: 10_000 });
      await page.waitForTimeout(1500);
      expect(await page.locator('[data-screen="attract"][data-armed="false"]').count()).toBe(1);
      console.log(`[kiosk] ${lang} figures: ${JSON.stringify(await metrics(page))}`);
      await page.close();
    }
    // Online, the agent uploads each decision at once: both reach the cloud.
    const both = { eventId: { in: [events.en.id, events['pt-BR'].id] }, outcome: 'success' as const };
    await until(
      async () => (await cloud.app.deps.db.prisma.checkIn.count({ where: both })) === 2,
      10_000,
      'synced',
    );
  });

  it('does not welcome a stranger, and offers to try again', async () => {
    for (const lang of LANGS) {
      const page = await open('stranger', lang);
      const result = await checkIn(page);
      expect(await result.getAttribute('data-screen')).toMatch(/not-recognised/);
      expect(await title(page)).toBe(lang === 'en' ? 'We did not recognise you' : 'Não reconhecemos você');
      expect(await page.locator('body').innerText()).not.toMatch(/Welcome|Bem-vindo/);
      expect(await page.locator('#retry').isVisible()).toBe(true);
      await shot(page, `5-not-recognised-${lang}`);
      await page.close();
    }
  });

  it('with the cloud stopped: the offline banner shows the queue, the cached branding stays, check-ins still succeed and sync later', async () => {
    await cloud.down();
    await until(
      async () => !(await agentCall(agent!, 'GET', '/status')).body.online,
      10_000,
      'agent offline',
    );
    for (const lang of LANGS) {
      const idle = await open('empty', lang);
      await attractShown(idle, lang);
      const idleBanner = idle.locator('#offline');
      await idleBanner.waitFor({ state: 'visible' });
      expect(await idleBanner.innerText()).toMatch(lang === 'en' ? /^Offline/ : /^Sem conexão/);
      await shot(idle, `6-offline-attract-${lang}`);
      await idle.close();
      const before = (await agentCall(agent!, 'GET', '/status')).body.queueLength as number;
      const page = await open('leonard', lang);
      const result = await checkIn(page);
      expect(await result.getAttribute('data-screen')).toMatch(/welcome/);
      const banner = page.locator('#offline');
      await expect.poll(() => banner.innerText()).toContain(`(${before + 1} `);
      await shot(page, `7-offline-welcome-${lang}`);
      await page.close();
    }
    // A fresh browser profile (nothing cached) with the cloud down: the event's name comes from the
    // agent's replica, and the page asks the server for nothing it does not have (no favicon.ico).
    const fresh = await launchChromiumProfile(path.join(scratch, 'profile-fresh'), {
      camera: emptyCamera,
      viewport: { width: 1280, height: 800 },
    });
    const page = await fresh.newPage();
    const missing: string[] = [];
    page.on('response', (r) => void (r.status() === 404 && missing.push(r.url())));
    await page.goto(`${kiosk.url}/?event=${events.en.publicToken}`);
    await page.locator('[data-screen="attract"] h1', { hasText: 'Acme Premiere' }).waitFor();
    expect(missing).toEqual([]);
    await fresh.close();
    await cloud.up();
    const online = await open('empty', 'en');
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.queueLength === 0,
      30_000,
      'drained',
    );
    await online.locator('#offline').waitFor({ state: 'hidden' });
    await online.close();
    const offline = await cloud.app.deps.db.prisma.checkIn.count({
      where: { eventId: { in: [events.en.id, events['pt-BR'].id] }, source: 'sync', method: 'facial' },
    });
    expect(offline).toBeGreaterThanOrEqual(4);
  });

  it('QR mode: the invitation QR code checks in at its event and is refused at another', async () => {
    for (const lang of LANGS) {
      // The QR screen as a guest sees it before showing a code: the camera without one (the stranger's).
      const waiting = await open('empty', lang);
      await attractShown(waiting, lang);
      await waiting.click('#qr-start');
      await waiting.locator('[data-screen="qr"]').waitFor();
      await expect
        .poll(() => waiting.locator('video').evaluate((v: HTMLVideoElement) => v.videoWidth))
        .toBeGreaterThan(0);
      await shot(waiting, `13-qr-${lang}`);
      await waiting.close();

      const page = await open('qr', lang);
      await attractShown(page, lang);
      await page.click('#qr-start');
      await page.locator('main.result').waitFor({ timeout: 30_000 });
      if (lang === 'en') {
        expect(await title(page)).toBe('Welcome, Leonard!');
      } else {
        expect(await title(page)).toBe('Este QR code não vale aqui');
        await shot(page, `14-qr-refused-${lang}`);
      }
      await page.close();
    }
    await until(
      async () => (await cloud.app.deps.db.prisma.checkIn.count({ where: { method: 'qr' } })) === 2,
      10_000,
      'QR check-ins synced',
    );
  });

  it('shows the geofence, closed, full, no-face and already-in answers (answers of the agent shape, routed)', async () => {
    const answers = {
      '8-geofence': { status: 200, body: { outcome: 'geofence_alert', reason: null, guest: null } },
      '9-closed': { status: 200, body: { outcome: 'denied', reason: 'event_closed', guest: null } },
      '10-full': { status: 200, body: { outcome: 'denied', reason: 'capacity_reached', guest: null } },
      '11-no-face': { status: 422, body: { status: 422, code: 'no_face_detected', detail: 'No face' } },
      // Re-entry `refuse`: the agent names the guest who is in already.
      '28-already-in': {
        status: 200,
        body: { outcome: 'denied', reason: 'already_checked_in', guest: { displayName: 'leonard' } },
      },
    };
    for (const lang of LANGS) {
      for (const [name, answer] of Object.entries(answers)) {
        const kind = name.replace(/^\d+-/, '');
        await browsers.leonard.route('**/agent/events/*/identify', (route) =>
          route.fulfill({
            status: answer.status,
            contentType: 'application/json',
            body: JSON.stringify(answer.body),
          }),
        );
        const page = await open('leonard', lang);
        const result = await checkIn(page);
        expect(await result.getAttribute('data-screen')).toMatch(new RegExp(kind));
        if (kind === 'already-in') {
          expect(await title(page)).toBe(
            lang === 'en' ? 'Leonard, you are already checked in' : 'Leonard, seu check-in já foi feito',
          );
        }
        await shot(page, `${name}-${lang}`);
        await page.close();
        await browsers.leonard.unroute('**/agent/events/*/identify');
      }
    }
  }, 180_000);

  it('fails a still photo once the tenant requires liveness: at once when the passive model calls it a reproduction, after the challenge when it looks live', async () => {
    await cloud.app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
      headers: org.headers,
      body: { requireLiveness: true },
    });
    await replicaCaughtUp(agent!);
    const challenged = async (page: Page) => ((await metrics(page)) as { challenged: boolean[] }).challenged;
    for (const lang of LANGS) {
      // Leonard's small crop enlarged: the passive model scores it 0.01-0.1, a reproduction.
      const reproduction = await open('leonard', lang);
      expect(await (await checkIn(reproduction)).getAttribute('data-screen')).toMatch(/liveness-failed/);
      expect(await challenged(reproduction)).toEqual([false]);
      await shot(reproduction, `12-liveness-failed-${lang}`);
      await reproduction.close();

      // Bernadette's photo scores 0.9-1.0, but one picture repeated frame after frame is no face
      // coming to the door: the challenge, which a photo cannot perform.
      const page = await open('still', lang);
      await page.locator('[data-screen="challenge"]').waitFor({ timeout: 15_000 });
      await shot(page, `3-challenge-${lang}`);
      expect(await (await checkIn(page)).getAttribute('data-screen')).toMatch(/liveness-failed/);
      expect(await challenged(page)).toEqual([true]);
      // Every frame of the challenge is analysed as it arrives: the last frame -> result figure.
      const lastFrame = async () =>
        ((await metrics(page)) as { lastFrameToResultMs: number[] }).lastFrameToResultMs;
      await expect.poll(async () => (await lastFrame()).length).toBe(1);
      console.log(
        `[kiosk] ${lang} liveness challenge: lastFrameToResultMs ${JSON.stringify(await lastFrame())}`,
      );
      await page.close();
    }
  });

  it('checks people in as they come into view, liveness on: the passive look, no touch, time per person printed', async () => {
    // Bernadette coming to the door again and again, moving a little, liveness required.
    await cloud.app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
      headers: org.headers,
      body: { requireLiveness: true },
    });
    await replicaCaughtUp(agent!);
    const page = await open('arrivals', 'en');
    const people = 6;
    await expect
      .poll(
        async () => ((await metrics(page)) as { faceInViewToResultMs: number[] }).faceInViewToResultMs.length,
        { timeout: 90_000 },
      )
      .toBeGreaterThanOrEqual(people);
    const m = (await metrics(page)) as {
      faceInViewToResultMs: number[];
      challenged: boolean[];
      resultsAt: number[];
      guide: string;
    };
    const times = m.faceInViewToResultMs.slice(0, people);
    const looks = times.filter((_, i) => !m.challenged[i]);
    const at = m.resultsAt.slice(0, people);
    const perMinute = ((at.length - 1) * 60_000) / (at[at.length - 1]! - at[0]!);
    console.log(
      `[kiosk] door, time per person from the face in view to the result on screen: ${JSON.stringify(times)} ms; ` +
        `challenged ${JSON.stringify(m.challenged.slice(0, people))}; median on the passive look alone ` +
        `${median(looks)} ms, over all ${median(times)} ms; ` +
        `${perMinute.toFixed(1)} people a minute (the camera brings one every 3 s); guide in the ${m.guide}`,
    );
    // Welcomed on the passive look (re-entry is allowed at this event by default): the enlarged photo
    // scores 0.97-1.0 from frame to frame (measured in Node on the same frames), over the 0.9 line. At
    // most one arrival asked for the challenge (a look that caught a frame mid-step), which a face that
    // neither blinks nor turns then fails.
    expect(looks.length).toBeGreaterThanOrEqual(people - 1);
    await until(
      async () =>
        (await cloud.app.deps.db.prisma.checkIn.count({
          where: {
            eventId: events.en.id,
            outcome: 'success',
            method: 'facial',
            guest: { name: 'Bernadette Rostenkowski' },
          },
        })) >= looks.length,
      10_000,
      'welcomed',
    );
    await page.close();
  }, 150_000);

  it('with nobody in view for 5 s, attract pauses 200 ms between looks instead of a frame, and a face coming into view still starts the check-in', async () => {
    const page = await open('quiet', 'en');
    type Looks = { guideLooks: { page: number }; guideAt: number[]; guideMs: number[] };
    const looks = async () => (await metrics(page)) as Looks;
    /**
     * The pauses from the end of one look to the start of the next, for looks started from `since` (ms
     * since navigation): the pace itself, whatever each look costs on a loaded machine.
     */
    const pauses = async (since: number) => {
      const { guideAt, guideMs } = await looks();
      return guideAt
        .slice(1)
        .flatMap((at, i) => (guideAt[i]! >= since ? [at - guideAt[i]! - guideMs[i]!] : []));
    };
    const now = () => page.evaluate(() => performance.now());
    const cpu = () => chromiumCpuSeconds(quietCamera);
    /** Looks a second over about `ms` of the page's own time, and the cores its Chromium used meanwhile. */
    const rate = async (ms: number) => {
      const [n0, t0, c0] = [(await looks()).guideLooks.page, await now(), cpu()];
      await page.waitForTimeout(ms);
      const [n1, t1, c1] = [(await looks()).guideLooks.page, await now(), cpu()];
      return {
        looks: ((n1 - n0) * 1000) / (t1 - t0),
        cores: c0 === undefined || c1 === undefined ? NaN : ((c1 - c0) * 1000) / (t1 - t0),
      };
    };
    const attract = page.locator('main[data-screen="attract"]');
    // At first (once the page's detector has loaded) a frame's worth between looks: idle counts from
    // the first look that saw nobody, so the first looks are at full pace however long the detector
    // took to load.
    await expect.poll(async () => (await pauses(0)).length, { timeout: 30_000 }).toBeGreaterThanOrEqual(6);
    const busy = { pause: median(await pauses(0)), ...(await rate(1000)) };
    await page.locator('main[data-screen="attract"][data-idle="true"]').waitFor({ timeout: 30_000 });
    const idleFrom = await now();
    const idleRate = await rate(1500);
    // Three pauses or more, however long each look takes (about 0.25 s on a loaded machine, so that
    // 1.5 s may hold only two); Bernadette comes into view later.
    await expect.poll(async () => (await pauses(idleFrom)).length).toBeGreaterThanOrEqual(3);
    const idle = { pause: median(await pauses(idleFrom)), ...idleRate };
    console.log(
      `[kiosk] attract, nobody in view: ${busy.pause.toFixed(0)} ms between looks and ` +
        `${busy.looks.toFixed(1)} looks a second at first, ${idle.pause.toFixed(0)} ms and ` +
        `${idle.looks.toFixed(1)} once idle; its Chromium (every process) used ${busy.cores.toFixed(2)} ` +
        `and ${idle.cores.toFixed(2)} cores`,
    );
    // A frame's worth (40 ms) at first, 200 ms once idle, each plus the timer's lateness on this machine.
    expect(idle.pause).toBeGreaterThanOrEqual(195);
    expect(busy.pause).toBeLessThan(idle.pause - 100);
    // So at most five looks a second, whatever each costs.
    expect(idle.looks).toBeLessThanOrEqual(5.5);
    // Bernadette comes into view: the check-in starts without a touch.
    await attract.waitFor({ state: 'detached', timeout: 30_000 });
    expect(await page.locator('main').getAttribute('data-screen')).not.toBe('attract');
    await page.close();
  }, 90_000);

  it('the face guide says live what to fix: come closer, move to your left, then hold still', async () => {
    const cases = [
      { who: 'far', fix: 'tooFar', en: 'Come closer', 'pt-BR': 'Chegue mais perto', shot: '15-guide-far' },
      {
        who: 'offCentre',
        fix: 'moveLeft',
        en: 'Move a little to your left',
        'pt-BR': 'Vá um pouco para a sua esquerda',
        shot: '16-guide-move-left',
      },
      { who: 'leonard', fix: 'ok', en: 'Hold still', 'pt-BR': 'Fique parado', shot: '17-guide-hold-still' },
    ] as const;
    // A face well placed goes on to the look: here the agent's challenge never answers, so the guide's
    // last word stays on screen.
    await browsers.leonard.route('**/agent/challenge', () => undefined);
    for (const lang of LANGS) {
      for (const c of cases) {
        const page = await open(c.who, lang);
        const openedAt = await page.evaluate(() => performance.now());
        const hint = page.locator(`#hint[data-fix="${c.fix}"]`);
        await hint.waitFor({ timeout: 15_000 });
        expect(await hint.innerText()).toBe(c[lang]);
        await shot(page, `${c.shot}-${lang}`);
        if (c.fix !== 'ok') {
          // A badly placed face never reaches the challenge.
          await page.waitForTimeout(1500);
          expect(await page.locator('[data-screen="camera"]').count()).toBe(1);
        }
        const m = (await metrics(page)) as {
          longTasksMs: number[];
          longTasksAt: number[];
          guide: string;
          guideLooks: { page: number; agent: number };
          guideMs: number[];
        };
        // Long tasks while the guide runs (page load excluded): printed, as the other figures.
        const guiding = m.longTasksMs.filter((_, i) => m.longTasksAt[i]! >= openedAt);
        console.log(
          `[kiosk] face guide ${c.fix} (${lang}): looks in the page ${m.guideLooks.page}, by the agent ` +
            `${m.guideLooks.agent}; last looks ` +
            `${JSON.stringify(m.guideMs.slice(-10))} ms; long tasks while guiding ${JSON.stringify(guiding)} ms`,
        );
        // In the page (MediaPipe), not by a round trip to the agent per hint (the agent is asked twice a
        // second only while the page sees no face: the far case).
        expect(m.guide).toBe('page');
        expect(m.guideLooks.page).toBeGreaterThan(m.guideLooks.agent);
        await page.close();
      }
    }
    await browsers.leonard.unroute('**/agent/challenge');
  }, 180_000);

  /**
   * Long press on the attract screen's top-right corner, held as a person holds it: until the PIN pad
   * opens (released after a fixed 2.2 s, a loaded page whose timer ran late saw the release first).
   */
  async function openStaff(page: Page) {
    const box = (await page.locator('#staff-open').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const pressedAt = await page.evaluate(() => performance.now());
    await page.mouse.down();
    await page.locator('[data-screen="staff-pin"]').waitFor();
    const heldMs = (await page.evaluate(() => performance.now())) - pressedAt;
    await page.mouse.up();
    expect(heldMs).toBeGreaterThanOrEqual(2000);
  }
  const typePin = async (page: Page, pin: string) => {
    for (const d of pin) await page.click(`.pinpad [data-key="${d}"]`);
    await page.click('.pinpad [data-key="OK"]');
  };

  it('staff fallback: a wrong PIN is refused, 3 lock out, the right PIN opens the search, and a manual check-in reaches the cloud (queued while offline)', async () => {
    const manualRows = (source?: string) =>
      cloud.app.deps.db.prisma.checkIn.count({
        where: {
          method: 'manual',
          guestId: { in: [joao.en, joao['pt-BR']] },
          outcome: 'success',
          ...(source && { source }),
        },
      });
    for (const lang of LANGS) {
      if (lang === 'pt-BR') {
        await cloud.down();
        await until(async () => !(await agentCall(agent!, 'GET', '/status')).body.online, 10_000, 'offline');
      }
      const page = await open('empty', lang, { clock: true });
      await attractShown(page, lang);
      // A short touch on the corner does nothing, not even start a check-in.
      await page.click('#staff-open');
      await page.waitForTimeout(300);
      expect(await page.locator('[data-screen="attract"]').count()).toBe(1);
      await openStaff(page);
      await shot(page, `18-staff-pin-${lang}`);

      const message = page.locator('#staff-msg');
      await typePin(page, '000000');
      await expect.poll(() => message.innerText()).toBe(lang === 'en' ? 'Wrong PIN' : 'PIN incorreto');
      await typePin(page, '111111');
      await expect.poll(() => message.getAttribute('data-code')).toBe('wrong_pin');
      await typePin(page, '222222');
      await expect.poll(() => message.getAttribute('data-code')).toBe('staff_locked');
      const lockedAt = Date.now();
      expect(await message.innerText()).toMatch(
        lang === 'en' ? /^Too many wrong PINs/ : /^Muitos PINs errados/,
      );
      await shot(page, `19-staff-locked-${lang}`);
      // Locked: even the right PIN is refused until the lock-out ends.
      await message.evaluate((el) => (el.textContent = ''));
      await typePin(page, STAFF_PIN);
      await expect.poll(() => message.innerText()).toMatch(/PIN/);
      expect(await page.locator('[data-screen="staff-search"]').count()).toBe(0);
      await page.waitForTimeout(Math.max(0, lockedAt + STAFF_LOCKOUT_S * 1000 + 200 - Date.now()));
      await typePin(page, STAFF_PIN);
      await page.locator('[data-screen="staff-search"]').waitFor();

      // The on-screen keyboard, without accents: "joao" finds "João Conceição".
      for (const k of 'JOAO') await page.click(`.keyboard [data-key="${k}"]`);
      const row = page.locator('.guest-row', { hasText: 'João Conceição' });
      await row.waitFor();
      await shot(page, `20-staff-search-${lang}`);
      const queued = (await agentCall(agent!, 'GET', '/status')).body.queueLength as number;
      await row.click();
      await page.locator('[data-screen~="staff-result"]').waitFor();
      expect(await title(page)).toBe(
        lang === 'en' ? 'João Conceição is checked in' : 'Check-in de João Conceição feito',
      );
      if (lang === 'pt-BR') {
        // Offline: decided on the device and waiting in the queue, as the banner says.
        expect((await agentCall(agent!, 'GET', '/status')).body.queueLength).toBe(queued + 1);
        await expect.poll(() => page.locator('#offline').innerText()).toContain(`(${queued + 1} `);
      }
      await shot(page, `21-staff-checked-in-${lang}`);
      // The staff session times out by itself and the kiosk returns to attract (the page's clock moved
      // on past its idle timeout).
      await page.clock.runFor(STAFF_SESSION_S * 1000 + 1000);
      await page.locator('[data-screen="attract"]').waitFor({ timeout: 5_000 });
      await page.close();
      if (lang === 'en') await until(async () => (await manualRows()) === 1, 10_000, 'manual synced');
    }
    await cloud.up();
    await until(async () => (await manualRows('sync')) === 2, 30_000, 'offline manual check-in synced');
  }, 180_000);

  // Last: it revokes the kiosk's device.
  it('says the device is not authorised, not offline, once the cloud refuses it, and admits nobody', async () => {
    const devices = await cloud.app.request('GET', '/v1/devices', { headers: org.headers });
    for (const d of devices.body.items as { id: string }[]) {
      await cloud.app.request('DELETE', `/v1/devices/${d.id}`, { headers: org.headers });
    }
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.unauthorized !== null,
      10_000,
      'unauthorized',
    );
    for (const lang of LANGS) {
      const page = await open('leonard', lang);
      const banner = page.locator('#offline.unauthorised');
      await banner.waitFor({ state: 'visible' });
      expect(await banner.innerText()).toBe(
        lang === 'en'
          ? 'This device is not authorised: call staff'
          : 'Este dispositivo não está autorizado: chame a equipe',
      );
      const result = await checkIn(page);
      expect(await result.getAttribute('data-screen')).toMatch(/error/);
      expect(await result.locator('h1').innerText()).toBe(
        lang === 'en'
          ? 'This device is not authorised: call staff'
          : 'Este dispositivo não está autorizado: chame a equipe',
      );
      await shot(page, `29-not-authorised-${lang}`);
      await page.close();
    }
  });
});
