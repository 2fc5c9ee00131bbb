// Debian's Chromium driven by playwright-core, launched as every browser test here needs it (the flags
// ENVIRONMENT.md lists for root in a container), with an optional fake camera playing a file.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

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

/** Headless Chromium; with `camera` (an .mjpeg or .y4m file) its fake camera plays that file, allowed without a prompt. */
export function launchChromium(options: { camera?: string } = {}): Promise<Browser> {
  const camera = options.camera
    ? [
        '--use-fake-ui-for-media-stream',
        '--use-fake-device-for-media-stream',
        `--use-file-for-fake-video-capture=${options.camera}`,
      ]
    : [];
  return chromium.launch({ executablePath: CHROMIUM, args: [...FLAGS, ...camera] });
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
