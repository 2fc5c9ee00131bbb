// Fetches the public face sets the evaluation supports, lays them out as `<set>/<person>/<photo>` and
// verifies them by checksum: the downloaded archive (where its sha256 is known) and the laid-out set
// (a digest over every photo, so a set put together by hand is checked the same way).
//
//   pnpm --filter @portico/face-engine fetch-eval-data [--dest DIR] [--verify-only] [lfw-dev|att ...]
//
// Default destination: `PORTICO_EVAL_FACES_DIR`, else `eval-faces/` at the workspace root (ignored by git).
// Each set is skipped when its folder already verifies. Docs: docs/identification/evaluation-data.md.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { resolveModelDir } from '../src/models/model-dir.js';

export interface EvalSet {
  name: string;
  what: string;
  url: string;
  /** sha256 of the archive at `url`, when it is known; the laid-out set is verified either way. */
  archiveSha256?: string;
  /** sha256 of the laid-out set as `setDigest` computes it. */
  setSha256: string;
  /** What the digest reads of each photo: its bytes, or (for a set we convert) its decoded pixels. */
  digestOf: 'bytes' | 'pixels';
}

export const EVAL_SETS: Record<string, EvalSet> = {
  'lfw-dev': {
    name: 'lfw-dev',
    what: 'Labeled Faces in the Wild (UMass Amherst, 2007), the half by identity listed in eval-data/lfw-dev.txt: 2,045 people, 4,281 photos',
    // The figshare mirror scikit-learn uses for LFW's lfw.tgz (180,566,744 bytes).
    url: 'https://ndownloader.figshare.com/files/5976018',
    archiveSha256: '055f7d9c632d7370e6fb4afc7468d40f970c34a80d4c6f50ffec63f5a8d536c0',
    setSha256: '214e6ca5266efae921f87bc3b922cad0ab9a990a2e37128f3926a115c7f552db',
    digestOf: 'bytes',
  },
  att: {
    name: 'att',
    what: 'The Database of Faces, AT&T Laboratories Cambridge (ORL): 40 people, 10 photos each, PGM converted to PNG',
    url: 'https://www.cl.cam.ac.uk/research/dtg/attarchive/pub/data/att_faces.zip',
    setSha256: '42bf015b386fc0868af415afd9de63e59232067d2b0c8607ccb86f87e3a0ea9f',
    digestOf: 'pixels',
  },
};

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/** Every photo of a `<person>/<photo>` folder, as sorted relative paths. */
export async function photosOf(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const person of (await readdir(dir)).sort()) {
    const p = path.join(dir, person);
    if (!(await stat(p)).isDirectory()) continue;
    for (const f of (await readdir(p)).sort()) if (/\.(jpe?g|png|pgm)$/i.test(f)) out.push(`${person}/${f}`);
  }
  return out;
}

/**
 * One sha256 for a laid-out set: over the sorted lines `<person>/<photo> <sha256>`, each photo's hash taken
 * of its bytes, or of its decoded 8-bit pixels (width, height, channels first) for a set we convert.
 */
export async function setDigest(dir: string, digestOf: 'bytes' | 'pixels' = 'bytes'): Promise<string> {
  const lines: string[] = [];
  for (const rel of await photosOf(dir)) {
    const file = path.join(dir, rel);
    let h: string;
    if (digestOf === 'bytes') h = await sha256File(file);
    else {
      const { data, info } = await sharp(file).raw().toBuffer({ resolveWithObject: true });
      h = createHash('sha256')
        .update(`${info.width}x${info.height}x${info.channels}\n`)
        .update(data)
        .digest('hex');
    }
    lines.push(`${rel.replace(/\.(pgm|png)$/i, '')} ${h}`);
  }
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

export interface Verdict {
  ok: boolean;
  photos: number;
  digest: string;
}

/** Does the folder hold the set, photo for photo? */
export async function verifySet(dir: string, set: Pick<EvalSet, 'setSha256' | 'digestOf'>): Promise<Verdict> {
  if (!existsSync(dir)) return { ok: false, photos: 0, digest: '' };
  const photos = (await photosOf(dir)).length;
  const digest = await setDigest(dir, set.digestOf);
  return { ok: digest === set.setSha256, photos, digest };
}

async function download(url: string, file: string, sha256?: string): Promise<void> {
  const res = await fetch(url, { redirect: 'follow' });
  if (!res.ok || !res.body) throw new Error(`${url}: HTTP ${res.status}`);
  await pipeline(Readable.fromWeb(res.body as WebReadableStream), createWriteStream(file));
  if (sha256) {
    const got = await sha256File(file);
    if (got !== sha256) throw new Error(`${url}: sha256 ${got}, expected ${sha256}: not extracted`);
  }
}

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.error?.message})`);
}

/** lfw.tgz -> `<dest>/lfw-dev/<Name>/<Name>_NNNN.jpg` for the people and photos of eval-data/lfw-dev.txt. */
async function layOutLfwDev(work: string, archive: string, dest: string): Promise<void> {
  run('tar', ['-xzf', archive, '-C', work]);
  const list = await readFile(path.join(import.meta.dirname, 'eval-data', 'lfw-dev.txt'), 'utf8');
  for (const line of list.split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const [name, ...nums] = line.trim().split(' ');
    await mkdir(path.join(dest, name!), { recursive: true });
    for (const n of nums) {
      const f = `${name}_${n.padStart(4, '0')}.jpg`;
      await copyFile(path.join(work, 'lfw', name!, f), path.join(dest, name!, f));
    }
  }
}

/** att_faces.zip -> `<dest>/att/s<N>/<k>.png` (lossless PNG of the original PGM). */
async function layOutAtt(work: string, archive: string, dest: string): Promise<void> {
  run('unzip', ['-q', archive, '-d', work]);
  const root = existsSync(path.join(work, 's1')) ? work : path.join(work, 'att_faces');
  for (const person of await readdir(root)) {
    if (!/^s\d+$/.test(person)) continue;
    await mkdir(path.join(dest, person), { recursive: true });
    for (const f of await readdir(path.join(root, person))) {
      if (!f.endsWith('.pgm')) continue;
      await sharp(path.join(root, person, f))
        .png()
        .toFile(path.join(dest, person, f.replace(/\.pgm$/, '.png')));
    }
  }
}

export async function fetchSet(set: EvalSet, destRoot: string): Promise<Verdict> {
  const dest = path.join(destRoot, set.name);
  const before = await verifySet(dest, set);
  if (before.ok) return before;
  const work = await mkdtemp(path.join(os.tmpdir(), `portico-${set.name}-`));
  try {
    const archive = path.join(work, path.basename(new URL(set.url).pathname) || 'archive');
    console.log(`${set.name}: downloading ${set.url}`);
    await download(set.url, archive, set.archiveSha256);
    await rm(dest, { recursive: true, force: true });
    if (set.name === 'lfw-dev') await layOutLfwDev(work, archive, dest);
    else await layOutAtt(work, archive, dest);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return verifySet(dest, set);
}

export function defaultDest(): string {
  return process.env.PORTICO_EVAL_FACES_DIR ?? path.join(path.dirname(resolveModelDir({})), 'eval-faces');
}

async function main(argv: string[]): Promise<number> {
  let dest = defaultDest();
  let verifyOnly = false;
  const names: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--dest') dest = path.resolve(argv[++i] ?? '.');
    else if (a === '--verify-only') verifyOnly = true;
    else if (a === '--help') {
      console.log('fetch-eval-data [--dest DIR] [--verify-only] [lfw-dev|att ...]');
      return 0;
    } else if (a !== '--') names.push(a);
  }
  let failed = 0;
  for (const name of names.length ? names : Object.keys(EVAL_SETS)) {
    const set = EVAL_SETS[name];
    if (!set) {
      console.error(`unknown set ${name} (known: ${Object.keys(EVAL_SETS).join(', ')})`);
      failed++;
      continue;
    }
    try {
      const v = verifyOnly ? await verifySet(path.join(dest, name), set) : await fetchSet(set, dest);
      console.log(
        `${name}: ${v.ok ? 'ok' : 'NOT VERIFIED'} (${v.photos} photos in ${path.join(dest, name)})`,
      );
      if (!v.ok) failed++;
    } catch (e) {
      console.error(`${name}: ${(e as Error).message}`);
      console.error(`  lay it out by hand instead: docs/identification/evaluation-data.md`);
      failed++;
    }
  }
  return failed ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
