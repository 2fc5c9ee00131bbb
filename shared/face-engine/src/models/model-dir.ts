/** Where models and fixtures are cached: one known directory, overridable by PORTICO_MODEL_DIR. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MODEL_DIR_ENV = 'PORTICO_MODEL_DIR';

/**
 * `PORTICO_MODEL_DIR` if set, else `.models/` at the pnpm workspace root found by walking up from
 * this package (not from the working directory, which differs between scripts, tests and services).
 */
export function resolveModelDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env[MODEL_DIR_ENV];
  if (fromEnv) return path.resolve(fromEnv);
  const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  let dir = packageDir;
  for (;;) {
    if (existsSync(path.join(dir, 'pnpm-workspace.yaml'))) return path.join(dir, '.models');
    const parent = path.dirname(dir);
    if (parent === dir) return path.join(packageDir, '.models');
    dir = parent;
  }
}

/** The labelled photo set the evaluation and tests use by default: `../shared/faces` beside the workspace. */
export function defaultLabelledDir(): string {
  return path.resolve(path.dirname(resolveModelDir({})), '..', 'shared', 'faces');
}

export function fixtureDir(modelDir: string): string {
  return path.join(modelDir, 'fixtures');
}
