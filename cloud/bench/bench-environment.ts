// Where a benchmark's service runs: its own data directory and, with BENCH_DATABASE_URL, a scratch
// PostgreSQL database made on that server (dropped by `cleanup`); the embedded PGlite otherwise.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { unavailableFaceService } from '../src/infra/face.js';
import { createLogger } from '../src/infra/logger.js';
import { provisionTenant } from '../src/modules/tenants/provision.js';
import { createRuntime } from '../src/runtime.js';
import { startServer } from '../src/server.js';
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

/** A tenant `bench-<name>` provisioned on `deps`, and its admin signed in over HTTP at `url` (`auth`). */
export async function signedInTenant(deps: Parameters<typeof provisionTenant>[0], url: string, name: string) {
  const tenant = await provisionTenant(deps, {
    slug: `bench-${name}`,
    name: `Bench ${name}`,
    adminEmail: `bench-${name}@example.test`,
  });
  const login = await fetch(`${url}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: tenant.adminEmail, password: tenant.adminPassword }),
  });
  const auth = { authorization: `Bearer ${((await login.json()) as { accessToken: string }).accessToken}` };
  return { tenant, auth };
}

/**
 * A benchmark's service without the face engine, listening over HTTP, with one tenant (`bench-<name>`)
 * whose admin is signed in (`auth`); `stop` ends the service and cleans up.
 */
export async function startBenchApp(name: string) {
  const bench = await benchEnvironment(name, { LOG_LEVEL: 'error' });
  const runtime = await createRuntime(bench.config, {
    logger: createLogger('error'),
    face: unavailableFaceService('not needed by this benchmark'),
  });
  const server = await startServer(runtime);
  const stop = async () => {
    await server.stop(1000);
    await bench.cleanup();
  };
  try {
    const { tenant, auth } = await signedInTenant(runtime.deps, server.url, name);
    return { database: bench.database, server, prisma: runtime.deps.db.prisma, tenant, auth, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
