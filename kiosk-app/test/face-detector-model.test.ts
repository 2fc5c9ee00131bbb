// The build step of the in-page face detector's model (scripts/face-detector-model.ts): from the npm
// package's BlazeFace file to the pinned model with TFLite metadata, made once and cached, and a file
// that is not the pinned one refused with an error that names the package.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faceDetectorModel, MODEL_SHA256, SOURCE_SHA256 } from '../scripts/face-detector-model.js';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const SOURCE = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@mediapipe/face_detection/package.json')),
  'face_detection_short_range.tflite',
);

describe('the face detector model build step', () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'portico-face-model-'));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('makes the pinned model from the npm package, and reuses it once made', async () => {
    const cacheDir = path.join(scratch, 'cache');
    const made = await faceDetectorModel({ cacheDir });
    const bytes = await readFile(made);
    expect(sha256(bytes)).toBe(MODEL_SHA256);
    // The original model is inside, whole.
    expect(bytes.includes(await readFile(SOURCE))).toBe(true);
    expect(bytes.includes(Buffer.from('TFLITE_METADATA'))).toBe(true);
    const first = await stat(made);
    expect(await faceDetectorModel({ cacheDir })).toBe(made);
    expect((await stat(made)).mtimeMs).toBe(first.mtimeMs);
  });

  it('makes the model again when the cached file is not the pinned one', async () => {
    const cacheDir = path.join(scratch, 'damaged');
    const made = await faceDetectorModel({ cacheDir });
    await writeFile(made, 'not a model');
    expect(sha256(await readFile(await faceDetectorModel({ cacheDir })))).toBe(MODEL_SHA256);
  });

  it('refuses a source file that is not the pinned one, naming the package and both hashes', async () => {
    const changed = Buffer.from(await readFile(SOURCE));
    changed[changed.length - 1] = changed.at(-1)! ^ 0xff;
    const source = path.join(scratch, 'face_detection_short_range.tflite');
    await writeFile(source, changed);
    const cacheDir = path.join(scratch, 'refused');
    const refused = faceDetectorModel({ source, cacheDir });
    await expect(refused).rejects.toThrow(/@mediapipe\/face_detection@0\.4\.1646425229/);
    await expect(refused).rejects.toThrow(SOURCE_SHA256);
    await expect(refused).rejects.toThrow(sha256(changed));
    await expect(stat(path.join(cacheDir, 'face_detector.tflite'))).rejects.toThrow(/ENOENT/);
  });
});
