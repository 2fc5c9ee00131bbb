// Generates the Prisma client into src/generated/prisma (gitignored).
//
// The Prisma CLI wants to download a native schema engine before every command, which fails
// offline; `prisma generate` does not use that engine, so PRISMA_SCHEMA_ENGINE_BINARY points at a
// stub executable and the same command works online and offline.
// Skips the work when the client is newer than the schema and this script (`--force` overrides).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cloudDir = dirname(dirname(fileURLToPath(import.meta.url)));
const schema = join(cloudDir, 'prisma', 'schema.prisma');
const marker = join(cloudDir, 'src', 'generated', 'prisma', 'client.ts');
const force = process.argv.includes('--force');

const mtime = (file) => statSync(file).mtimeMs;
if (
  !force &&
  existsSync(marker) &&
  mtime(marker) > Math.max(mtime(schema), mtime(fileURLToPath(import.meta.url)))
) {
  process.exit(0);
}

const require = createRequire(import.meta.url);
const prismaCli = join(dirname(require.resolve('prisma/package.json')), 'build', 'index.js');

const stubDir = mkdtempSync(join(tmpdir(), 'portico-prisma-'));
const stub = join(stubDir, 'schema-engine');
writeFileSync(stub, '#!/bin/sh\necho "schema engine not available offline" >&2\nexit 1\n');
chmodSync(stub, 0o755);

try {
  const result = spawnSync(process.execPath, [prismaCli, 'generate', '--schema', schema], {
    cwd: cloudDir,
    stdio: 'inherit',
    env: {
      ...process.env,
      PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? stub,
      PRISMA_HIDE_UPDATE_MESSAGE: '1',
      CHECKPOINT_DISABLE: '1',
    },
  });
  if (result.error) throw result.error;
  process.exitCode = result.status ?? 1;
} finally {
  rmSync(stubDir, { recursive: true, force: true });
}
