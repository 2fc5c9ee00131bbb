// The kiosk UI in real Chromium, against the real cloud and the real device agent (a child process),
// with a fake camera fed from real face photos (../shared/faces): an enrolled guest is welcomed by
// name, a stranger is not, with the cloud stopped the offline banner shows the queue and check-ins
// still succeed, and a still photo fails the liveness challenge. Screens the journey cannot reach
// cheaply (outside the geofence, event closed or full, no face) are shown from answers of the agent's
// documented shape, served by Playwright's routing. Every screen is shot in English and Brazilian
// Portuguese (the events' branding locale) into test/screenshots/ when UPDATE_SCREENSHOTS=1.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import QRCode from 'qrcode';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
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
} from '../../cloud/test/support/faces.js';
import {
  agentCall,
  agentEnv,
  startAgentProcess,
  startCloud,
  until,
  type AgentProcess,
  type Cloud,
} from '../../test/support/edge.js';
import { startKioskServer, type KioskServer } from '../src/server.js';

const CHROMIUM = '/usr/bin/chromium';
const canRun = existsSync(CHROMIUM) && HAS_MODELS && HAS_LABELLED;
if (!canRun) {
  console.warn(
    `[kiosk] browser tests skipped: ${!existsSync(CHROMIUM) ? `${CHROMIUM} not installed` : !HAS_MODELS ? MODELS_SKIP_REASON : LABELLED_SKIP_REASON}`,
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

const COMMITTED_SHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));
let SHOTS = COMMITTED_SHOTS;
const LANGS = ['en', 'pt-BR'] as const;

const photosOf = async (rel: string) => {
  const dir = path.join(LABELLED_DIR, rel);
  const files = (await readdir(dir)).filter((f) => /\.(jpe?g|png)$/i.test(f)).sort();
  return Promise.all(files.map((f) => readFile(path.join(dir, f))));
};

/** A 640x480 MJPEG camera showing one photo: the 150 px crop enlarged and centred on a grey wall. */
async function cameraFile(dir: string, name: string, photo: Buffer) {
  const face = await sharp(photo).resize(300).toBuffer();
  const frame = await sharp(face)
    .extend({ top: 90, bottom: 90, left: 170, right: 170, background: '#8a8a8a' })
    .jpeg({ quality: 90 })
    .toBuffer();
  const file = path.join(dir, `${name}.mjpeg`);
  await writeFile(file, Buffer.concat(Array.from({ length: 30 }, () => frame)));
  return file;
}

const launch = (camera: string) =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-video-capture=${camera}`,
    ],
  });

describe.skipIf(!canRun)('kiosk UI in Chromium with the agent and the cloud', { timeout: 120_000 }, () => {
  let scratch: string;
  let cloud: Cloud;
  let engine: Awaited<ReturnType<typeof sharedFaceEngine>>['engine'];
  let agent: AgentProcess | undefined;
  let kiosk: KioskServer;
  const browsers: Record<'leonard' | 'stranger' | 'qr', Browser> = {} as never;
  const events: Record<(typeof LANGS)[number], { id: string; publicToken: string }> = {} as never;
  let org: Awaited<ReturnType<typeof integratorOf>>;
  let checkinUrl: string;

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'portico-kiosk-'));
    if (process.env.UPDATE_SCREENSHOTS !== '1') SHOTS = path.join(scratch, 'screenshots');
    await mkdir(SHOTS, { recursive: true });
    const shared = await sharedFaceEngine(1);
    engine = shared.engine;
    cloud = await startCloud({}, shared.face);
    org = await integratorOf(cloud.app);
    // Still photos cannot blink: liveness is switched on only for the last test.
    await cloud.app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
      headers: org.headers,
      body: { requireLiveness: false },
    });
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
      const created = await cloud.app.request('POST', '/v1/events', {
        headers: org.headers,
        body: { name: branding[lang].displayName, branding: branding[lang] },
      });
      expect(created.status, created.text).toBe(201);
      events[lang] = created.body;
      await cloud.app.request('PATCH', `/v1/events/${created.body.id}/status`, {
        headers: org.headers,
        body: { status: 'open' },
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
    for (const lang of LANGS) {
      const guest = await cloud.app.request('POST', `/v1/events/${events[lang].id}/guests`, {
        headers: org.headers,
        body: { name: 'Leonard Hofstadter', status: 'confirmed', personId: person.body.id },
      });
      expect(guest.status, guest.text).toBe(201);
      if (lang === 'en') checkinUrl = guest.body.checkinUrl;
    }
    const device = await cloud.app.request('POST', '/v1/devices', {
      headers: org.headers,
      body: { name: 'Door' },
    });
    agent = await startAgentProcess(
      await agentEnv(cloud.url, device.body.token, [events.en.publicToken, events['pt-BR'].publicToken], {
        AGENT_FACE: 'on',
      }),
    );
    await until(
      async () =>
        (await agentCall(agent!, 'GET', '/status')).body.events.every(
          (e: { templates: number }) => e.templates === 1,
        ),
      60_000,
      'replicas with templates',
    );
    kiosk = await startKioskServer({ agentUrl: agent.url, cloudUrl: cloud.url });
    // The camera shows another photo of Leonard than the one enrolled; the stranger is Raj.
    browsers.leonard = await launch(await cameraFile(scratch, 'leonard', leonard[1]!));
    browsers.stranger = await launch(await cameraFile(scratch, 'raj', (await photosOf('bbt/raj'))[0]!));
    // The QR code of Leonard's invitation to the English event, held up to the camera.
    const qr = await sharp(await QRCode.toBuffer(checkinUrl, { width: 380, margin: 4 }))
      .extend({ top: 50, bottom: 50, left: 130, right: 130, background: '#ffffff' })
      .jpeg({ quality: 90 })
      .toBuffer();
    const qrCamera = path.join(scratch, 'qr.mjpeg');
    await writeFile(qrCamera, Buffer.concat(Array.from({ length: 30 }, () => qr)));
    browsers.qr = await launch(qrCamera);
  }, 180_000);

  afterAll(async () => {
    for (const b of Object.values(browsers)) await b?.close();
    await kiosk?.close();
    await agent?.kill('SIGKILL');
    await cloud?.close();
    await engine?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  // One browser context per camera for the whole file, as a kiosk keeps its profile: the branding cached
  // in localStorage while online is what the attract screen shows offline.
  const contexts = new Map<keyof typeof browsers, BrowserContext>();
  async function open(who: keyof typeof browsers, lang: (typeof LANGS)[number]): Promise<Page> {
    if (!contexts.has(who)) {
      contexts.set(
        who,
        await browsers[who].newContext({
          viewport: { width: 1280, height: 800 },
          deviceScaleFactor: 1,
          permissions: ['camera'],
        }),
      );
    }
    const page = await contexts.get(who)!.newPage();
    page.on('pageerror', (e) => console.error(`[kiosk page] ${e.message}`));
    await page.goto(`${kiosk.url}/?event=${events[lang].publicToken}`);
    await page
      .locator('[data-screen="attract"] h1', { hasText: lang === 'en' ? 'Acme Premiere' : 'Estreia Acme' })
      .waitFor();
    return page;
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
  /** Touch to start and wait for a result screen; shoots the steps on the way when asked. */
  async function checkIn(page: Page, lang: string, shootSteps = false) {
    // The whole attract screen is the touch target.
    await page.locator('[data-screen="attract"]').click({ position: { x: 20, y: 20 } });
    await page.locator('[data-screen="camera"]').waitFor();
    await expect
      .poll(() => page.locator('video').evaluate((v: HTMLVideoElement) => v.videoWidth))
      .toBeGreaterThan(0);
    if (shootSteps) await shot(page, `2-camera-${lang}`);
    await page.locator('[data-screen="challenge"][data-step="2"]').waitFor();
    if (shootSteps) await shot(page, `3-challenge-${lang}`);
    await page.locator('main.result').waitFor({ timeout: 30_000 });
    return page.locator('main.result');
  }
  const title = (page: Page) => page.locator('#result-title').innerText();
  const metrics = (page: Page) =>
    page.evaluate(() => (window as unknown as { kioskMetrics: Record<string, unknown> }).kioskMetrics);

  it('welcomes an enrolled guest by first name, in the language of the event, then returns to attract', async () => {
    for (const lang of LANGS) {
      const page = await open('leonard', lang);
      await shot(page, `1-attract-${lang}`);
      const result = await checkIn(page, lang, true);
      expect(await result.getAttribute('data-screen')).toMatch(/welcome/);
      expect(await title(page)).toBe(lang === 'en' ? 'Welcome, Leonard!' : 'Bem-vindo(a), Leonard!');
      await shot(page, `4-welcome-${lang}`);
      await page.locator('[data-screen="attract"]').waitFor({ timeout: 10_000 });
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
      const result = await checkIn(page, lang);
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
      const page = await open('leonard', lang);
      const banner = page.locator('#offline');
      await banner.waitFor({ state: 'visible' });
      expect(await banner.innerText()).toMatch(lang === 'en' ? /^Offline/ : /^Sem conexão/);
      await shot(page, `6-offline-attract-${lang}`);
      const before = (await agentCall(agent!, 'GET', '/status')).body.queueLength as number;
      const result = await checkIn(page, lang);
      expect(await result.getAttribute('data-screen')).toMatch(/welcome/);
      await expect.poll(() => banner.innerText()).toContain(`(${before + 1} `);
      await shot(page, `7-offline-welcome-${lang}`);
      await page.close();
    }
    await cloud.up();
    const page = await open('leonard', 'en');
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.queueLength === 0,
      30_000,
      'drained',
    );
    await page.locator('#offline').waitFor({ state: 'hidden' });
    await page.close();
    const offline = await cloud.app.deps.db.prisma.checkIn.count({
      where: { eventId: { in: [events.en.id, events['pt-BR'].id] }, source: 'sync', method: 'facial' },
    });
    expect(offline).toBeGreaterThanOrEqual(4);
  });

  it('QR mode: the invitation QR code checks in at its event and is refused at another', async () => {
    for (const lang of LANGS) {
      // The QR screen as a guest sees it before showing a code: the camera without one (the stranger's).
      const waiting = await open('stranger', lang);
      await waiting.click('#qr-start');
      await waiting.locator('[data-screen="qr"]').waitFor();
      await expect
        .poll(() => waiting.locator('video').evaluate((v: HTMLVideoElement) => v.videoWidth))
        .toBeGreaterThan(0);
      await shot(waiting, `13-qr-${lang}`);
      await waiting.close();

      const page = await open('qr', lang);
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

  it('shows the geofence, closed, full and no-face answers (answers of the agent shape, routed)', async () => {
    const answers = {
      geofence: { status: 200, body: { outcome: 'geofence_alert', reason: null, guest: null } },
      closed: { status: 200, body: { outcome: 'denied', reason: 'event_closed', guest: null } },
      full: { status: 200, body: { outcome: 'denied', reason: 'capacity_reached', guest: null } },
      'no-face': { status: 422, body: { status: 422, code: 'no_face_detected', detail: 'No face' } },
    };
    for (const lang of LANGS) {
      const page = await open('leonard', lang);
      let n = 8;
      for (const [kind, answer] of Object.entries(answers)) {
        await page.route('**/agent/events/*/identify', (route) =>
          route.fulfill({
            status: answer.status,
            contentType: 'application/json',
            body: JSON.stringify(answer.body),
          }),
        );
        // Back to attract at once instead of waiting for the result's own timer.
        await page.reload();
        await page.locator('[data-screen="attract"]').waitFor();
        const result = await checkIn(page, lang);
        expect(await result.getAttribute('data-screen')).toMatch(new RegExp(kind));
        await shot(page, `${n++}-${kind}-${lang}`);
        await page.unroute('**/agent/events/*/identify');
      }
      await page.close();
    }
  }, 180_000);

  it('fails a still photo on the liveness challenge once the tenant requires it', async () => {
    await cloud.app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
      headers: org.headers,
      body: { requireLiveness: true },
    });
    const synced = (await agentCall(agent!, 'GET', '/status')).body.lastSyncAt;
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.lastSyncAt !== synced,
      10_000,
      'policy',
    );
    for (const lang of LANGS) {
      const page = await open('leonard', lang);
      const result = await checkIn(page, lang);
      expect(await result.getAttribute('data-screen')).toMatch(/liveness-failed/);
      await shot(page, `12-liveness-failed-${lang}`);
      await page.close();
    }
  });
});
