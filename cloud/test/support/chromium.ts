// Debian's Chromium driven by playwright-core, launched as every browser test here needs it (the flags
// ENVIRONMENT.md lists for root in a container), with an optional fake camera playing a file.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type Page,
} from 'playwright-core';
import { readProcesses } from './processes.js';

export const CHROMIUM = '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const cameraFlags = (camera?: string) =>
  camera
    ? [
        '--use-fake-ui-for-media-stream',
        '--use-fake-device-for-media-stream',
        `--use-file-for-fake-video-capture=${camera}`,
      ]
    : [];

/** Headless Chromium; with `camera` (an .mjpeg or .y4m file) its fake camera plays that file, allowed without a prompt. */
export function launchChromium(options: { camera?: string } = {}): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...FLAGS, ...cameraFlags(options.camera)] });
}

/**
 * Headless Chromium with a profile of its own in `profile` (a folder), as a kiosk has: its one context
 * keeps its HTTP cache, and Chromium's code cache with it, from page to page, so the kiosk's in-page
 * detector (13 MB of WebAssembly) is compiled once per profile instead of once per page. A context made
 * with `browser.newContext()` keeps no code cache: each page compiled it again, about a second of CPU.
 */
export function launchChromiumProfile(
  profile: string,
  options: { camera?: string } & Pick<
    BrowserContextOptions,
    'viewport' | 'deviceScaleFactor' | 'permissions'
  >,
): Promise<BrowserContext> {
  const { camera, ...context } = options;
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: [...FLAGS, ...cameraFlags(camera)],
    ...context,
  });
}

/**
 * CPU seconds used so far by the Chromium whose fake camera plays `camera` (`launchChromium`), its
 * browser, GPU, utility and renderer processes together (user + system time, from /proc); undefined
 * where it is not found (or there is no /proc). For figures a test prints.
 */
export function chromiumCpuSeconds(camera: string): number | undefined {
  const processes = readProcesses();
  const root = processes.find(
    (p) => p.cmd.includes(`--use-file-for-fake-video-capture=${camera}`) && !p.cmd.includes('--type='),
  );
  if (!root) return undefined;
  const tree = new Set([root.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of processes) {
      if (!tree.has(p.pid) && tree.has(p.ppid)) {
        tree.add(p.pid);
        grew = true;
      }
    }
  }
  return processes.filter((p) => tree.has(p.pid)).reduce((sum, p) => sum + p.cpuSeconds, 0);
}

/** A fake camera file: an MJPEG stream is JPEG frames one after the other (here one frame, 30 times). */
export async function writeMjpeg(file: string, jpeg: Buffer): Promise<string> {
  await writeFile(file, Buffer.concat(Array.from({ length: 30 }, () => jpeg)));
  return file;
}

// sharp is the face engine's dependency, not the cloud's: load the engine's copy.
type Sharp = (input: Buffer) => {
  rotate(): ReturnType<Sharp>;
  resize(width: number): ReturnType<Sharp>;
  jpeg(options: { quality: number }): ReturnType<Sharp>;
  toBuffer(): Promise<Buffer>;
};
const sharp = createRequire(
  fileURLToPath(new URL('../../../shared/face-engine/package.json', import.meta.url)),
)('sharp') as Sharp;

/** A fake camera showing a photo (upright, 640 px wide): the file `--use-file-for-fake-video-capture` plays. */
export async function cameraOf(file: string, photo: Buffer): Promise<string> {
  return writeMjpeg(file, await sharp(photo).rotate().resize(640).jpeg({ quality: 90 }).toBuffer());
}

/**
 * `page` as a PNG in `folder` (a test's committed `screenshots/`), taken only with UPDATE_SCREENSHOTS=1:
 * they are there to be looked at. A run that only tests skips them (about 200 a run, a third of a second
 * of Chromium each).
 */
export async function screenshot(
  page: Page,
  folder: string,
  name: string,
  options: { fullPage?: boolean } = {},
): Promise<void> {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  // A camera's picture, not the black box before its first frame (seen on the kiosk's attract screen
  // once screenshots stopped pacing the tests).
  await page.waitForFunction(
    "[...document.querySelectorAll('video')].every((v) => !v.srcObject || v.readyState >= 2)",
    null,
    { timeout: 10_000 },
  );
  await mkdir(folder, { recursive: true });
  await page.screenshot({ path: path.join(folder, `${name}.png`), ...options });
}
