// The kiosk's three answers in real Chromium, against the real device agent (a child process, with
// its face engine) fed by a stand-in cloud: the replica's lines are set around a genuine probe's score, so
// Leonard's face answers `step_up_required`. The step-up screen then scans the invitation QR code with
// the same fake camera (a frame showing his face and, in a corner, a QR code): his own code welcomes
// him, another guest's is refused; the staff button opens the PIN pad and staff confirm him by name.
// A step-up left alone returns to attract when it expires. A retake (`face_retake`, routed in the
// agent's documented shape: the guide keeps a real camera from ever sending so poor a picture) keeps
// the camera and says what to fix. Shots in English and Brazilian Portuguese into test/screenshots/
// when UPDATE_SCREENSHOTS=1.
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import QRCode from 'qrcode';
import type { Browser, Page } from 'playwright-core';
import type { SyncItem } from '@portico/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, launchChromium, screenshot, writeMjpeg } from '@portico/test-support/chromium';
import { HAS_LABELLED, HAS_MODELS, LABELLED_DIR, sharedFaceEngine } from '@portico/test-support/faces';
import { agentEnv, startAgentProcess, type AgentProcess } from '../../test/support/edge.js';
import { hashPin } from '../../device-agent/src/pin.js';
import { replicaGuest, replicaPage } from '../../device-agent/test/support/replica-page.js';
import { startKioskServer, type KioskServer } from '../src/server.js';

type Sharp = (input: Buffer) => {
  resize(width: number): ReturnType<Sharp>;
  extend(o: {
    top: number;
    bottom: number;
    left: number;
    right: number;
    background: string;
  }): ReturnType<Sharp>;
  composite(layers: { input: Buffer; left: number; top: number }[]): ReturnType<Sharp>;
  jpeg(options: { quality: number }): ReturnType<Sharp>;
  toBuffer(): Promise<Buffer>;
};
const sharp = createRequire(fileURLToPath(new URL('../../shared/face-engine/package.json', import.meta.url)))(
  'sharp',
) as Sharp;

const LANGS = ['en', 'pt-BR'] as const;
type Lang = (typeof LANGS)[number];
const TOKENS: Record<Lang, string> = {
  en: 'evt_kiosk_stepup_en_0123456789',
  'pt-BR': 'evt_kiosk_stepup_pt_0123456789',
};
const NAMES: Record<Lang, string> = { en: 'Acme Premiere', 'pt-BR': 'Estreia Acme' };
const LINK = { leonard: 'lnk_leonard_0123456789abcdef', raj: 'lnk_raj_0123456789abcdef0123' };
const STAFF_PIN = '482913';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const photo = (rel: string) => readFile(path.join(LABELLED_DIR, rel));
const SHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));

/** A 640x480 frame: the photo 300 px wide in the middle, and with `qr` that code in the top-right corner. */
async function cameraFile(dir: string, name: string, face: Buffer, qr?: string) {
  const layers = qr
    ? [{ input: await QRCode.toBuffer(qr, { width: 150, margin: 2 }), left: 480, top: 10 }]
    : [];
  const frame = await sharp(await sharp(face).resize(300).toBuffer())
    .extend({ top: 90, bottom: 90, left: 170, right: 170, background: '#8a8a8a' })
    .composite(layers)
    .jpeg({ quality: 90 })
    .toBuffer();
  return writeMjpeg(path.join(dir, `${name}.mjpeg`), frame);
}

const canRun = HAS_CHROMIUM && HAS_MODELS && HAS_LABELLED;

describe.skipIf(!canRun)('kiosk step-up and retake in Chromium', { timeout: 120_000 }, () => {
  let scratch: string;
  let engine: Awaited<ReturnType<typeof sharedFaceEngine>>['engine'];
  let cloud: Server;
  let agent: AgentProcess | undefined;
  let kiosk: KioskServer;
  const uploads: SyncItem[] = [];
  const browsers = {} as Record<'ownQr' | 'otherQr' | 'face', Browser>;

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'portico-kiosk-stepup-'));
    engine = (await sharedFaceEngine(1)).engine;
    const enrolled = await engine.probe((await photo('bbt/leonard/leonard1.png')).toString('base64'));
    // Only the enrolled template comes from this engine; the agent runs its own.
    await engine.close();
    const page = replicaPage(
      [
        {
          ...replicaGuest(1, 'Leonard Hofstadter', enrolled.embedding),
          qrHash: sha256(LINK.leonard),
        },
        { ...replicaGuest(2, 'Rajesh Koothrappali', null), qrHash: sha256(LINK.raj) },
      ],
      // Lines around a genuine probe's score: Leonard's face is neither refused nor accepted.
      { requireLiveness: false, matchThreshold: 0.995, stepUpThreshold: 0.05, probeQualityMin: 0.4 } as never,
    );
    cloud = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const reply = (status: number, body: unknown) =>
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        const url = req.url ?? '';
        for (const lang of LANGS) {
          if (url.startsWith(`/v1/sync/events/${TOKENS[lang]}/replica`)) return reply(200, page);
          if (url === `/v1/events/${TOKENS[lang]}/branding`) {
            return reply(200, {
              name: NAMES[lang],
              status: 'open',
              startsAt: null,
              endsAt: null,
              timeZone: 'UTC',
              venue: null,
              branding: {
                displayName: NAMES[lang],
                primaryColor: lang === 'en' ? '#0b5fff' : '#0a7d3b',
                locale: lang,
              },
            });
          }
        }
        if (req.method === 'POST' && url === '/v1/sync/batch') {
          const { items } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { items: SyncItem[] };
          uploads.push(...items);
          return reply(200, {
            results: items.map((i) => ({
              clientId: i.clientId,
              status: 'accepted',
              checkInId: i.clientId,
              outcome: i.outcome,
              flags: [],
              receivedAt: new Date().toISOString(),
              code: null,
              detail: null,
            })),
          });
        }
        reply(404, { code: 'not_found' });
      });
    });
    await new Promise<void>((resolve) => cloud.listen(0, '127.0.0.1', resolve));
    const cloudUrl = `http://127.0.0.1:${(cloud.address() as AddressInfo).port}`;
    agent = await startAgentProcess(
      await agentEnv(
        cloudUrl,
        'pdt_test',
        LANGS.map((l) => TOKENS[l]),
        { AGENT_FACE: 'on', STAFF_PIN_HASH: hashPin(STAFF_PIN) },
      ),
    );
    for (let i = 0; ; i++) {
      const status = (await (await fetch(`${agent!.url}/status`)).json()) as {
        events: { templates: number }[];
      };
      if (status.events.every((e) => e.templates === 1)) break;
      if (i === 1200) throw new Error('the replicas never arrived');
      await new Promise((r) => setTimeout(r, 50));
    }
    kiosk = await startKioskServer({ agentUrl: agent!.url, cloudUrl });
    const leonard = await photo('bbt/leonard/leonard2.png');
    browsers.ownQr = await launchChromium({
      camera: await cameraFile(scratch, 'own-qr', leonard, LINK.leonard),
    });
    browsers.otherQr = await launchChromium({
      camera: await cameraFile(scratch, 'other-qr', leonard, LINK.raj),
    });
    browsers.face = await launchChromium({ camera: await cameraFile(scratch, 'face', leonard) });
  }, 180_000);

  afterAll(async () => {
    for (const b of Object.values(browsers)) await b?.close();
    await kiosk?.close();
    await agent?.kill('SIGKILL');
    await new Promise((r) => cloud?.close(r));
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  /** The kiosk with a face in view: the check-in starts by itself. `prepare` runs before it loads. */
  async function open(who: keyof typeof browsers, lang: Lang, prepare?: (page: Page) => Promise<void>) {
    const context = await browsers[who].newContext({
      viewport: { width: 1280, height: 800 },
      deviceScaleFactor: 1,
      permissions: ['camera'],
    });
    const page = await context.newPage();
    page.on('pageerror', (e) => console.error(`[kiosk page] ${e.message}`));
    await prepare?.(page);
    await page.goto(`${kiosk.url}/?event=${TOKENS[lang]}`);
    await page.locator('main').first().waitFor();
    return page;
  }
  const shot = (page: Page, name: string) => screenshot(page, SHOTS, name);
  const title = (page: Page) => page.locator('#result-title').innerText();
  /** The face in view goes through the guide and the look to the step-up screen. */
  async function toStepUp(page: Page) {
    await page.locator('[data-screen="step-up"]').waitFor({ timeout: 30_000 });
  }
  const uploaded = async (outcome: string, reason: string | null, factor: string) => {
    for (let i = 0; i < 200; i++) {
      const found = uploads.find(
        (u) =>
          u.outcome === outcome &&
          u.reason === reason &&
          (u as { stepUpFactor?: string }).stepUpFactor === factor &&
          !seen.has(u.clientId),
      );
      if (found) return void seen.add(found.clientId);
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no upload ${outcome} ${reason} ${factor}`);
  };
  const seen = new Set<string>();

  it("asks for the QR code or staff, never naming the candidate, and welcomes him with his own invitation's QR code", async () => {
    for (const lang of LANGS) {
      const page = await open('ownQr', lang);
      let stepUpShown = false;
      // The step-up screen may be brief: the QR code is in view from the start.
      await page.locator('[data-screen="step-up"], main.result').first().waitFor({ timeout: 30_000 });
      if (await page.locator('[data-screen="step-up"]').count()) {
        stepUpShown = true;
        expect(await page.locator('main').innerText()).not.toMatch(/Leonard|Hofstadter/);
      }
      await page.locator('main.result').waitFor({ timeout: 30_000 });
      expect(await title(page)).toBe(lang === 'en' ? 'Welcome, Leonard!' : 'Bem-vindo(a), Leonard!');
      await shot(page, `23-step-up-qr-welcome-${lang}`);
      await uploaded('success', null, 'qr');
      console.log(`[kiosk] step-up screen seen before the QR was read (${lang}): ${stepUpShown}`);
      await page.close();
    }
  }, 180_000);

  it("refuses another guest's QR code at the step-up with its own result", async () => {
    for (const lang of LANGS) {
      const page = await open('otherQr', lang);
      await page.locator('main.result').waitFor({ timeout: 30_000 });
      expect(await page.locator('main').getAttribute('data-screen')).toMatch(/step-up-failed/);
      expect(await title(page)).toBe(
        lang === 'en' ? 'We could not confirm who you are' : 'Não conseguimos confirmar quem é você',
      );
      await shot(page, `24-step-up-failed-${lang}`);
      await uploaded('denied', 'step_up_failed', 'qr');
      await page.close();
    }
  }, 180_000);

  it('staff confirm the candidate by name after their PIN', async () => {
    for (const lang of LANGS) {
      const page = await open('face', lang);
      await toStepUp(page);
      expect(await page.locator('#step-up-title').innerText()).toBe(
        lang === 'en' ? 'Almost there' : 'Quase lá',
      );
      expect(await page.locator('main').innerText()).not.toMatch(/Leonard|Hofstadter/);
      await expect
        .poll(() => page.locator('video').evaluate((v: HTMLVideoElement) => v.videoWidth))
        .toBeGreaterThan(0);
      await shot(page, `22-step-up-${lang}`);
      await page.click('#step-up-staff');
      await page.locator('[data-screen="staff-pin"]').waitFor();
      for (const d of STAFF_PIN) await page.click(`.pinpad [data-key="${d}"]`);
      await page.click('.pinpad [data-key="OK"]');
      await page.locator('[data-screen="step-up-confirm"]').waitFor();
      expect(await page.locator('#step-up-name').innerText()).toBe(
        lang === 'en' ? 'Is this Leonard Hofstadter?' : 'É Leonard Hofstadter?',
      );
      await shot(page, `25-step-up-staff-confirm-${lang}`);
      await page.click('#step-up-yes');
      await page.locator('main.result').waitFor();
      expect(await title(page)).toBe(lang === 'en' ? 'Welcome, Leonard!' : 'Bem-vindo(a), Leonard!');
      await uploaded('success', null, 'staff');
      await page.close();
    }
  }, 180_000);

  it('returns to attract when the step-up expires (an answer of the agent shape, routed)', async () => {
    // The page's clock runs as the real one until the test moves it on past the expiry.
    const page = await open('face', 'en', async (p) => {
      await p.clock.install();
      await p.route('**/agent/events/*/identify', (route) =>
        route.fulfill({
          status: 200,
          contentType: 'application/json',
          body: JSON.stringify({
            outcome: 'step_up_required',
            attemptId: 'a1',
            factors: ['qr', 'staff'],
            expiresAt: new Date(Date.now() + 12_000).toISOString(),
          }),
        }),
      );
    });
    await toStepUp(page);
    await page.clock.runFor(5_000);
    // Still there, counting down, until the expiry.
    expect(await page.locator('[data-screen="step-up"]').count()).toBe(1);
    expect(Number(await page.locator('#countdown').innerText())).toBeLessThanOrEqual(7);
    await page.clock.runFor(8_000);
    await page.locator('[data-screen="attract"]').waitFor({ timeout: 5_000 });
    await page.close();
  });

  it('keeps the camera on a retake and says what to fix (answers of the agent shape, routed)', async () => {
    const cases = [
      { reason: 'move_closer', en: 'Come a little closer', 'pt-BR': 'Chegue um pouco mais perto' },
      { reason: 'more_light', en: 'More light please', 'pt-BR': 'Precisamos de mais luz' },
    ] as const;
    for (const lang of LANGS) {
      for (const [i, c] of cases.entries()) {
        // The agent's problem shape: a retake's reasons at the top level, as the cloud answers.
        const page = await open('face', lang, (p) =>
          p.route('**/agent/events/*/identify', (route) =>
            route.fulfill({
              status: 422,
              contentType: 'application/problem+json',
              body: JSON.stringify({
                type: 'https://portico.dev/problems/face_retake',
                title: 'Unprocessable Entity',
                status: 422,
                code: 'face_retake',
                detail: 'too poor',
                reasons: [c.reason],
                quality: 0.1,
              }),
            }),
          ),
        );
        const hint = page.locator(`#hint[data-retake="${c.reason}"]`);
        await hint.waitFor({ timeout: 30_000 });
        expect(await hint.innerText()).toBe(c[lang]);
        expect(await page.locator('[data-screen="camera"] video').count()).toBe(1);
        await shot(page, `${26 + i}-retake-${c.reason.replace('_', '-')}-${lang}`);
        await page.close();
      }
    }
  }, 180_000);
});
