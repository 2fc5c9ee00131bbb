// The live face guide's in-page detector (src/ui/face-detector.ts) in real Chromium, on a fake camera
// showing a real face photo: the page loads MediaPipe's FaceDetector from the kiosk server's /vision/
// under the kiosk page's own security headers, finds the face where the agent's detector finds it (the
// face engine, as `POST /face-box` runs it on the page's 320x240 copy) so the guide says the same
// thing, finds no face on a grey wall, and without its files loads as null (the page then asks the
// agent). The detection rate at the camera's pace and the time per frame are printed.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHROMIUM,
  HAS_CHROMIUM,
  launchChromium,
  launchChromiumProfile,
  writeMjpeg,
} from '@portico/test-support/chromium';
import { isFaceEngineError } from '../../shared/face-engine/src/errors.js';
import {
  base64,
  HAS_LABELLED,
  HAS_MODELS,
  LABELLED_DIR,
  LABELLED_SKIP_REASON,
  MODELS_SKIP_REASON,
  sharedFaceEngine,
} from '@portico/test-support/faces';
import { bundleUi, startKioskServer, type KioskServer } from '../src/server.js';
import { framingFix, type FaceBox } from '../src/ui/guide.js';
import type * as FaceDetectorModule from '../src/ui/face-detector.js';

const canRun = HAS_CHROMIUM && HAS_MODELS && HAS_LABELLED;
if (!canRun) {
  console.warn(
    `[face-detector] browser tests skipped: ${!HAS_CHROMIUM ? `${CHROMIUM} not installed` : !HAS_MODELS ? MODELS_SKIP_REASON : LABELLED_SKIP_REASON}`,
  );
}

// sharp is the face engine's dependency: load the engine's copy.
type Sharp = (
  input?: Buffer | { create: { width: number; height: number; channels: 3; background: string } },
) => {
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

const WALL = '#8a8a8a';
/** How far apart the two detectors' boxes may be: centres (fraction of the frame), widths (ratio). */
const CENTRE_TOLERANCE = 0.05;
const WIDTH_RATIO = { min: 0.8, max: 1.4 };
/** The page's copy of the module, served same-origin so the page's CSP applies to it. */
const MODULE_PATH = '/face-detector-under-test.js';
/** A module script that hands the module to the test (an inline script would break the CSP). */
const MAIN_PATH = '/face-detector-under-test-main.js';
const PAGE_PATH = '/face-detector-under-test';
const PAGE = `<!doctype html><video muted playsinline></video><script type="module" src="${MAIN_PATH}"></script>`;

/** A 640x480 camera frame: the photo at `size` px placed at (left, top) on a grey wall. */
async function frameOf(photo: Buffer, place: { size: number; left: number; top: number }) {
  const face = await sharp(photo).resize(place.size).toBuffer();
  return sharp(face)
    .extend({
      top: place.top,
      bottom: 480 - place.top - place.size,
      left: place.left,
      right: 640 - place.left - place.size,
      background: WALL,
    })
    .jpeg({ quality: 90 })
    .toBuffer();
}

interface Run {
  loaded: boolean;
  size?: [number, number];
  boxes: (FaceBox | null)[];
  /** detect() at the camera's pace (one call per new frame): calls, seconds. */
  paced: { calls: number; seconds: number; ms: number[] };
  /** detect() back to back on the current frame: ms each. */
  burst: number[];
  /** New camera frames per second without the detector. */
  cameraFps: number;
}

describe.skipIf(!canRun)('the in-page face detector in Chromium', { timeout: 120_000 }, () => {
  let scratch: string;
  let engine: Awaited<ReturnType<typeof sharedFaceEngine>>['engine'];
  let kiosk: KioskServer;
  let bundle: string;
  const browsers: (Browser | BrowserContext)[] = [];
  /** The kiosk page's own headers (its CSP), which the page under test is served with. */
  let kioskHeaders: Record<string, string>;
  /** Camera frames by name, as JPEG. */
  const frames: Record<'centred' | 'offCentre' | 'far' | 'wall', Buffer> = {} as never;

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'portico-face-detector-'));
    engine = (await sharedFaceEngine(1)).engine;
    // No agent and no cloud: the page under test only needs the kiosk server's own files.
    kiosk = await startKioskServer({ agentUrl: 'http://127.0.0.1:9', cloudUrl: 'http://127.0.0.1:9' });
    // The same esbuild settings as app.js (tasks-vision's ES module bundled in).
    bundle = await bundleUi(fileURLToPath(new URL('../src/ui/face-detector.ts', import.meta.url)));
    // Read once: fetched again for every page, a reused keep-alive connection the server had just
    // closed failed one page's load (ECONNRESET) on a loaded machine.
    const kioskPage = await fetch(`${kiosk.url}/`);
    await kioskPage.text();
    // Its own length and connection headers would not fit PAGE's body.
    kioskHeaders = Object.fromEntries(
      [...kioskPage.headers].filter(
        ([name]) => !['content-length', 'connection', 'keep-alive'].includes(name),
      ),
    );
    expect(kioskHeaders['content-security-policy']).toContain("script-src 'self'");
    const dir = path.join(LABELLED_DIR, 'bbt/leonard');
    const photo = await readFile(path.join(dir, (await readdir(dir)).sort()[0]!));
    frames.centred = await frameOf(photo, { size: 300, left: 170, top: 90 });
    frames.offCentre = await frameOf(photo, { size: 220, left: 20, top: 130 });
    frames.far = await frameOf(photo, { size: 110, left: 265, top: 185 });
    frames.wall = await sharp({ create: { width: 640, height: 480, channels: 3, background: WALL } })
      .jpeg({ quality: 90 })
      .toBuffer();
  }, 120_000);

  afterAll(async () => {
    for (const b of browsers) await b.close();
    await kiosk?.close();
    await engine?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  /**
   * A page of the kiosk's origin with the kiosk page's own headers (its CSP), showing `frame` as the
   * camera: in a browser of its own, or a new page of `context`.
   */
  async function pageWithCamera(frame: keyof typeof frames, context?: BrowserContext): Promise<Page> {
    let page: Page;
    if (context) {
      page = await context.newPage();
    } else {
      const browser = await launchChromium({
        camera: await writeMjpeg(path.join(scratch, `${frame}.mjpeg`), frames[frame]),
      });
      browsers.push(browser);
      page = await browser.newPage();
    }
    await page.route(`${kiosk.url}${PAGE_PATH}`, (route) =>
      route.fulfill({ status: 200, headers: kioskHeaders, body: PAGE }),
    );
    await page.route(`${kiosk.url}${MODULE_PATH}`, (route) =>
      route.fulfill({ contentType: 'text/javascript', body: bundle }),
    );
    await page.route(`${kiosk.url}${MAIN_PATH}`, (route) =>
      route.fulfill({
        contentType: 'text/javascript',
        body: `import * as m from '${MODULE_PATH}'; window.faceDetectorModule = m;`,
      }),
    );
    await page.goto(`${kiosk.url}${PAGE_PATH}`);
    await page.waitForFunction(() => 'faceDetectorModule' in window);
    return page;
  }

  /** Opens the camera, loads the detector and runs it on `count` camera frames, then `burst` times back to back. */
  const run = (page: Page, count = 30, burst = 50): Promise<Run> =>
    page.evaluate(
      async ({ count, burst }) => {
        const { loadFaceDetector } = (window as unknown as { faceDetectorModule: typeof FaceDetectorModule })
          .faceDetectorModule;
        const video = document.querySelector('video')!;
        video.srcObject = await navigator.mediaDevices.getUserMedia({ video: { width: 640, height: 480 } });
        await video.play();
        let shown = 0;
        const count1s = (until: number) => {
          if (performance.now() < until) {
            shown++;
            video.requestVideoFrameCallback(() => count1s(until));
          }
        };
        video.requestVideoFrameCallback(() => count1s(performance.now() + 1000));
        await new Promise((resolve) => setTimeout(resolve, 1100));
        const cameraFps = shown;
        const detector = await loadFaceDetector();
        const paced = { calls: 0, seconds: 0, ms: [] as number[] };
        if (!detector) return { loaded: false, boxes: [], paced, burst: [], cameraFps };
        const boxes: (FaceBox | null)[] = [];
        const started = performance.now();
        await new Promise<void>((resolve) => {
          const onFrame = (now: number) => {
            const t0 = performance.now();
            boxes.push(detector.detect(video, now));
            paced.ms.push(performance.now() - t0);
            if (boxes.length >= count) resolve();
            else video.requestVideoFrameCallback(onFrame);
          };
          video.requestVideoFrameCallback(onFrame);
        });
        paced.calls = boxes.length;
        paced.seconds = (performance.now() - started) / 1000;
        const times: number[] = [];
        for (let i = 0; i < burst; i++) {
          const t0 = performance.now();
          detector.detect(video, t0);
          times.push(performance.now() - t0);
        }
        detector.close();
        return {
          loaded: true,
          size: [video.videoWidth, video.videoHeight] as [number, number],
          boxes,
          paced,
          burst: times,
          cameraFps,
        };
      },
      { count, burst },
    );

  /**
   * The agent's detector on the page's 320x240 copy of the frame: the face engine's probe, its primary
   * face as fractions of the frame (what the agent's `POST /face-box` answers).
   */
  async function agentBox(frame: Buffer): Promise<FaceBox | null> {
    const small = await sharp(frame).resize(320).jpeg({ quality: 80 }).toBuffer();
    try {
      const { image, face } = await engine.probe(base64(small));
      return {
        x: face.box.x / image.width,
        y: face.box.y / image.height,
        width: face.box.width / image.width,
        height: face.box.height / image.height,
      };
    } catch (error) {
      if (isFaceEngineError(error) && error.code === 'no_face_detected') return null;
      throw error;
    }
  }

  function expectNear(inPage: FaceBox | null, agent: FaceBox | null) {
    expect(inPage).not.toBeNull();
    expect(agent).not.toBeNull();
    const centre = (b: FaceBox) => [b.x + b.width / 2, b.y + b.height / 2];
    const [px, py] = centre(inPage!);
    const [ax, ay] = centre(agent!);
    expect(Math.abs(px! - ax!), `centre x: page ${px} agent ${ax}`).toBeLessThan(CENTRE_TOLERANCE);
    expect(Math.abs(py! - ay!), `centre y: page ${py} agent ${ay}`).toBeLessThan(CENTRE_TOLERANCE);
    const ratio = inPage!.width / agent!.width;
    expect(ratio, `width: page ${inPage!.width} agent ${agent!.width}`).toBeGreaterThan(WIDTH_RATIO.min);
    expect(ratio).toBeLessThan(WIDTH_RATIO.max);
  }

  const percentile = (values: number[], p: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  };

  it('finds a centred face where the agent finds it, and the guide says "hold still" from both', async () => {
    const result = await run(await pageWithCamera('centred'));
    expect(result.loaded).toBe(true);
    expect(result.size).toEqual([640, 480]);
    const agent = await agentBox(frames.centred);
    const last = result.boxes.at(-1) ?? null;
    console.log(`[face-detector] centred: page ${JSON.stringify(last)} agent ${JSON.stringify(agent)}`);
    // Every camera frame shows the face.
    expect(result.boxes.filter((b) => b === null)).toHaveLength(0);
    expectNear(last, agent);
    expect(framingFix(last)).toBeNull();
    expect(framingFix(agent)).toBeNull();
    const paced = result.paced;
    const ms = paced.ms.slice(1);
    console.log(
      `[face-detector] camera ${result.cameraFps} frames/s; at its pace: ${(paced.calls / paced.seconds).toFixed(1)} detections/s ` +
        `(${paced.calls} frames in ${paced.seconds.toFixed(2)} s; first call ${paced.ms[0]!.toFixed(1)} ms, ` +
        `then p50 ${percentile(ms, 50).toFixed(1)} ms p95 ${percentile(ms, 95).toFixed(1)} ms); back to back: ` +
        `p50 ${percentile(result.burst, 50).toFixed(1)} ms p95 ${percentile(result.burst, 95).toFixed(1)} ms per frame ` +
        `(${(1000 / percentile(result.burst, 50)).toFixed(0)} detections/s at most)`,
    );
  });

  it('finds a face off to the left where the agent finds it: "move left" from both', async () => {
    const result = await run(await pageWithCamera('offCentre'), 5, 0);
    const agent = await agentBox(frames.offCentre);
    const last = result.boxes.at(-1) ?? null;
    console.log(`[face-detector] off-centre: page ${JSON.stringify(last)} agent ${JSON.stringify(agent)}`);
    expectNear(last, agent);
    expect(framingFix(last)).toBe('moveLeft');
    expect(framingFix(agent)).toBe('moveLeft');
  });

  // BlazeFace short range is made for faces near the camera: a face this far (110 px of 640) is below
  // its reach, so the page says "fit your face in the oval" where the agent's guide says "come closer".
  it('does not find a face too far away (null) where the agent says "come closer"', async () => {
    const result = await run(await pageWithCamera('far'), 5, 0);
    expect(result.loaded).toBe(true);
    expect(result.boxes.every((b) => b === null)).toBe(true);
    expect(framingFix(await agentBox(frames.far))).toBe('tooFar');
  });

  it('finds no face on a grey wall (null), as the agent does', async () => {
    const result = await run(await pageWithCamera('wall'), 10, 0);
    expect(result.loaded).toBe(true);
    expect(result.boxes).toHaveLength(10);
    expect(result.boxes.every((b) => b === null)).toBe(true);
    expect(await agentBox(frames.wall)).toBeNull();
  });

  it('loads as null when its model is missing, so the page asks the agent instead', async () => {
    const page = await pageWithCamera('wall');
    await page.route(`${kiosk.url}/vision/face_detector.tflite`, (route) =>
      route.fulfill({ status: 404, body: '' }),
    );
    expect((await run(page, 1, 0)).loaded).toBe(false);
  });
  it("is kept by a kiosk's profile: the detector's files are revalidated (304), not sent again", async () => {
    const wasm = `${kiosk.url}/vision/vision_wasm_internal.wasm`;
    const first = await fetch(wasm);
    const etag = first.headers.get('etag');
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-cache');
    expect(etag).toMatch(/^"[^"]+"$/);
    expect((await first.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);
    const again = await fetch(wasm, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect((await again.arrayBuffer()).byteLength).toBe(0);
    expect((await fetch(wasm, { headers: { 'if-none-match': '"another"' } })).status).toBe(200);

    // Two pages of one profile, unrouted (Playwright's routing turns the browser's cache off), compile
    // the WebAssembly as MediaPipe's loader does (streaming: what Chromium's code cache keeps): the
    // second page's copy comes from the browser's cache, no byte of it over the network.
    const profile = await launchChromiumProfile(path.join(scratch, 'profile'), {});
    browsers.push(profile);
    const sent: number[] = [];
    for (let i = 0; i < 2; i++) {
      const page = await profile.newPage();
      await page.goto(`${kiosk.url}/`);
      const bytes: Promise<number>[] = [];
      page.on('requestfinished', (r) => {
        if (r.url() === wasm) bytes.push(r.sizes().then((s) => s.responseBodySize));
      });
      await page.evaluate(async () => {
        await WebAssembly.compileStreaming(fetch('/vision/vision_wasm_internal.wasm'));
      });
      sent.push(...(await Promise.all(bytes)));
      await page.close();
    }
    expect(sent).toHaveLength(2);
    expect(sent[0]).toBeGreaterThan(1_000_000);
    expect(sent[1]).toBe(0);
  });
});
