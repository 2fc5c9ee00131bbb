/**
 * `pnpm --filter @portico/face-engine models [-- --force] [--no-fixtures]`: fetches the pinned
 * ONNX models (and the registry test photos) into the model cache.
 */
import { FIXTURE_SOURCE, FIXTURES, MODEL_SOURCE, MODELS } from '../src/models/manifest.js';
import { fetchPinnedFiles } from '../src/models/fetch.js';
import { fixtureDir, resolveModelDir } from '../src/models/model-dir.js';

const args = new Set(process.argv.slice(2));
const force = args.has('--force');
const modelDir = resolveModelDir();
const log = (line: string): void => console.log(`[face-engine] ${line}`);

try {
  await fetchPinnedFiles(MODEL_SOURCE, Object.values(MODELS), modelDir, { force, log });
  if (!args.has('--no-fixtures')) {
    await fetchPinnedFiles(FIXTURE_SOURCE, FIXTURES, fixtureDir(modelDir), { force, log });
  }
} catch (error) {
  console.error(`[face-engine] model fetch failed: ${(error as Error).message}`);
  process.exitCode = 1;
}
