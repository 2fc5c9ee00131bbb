// Where a benchmark's service runs: its own data directory and, with BENCH_DATABASE_URL, a scratch
// PostgreSQL database made on that server (dropped by `cleanup`); the embedded PGlite otherwise.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { createScratchPostgresDatabase } from '../test/support/database.js';

export async function benchEnvironment(name: string, env: Record<string, string>) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `portico-bench-${name}-`));
  const scratch = process.env.BENCH_DATABASE_URL
    ? await createScratchPostgresDatabase(process.env.BENCH_DATABASE_URL)
    : undefined;
  const config = loadConfig({
    DATABASE_URL: scratch?.url,
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    MQTT_PORT: '0',
    SEED_DEMO_TENANT: 'false',
    NODE_ENV: 'production',
    ...env,
  });
  return {
    config,
    dataDir,
    /** `PostgreSQL` or `PGlite in <dataDir>`, for the benchmark's first line. */
    database: scratch ? 'PostgreSQL' : `PGlite in ${dataDir}`,
    async cleanup() {
      await scratch?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
