// Builds the application's dependencies from the configuration, and tears them down in reverse order.
import path from 'node:path';
import type { Config } from './config.js';
import type { AppDeps } from './deps.js';
import { createBus } from './infra/bus.js';
import { systemClock, type Clock } from './infra/clock.js';
import { createCipher } from './infra/crypto.js';
import { openDatabase, type Database } from './infra/db/index.js';
import { createLogger, type Logger } from './infra/logger.js';
import { createMailer } from './infra/mail.js';
import { loadSecrets } from './infra/secrets.js';
import { createOutboxSignal } from './modules/outbox/signal.js';

export interface Runtime {
  deps: AppDeps;
  close(): Promise<void>;
}

export interface RuntimeOverrides {
  logger?: Logger;
  clock?: Clock;
  /** Tests bring their own database (in-memory PGlite or a fresh PostgreSQL database). */
  openDatabase?: () => Promise<Database>;
}

export async function createRuntime(config: Config, overrides: RuntimeOverrides = {}): Promise<Runtime> {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const closers: Array<() => Promise<void> | void> = [];
  try {
    const secrets = await loadSecrets(config);
    const db = await (overrides.openDatabase?.() ??
      openDatabase({
        databaseUrl: config.databaseUrl,
        dataDir: config.dataDir,
        onLog: (msg) => logger.info(msg),
      }));
    closers.push(() => db.close());
    const bus = await createBus({
      url: config.mqtt.url,
      embedded: { host: config.mqtt.host, port: config.mqtt.port },
      logger,
    });
    closers.push(() => bus.close());
    const mailer = createMailer({
      smtpUrl: config.mail.smtpUrl,
      from: config.mail.from,
      outboxDir: path.join(config.dataDir, 'mail'),
      logger,
    });
    closers.push(() => mailer.close());
    const deps: AppDeps = {
      config,
      logger,
      db,
      bus,
      mailer,
      secrets,
      cipher: createCipher(secrets.dataKey),
      clock: overrides.clock ?? systemClock,
      outbox: createOutboxSignal(),
    };
    return { deps, close: () => closeAll(closers) };
  } catch (err) {
    await closeAll(closers);
    throw err;
  }
}

async function closeAll(closers: Array<() => Promise<void> | void>): Promise<void> {
  for (const close of closers.reverse()) {
    await close();
  }
}
