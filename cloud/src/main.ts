// `pnpm start`: the service on its embedded defaults (or whatever the environment configures).
import { ConfigError, loadConfig, loadDotEnv } from './config.js';
import { BrokerPortInUseError } from './infra/bus.js';
import { DataDirLockedError } from './infra/db/index.js';
import { createLogger } from './infra/logger.js';
import { createRuntime } from './runtime.js';
import { PortInUseError, startServer } from './server.js';
import { seedDemoTenant } from './modules/tenants/seed.js';

async function main(): Promise<void> {
  loadDotEnv();
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const runtime = await createRuntime(config, { logger });
  let running;
  try {
    if (config.seedDemoTenant) await seedDemoTenant(runtime.deps, (text) => process.stdout.write(text));
    running = await startServer(runtime);
  } catch (err) {
    await runtime.close();
    throw err;
  }
  logger.info({ url: running.url, docs: `${config.publicUrl}/docs` }, 'Portico is listening');
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, 'shutting down');
      running.stop().then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}

main().catch((err: unknown) => {
  // Operator mistakes (bad config, busy ports, a data directory in use) get one clear line, not a stack trace.
  if (
    err instanceof ConfigError ||
    err instanceof PortInUseError ||
    err instanceof BrokerPortInUseError ||
    err instanceof DataDirLockedError
  ) {
    process.stderr.write(`portico: ${err.message}\n`);
  } else {
    process.stderr.write(
      `portico: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
  }
  process.exit(1);
});
