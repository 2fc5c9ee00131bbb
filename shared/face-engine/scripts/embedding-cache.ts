/**
 * Every labelled photo of the evaluation embedded once: the product's chain (`FaceEngine.analyze`,
 * worker processes on every core) runs on a photo only when the cache has no entry for its bytes and
 * this chain. An entry is keyed by the photo's sha256 and the chain's id (see chainId), so a change
 * of model or stage that moves a result re-embeds. The cache lives outside the repository
 * and the photo folders (`PORTICO_EVAL_CACHE`, else `$XDG_CACHE_HOME/portico/face-eval`, else
 * `~/.cache/portico/face-eval`); deleting it only costs time.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createFaceEngine, type FaceEngine } from '../src/engine.js';
import { isFaceEngineError } from '../src/errors.js';
import { labelledImages } from '../src/evaluation.js';
import { EMBEDDING_MODEL_ID } from '../src/models/manifest.js';
import { fixtureDir, resolveModelDir } from '../src/models/model-dir.js';
import type { HeadPose, Point, QualityFactors } from '../src/types.js';

export interface EmbeddedPhoto {
  /** `<set>/<person>`: identities of different sets stay apart. */
  readonly label: string;
  readonly file: string;
  readonly embedding: Float32Array;
  readonly quality: number;
  readonly qualityFactors: QualityFactors;
  readonly pose: HeadPose;
  /** Eye-centre distance in image pixels. */
  readonly interocular: number;
  readonly landmarks68: readonly Point[];
}

interface CacheEntry {
  readonly embedding: string;
  readonly quality: number;
  readonly qualityFactors: QualityFactors;
  readonly pose: HeadPose;
  readonly interocular: number;
  readonly landmarks68: readonly Point[];
  /** Set when the chain refused the photo (e.g. no_face_detected). */
  readonly error?: string;
}

/** Photos every chain runs on to tell chains apart (the fixtures `pnpm models` fetches). */
const CANARIES = ['sample1.jpg', 'sample2.jpg'];

/**
 * The chain's id: the embedding model id and what the chain makes of two fixed photos (embedding and
 * quality, rounded), so that any change to a model or a stage that moves a result starts a new cache,
 * and a change that moves nothing (a comment, a refactor) keeps it.
 */
export async function chainId(engine: FaceEngine): Promise<string> {
  const hash = createHash('sha256').update(EMBEDDING_MODEL_ID);
  for (const name of CANARIES) {
    const a = await engine.analyze(await readFile(path.join(fixtureDir(resolveModelDir()), name)));
    hash.update(JSON.stringify([a.quality.toFixed(4), Array.from(a.embedding, (v) => v.toFixed(4))]));
  }
  return hash.digest('hex').slice(0, 16);
}

export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PORTICO_EVAL_CACHE) return path.resolve(env.PORTICO_EVAL_CACHE);
  const base = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'portico', 'face-eval');
}

export interface EmbeddedSet {
  readonly folder: string;
  readonly images: number;
  readonly photos: EmbeddedPhoto[];
  readonly failed: string[];
  /** Photos the chain ran on in this call (the others came from the cache). */
  readonly computed: number;
}

/**
 * A folder given is a set (`<set>/<person>/*.jpg`) or a parent of sets (`<root>/<set>/<person>/*.jpg`);
 * each set comes back on its own.
 */
export async function setsOf(folder: string): Promise<string[]> {
  // labelledImages finds `<set>/<person>` in a parent of sets, and nothing in a set itself.
  const images = await labelledImages(folder);
  if (images.length === 0) return [folder];
  return [...new Set(images.map((i) => i.label.split('/')[0]!))].sort().map((s) => path.join(folder, s));
}

export async function embedSets(
  folders: readonly string[],
  options: { workers?: number; onProgress?: (done: number, total: number) => void } = {},
): Promise<EmbeddedSet[]> {
  const engine = await createFaceEngine(options.workers ? { workers: options.workers } : {});
  try {
    const dir = path.join(cacheDir(), await chainId(engine));
    await mkdir(dir, { recursive: true });
    return await embedInto(dir, engine, folders, options.onProgress);
  } finally {
    await engine.close();
  }
}

async function embedInto(
  dir: string,
  engine: FaceEngine,
  folders: readonly string[],
  onProgress?: (done: number, total: number) => void,
): Promise<EmbeddedSet[]> {
  const jobs: Array<{ set: number; label: string; file: string }> = [];
  const sets: Array<{ folder: string; images: number }> = [];
  for (const folder of folders) {
    const setName = path.basename(folder);
    const images = await labelledImagesOfSet(folder);
    for (const image of images)
      jobs.push({ set: sets.length, label: `${setName}/${image.label}`, file: image.file });
    sets.push({ folder, images: images.length });
  }
  const results: Array<{ entry: CacheEntry; computed: boolean }> = new Array(jobs.length);
  let next = 0;
  let done = 0;
  const lane = async (): Promise<void> => {
    while (next < jobs.length) {
      const at = next++;
      const bytes = await readFile(jobs[at]!.file);
      const key = createHash('sha256').update(bytes).digest('hex');
      const entryFile = path.join(dir, `${key}.json`);
      let computed = false;
      let entry: CacheEntry;
      if (existsSync(entryFile)) {
        entry = JSON.parse(await readFile(entryFile, 'utf8')) as CacheEntry;
      } else {
        computed = true;
        entry = await analyse(engine, bytes);
        const partial = `${entryFile}.${process.pid}.tmp`;
        await writeFile(partial, JSON.stringify(entry));
        await rename(partial, entryFile);
      }
      results[at] = { entry, computed };
      onProgress?.(++done, jobs.length);
    }
  };
  // Two requests per worker keep every worker busy while the next photo is read.
  await Promise.all(Array.from({ length: Math.max(2, os.availableParallelism() * 2) }, lane));
  return sets.map((s, index) => {
    const photos: EmbeddedPhoto[] = [];
    const failed: string[] = [];
    let computed = 0;
    jobs.forEach((job, at) => {
      if (job.set !== index) return;
      const { entry, computed: fresh } = results[at]!;
      if (fresh) computed++;
      if (entry.error) {
        failed.push(`${path.relative(s.folder, job.file)}: ${entry.error}`);
        return;
      }
      const bytes = Buffer.from(entry.embedding, 'base64');
      photos.push({
        label: job.label,
        file: job.file,
        embedding: new Float32Array(
          bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
        ),
        quality: entry.quality,
        qualityFactors: entry.qualityFactors,
        pose: entry.pose,
        interocular: entry.interocular,
        landmarks68: entry.landmarks68,
      });
    });
    return { folder: s.folder, images: s.images, photos, failed, computed };
  });
}

/** Images of one set, labelled by person (`<set>/<person>/*.jpg`). */
async function labelledImagesOfSet(folder: string): Promise<Array<{ label: string; file: string }>> {
  // labelledImages wants identity folders two levels down; a set's persons are one level down.
  const parent = path.dirname(folder);
  const name = path.basename(folder);
  return (await labelledImages(parent))
    .filter((i) => i.label.startsWith(`${name}/`))
    .map((i) => ({ label: i.label.slice(name.length + 1), file: i.file }));
}

async function analyse(engine: FaceEngine, bytes: Buffer): Promise<CacheEntry> {
  try {
    const a = await engine.analyze(bytes);
    const eyes = a.face.landmarks;
    return {
      embedding: Buffer.from(a.embedding.buffer, a.embedding.byteOffset, a.embedding.byteLength).toString(
        'base64',
      ),
      quality: a.quality,
      qualityFactors: a.qualityFactors,
      pose: a.pose,
      interocular: Math.hypot(eyes[1]!.x - eyes[0]!.x, eyes[1]!.y - eyes[0]!.y),
      landmarks68: a.face.landmarks68.map((p) => ({
        x: Math.round(p.x * 100) / 100,
        y: Math.round(p.y * 100) / 100,
      })),
    };
  } catch (error) {
    if (!isFaceEngineError(error)) throw error;
    return {
      embedding: '',
      quality: 0,
      qualityFactors: { detector: 0, size: 0, sharpness: 0, exposure: 0, pose: 0 },
      pose: { yaw: 0, pitch: 0, roll: 0 },
      interocular: 0,
      landmarks68: [],
      error: error.code,
    };
  }
}
