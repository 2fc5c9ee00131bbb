/** Checks the cached model files before any session is created, so failures name their fix. */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { FaceEngineError } from '../errors.js';
import { MODELS, type ModelName } from './manifest.js';

export const FETCH_COMMAND = 'pnpm --filter @portico/face-engine models';

export function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Reads and verifies every model; returns their bytes so the caller hashes and reads each file once. */
export async function loadVerifiedModels(modelDir: string): Promise<Record<ModelName, Uint8Array>> {
  const out: Partial<Record<ModelName, Uint8Array>> = {};
  const missing: string[] = [];
  const corrupt: string[] = [];
  for (const entry of Object.values(MODELS)) {
    let bytes: Uint8Array;
    try {
      bytes = await readFile(path.join(modelDir, entry.file));
    } catch {
      missing.push(entry.file);
      continue;
    }
    if (sha256(bytes) !== entry.sha256) corrupt.push(entry.file);
    else out[entry.name] = bytes;
  }
  if (missing.length > 0) {
    throw new FaceEngineError(
      'models_missing',
      `Face models missing in ${modelDir} (${missing.join(', ')}). Run \`${FETCH_COMMAND}\` ` +
        `(or set PORTICO_MODEL_DIR to a directory that holds them).`,
      { modelDir, missing },
    );
  }
  if (corrupt.length > 0) {
    throw new FaceEngineError(
      'models_corrupt',
      `Face models in ${modelDir} fail their sha256 check (${corrupt.join(', ')}). ` +
        `Run \`${FETCH_COMMAND} -- --force\` to fetch them again.`,
      { modelDir, corrupt },
    );
  }
  return out as Record<ModelName, Uint8Array>;
}
