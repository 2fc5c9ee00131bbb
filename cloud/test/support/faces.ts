// Face photos for tests over HTTP: the labelled set in ../shared/faces when present, else the
// registry-fetched group photos the face engine keeps in .models/fixtures. Plus degraded variants
// (blurred, darkened, shrunk) made with sharp, which the cloud reaches through the face engine.
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFaceEngine, resolveModelDir, type FaceEngine } from '@portico/face-engine';
import { faceServiceOf, type FaceService } from '../../src/infra/face.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const workspaceRoot = path.resolve(here, '..', '..', '..');

/** `../shared/faces` next to the workspace root; PORTICO_FACES_DIR overrides it (a missing folder tests the fallback). */
export const LABELLED_DIR = path.resolve(
  process.env.PORTICO_FACES_DIR ?? path.join(workspaceRoot, '..', 'shared', 'faces'),
);
export const HAS_LABELLED = existsSync(LABELLED_DIR);
export const LABELLED_SKIP_REASON = `../shared/faces not found at ${LABELLED_DIR}: labelled-photo tests skipped`;
/** `../shared/eval-faces`: more identities, for false accepts of strangers (PORTICO_EVAL_FACES_DIR overrides it). */
export const EVAL_FACES_DIR = path.resolve(
  process.env.PORTICO_EVAL_FACES_DIR ?? path.join(workspaceRoot, '..', 'shared', 'eval-faces'),
);
export const HAS_EVAL_FACES = existsSync(EVAL_FACES_DIR);
export const EVAL_FACES_SKIP_REASON = `../shared/eval-faces not found at ${EVAL_FACES_DIR}: open-set tests skipped`;
export const REGISTRY_DIR = path.join(resolveModelDir(), 'fixtures');
export const HAS_REGISTRY = existsSync(path.join(REGISTRY_DIR, 'sample3.jpg'));
export const HAS_MODELS = existsSync(path.join(resolveModelDir(), 'fr_feature.onnx'));
export const MODELS_SKIP_REASON =
  'face models not found: run `pnpm --filter @portico/face-engine models` (face tests skipped)';

// sharp is a dependency of the face engine, not of the cloud: load the engine's copy.
type SharpFn = (input?: Buffer) => {
  blur(sigma: number): ReturnType<SharpFn>;
  linear(a: number, b: number): ReturnType<SharpFn>;
  resize(width: number): ReturnType<SharpFn>;
  rotate(): ReturnType<SharpFn>;
  jpeg(options?: { quality?: number }): ReturnType<SharpFn>;
  png(): ReturnType<SharpFn>;
  metadata(): Promise<{ width?: number; height?: number }>;
  toBuffer(): Promise<Buffer>;
};
type SharpCreate = (options: {
  create: { width: number; height: number; channels: 3; background: string };
}) => ReturnType<SharpFn>;
const sharp = createRequire(path.join(workspaceRoot, 'shared', 'face-engine', 'package.json'))(
  'sharp',
) as SharpFn & SharpCreate;

export interface Photo {
  /** Where it came from, for messages. */
  name: string;
  bytes: Buffer;
}

const read = async (file: string): Promise<Photo> => ({
  name: path.relative(path.dirname(path.dirname(file)), file),
  bytes: await readFile(file),
});

function labelled(rel: string): string {
  return path.join(LABELLED_DIR, rel);
}

function firstImages(dir: string, count: number): string[] {
  return readdirSync(dir)
    .filter((f) => /\.(jpe?g|png)$/i.test(f))
    .sort()
    .slice(0, count)
    .map((f) => path.join(dir, f));
}

/**
 * Clean, frontal photos of different people. With the labelled set: one photo each of several
 * identities; without it: the registry group photos whose primary face scores above 0.5.
 */
export async function cleanPhotos(): Promise<Photo[]> {
  if (HAS_LABELLED) {
    const rels = ['johns/John_Simm', 'bbt/leonard', 'bbt/sheldon', 'johns/John_Savage', 'bbt/raj'];
    return Promise.all(rels.map((r) => read(firstImages(labelled(r), 1)[0]!)));
  }
  return Promise.all(
    ['sample3.jpg', 'sample6.jpg', 'sample1.jpg', 'sample5.jpg'].map((f) => read(path.join(REGISTRY_DIR, f))),
  );
}

/** Two different photos of the same person (labelled), or the same photo re-encoded at 90 % (registry). */
export async function samePersonPair(): Promise<[Photo, Photo]> {
  if (HAS_LABELLED) {
    const [a, b] = firstImages(labelled('johns/John_Salley'), 2);
    return [await read(a!), await read(b!)];
  }
  const a = await read(path.join(REGISTRY_DIR, 'sample3.jpg'));
  const { width = 0 } = await sharp(a.bytes).metadata();
  return [
    a,
    {
      name: `${a.name} at 90 %`,
      bytes: await sharp(a.bytes)
        .resize(Math.round(width * 0.9))
        .jpeg({ quality: 90 })
        .toBuffer(),
    },
  ];
}

export type Degradation = 'blurred' | 'darkened' | 'shrunk';

/** Blur (Gaussian sigma 3), darken to 10 % brightness, shrink to a fifth of the width. */
export async function degrade(photo: Photo, how: Degradation): Promise<Photo> {
  const img = sharp(photo.bytes).rotate();
  const { width = 0 } = await sharp(photo.bytes).metadata();
  const out =
    how === 'blurred'
      ? img.blur(3)
      : how === 'darkened'
        ? img.linear(0.1, 0)
        : img.resize(Math.max(8, Math.round(width / 5)));
  return { name: `${photo.name} ${how}`, bytes: await out.jpeg({ quality: 90 }).toBuffer() };
}

/** A plain grey PNG: decodes fine, holds no face. */
export async function facelessPng(): Promise<Buffer> {
  return sharp({ create: { width: 320, height: 240, channels: 3, background: '#808080' } })
    .png()
    .toBuffer();
}

export const base64 = (bytes: Buffer) => bytes.toString('base64');

/** One engine per test file (worker threads + ONNX sessions are heavy); close it in afterAll. */
export async function sharedFaceEngine(workers = 2): Promise<{ engine: FaceEngine; face: FaceService }> {
  const engine = await createFaceEngine({ workers });
  return { engine, face: faceServiceOf(engine) };
}
