/** Test images: registry photos fetched (and sha256-checked) like the models, and the optional labelled set. */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { FaceEngineError } from '../src/errors.js';
import { fetchPinnedFiles } from '../src/models/fetch.js';
import { FIXTURE_SOURCE, FIXTURES } from '../src/models/manifest.js';
import { defaultLabelledDir, fixtureDir, resolveModelDir } from '../src/models/model-dir.js';

export async function registryPhotos(): Promise<Map<string, Buffer>> {
  const dir = fixtureDir(resolveModelDir());
  await fetchPinnedFiles(FIXTURE_SOURCE, FIXTURES, dir);
  const out = new Map<string, Buffer>();
  for (const f of FIXTURES) out.set(f.file, await readFile(path.join(dir, f.file)));
  return out;
}

/** `../shared/faces` next to the workspace root; tests that need it are skipped when it is absent. */
export const LABELLED_DIR = defaultLabelledDir();
export const HAS_LABELLED = existsSync(LABELLED_DIR);
export const LABELLED_SKIP_REASON = `../shared/faces not found at ${LABELLED_DIR}: labelled-photo tests skipped`;

/** The `code` of the FaceEngineError a promise rejects with ('resolved' when it does not reject). */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    expect(error).toBeInstanceOf(FaceEngineError);
    return (error as FaceEngineError).code;
  }
}
