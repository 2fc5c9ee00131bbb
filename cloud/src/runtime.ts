// Builds the application's dependencies from the configuration, and tears them down in reverse order.
import os from 'node:os';
import path from 'node:path';
import type { Config } from './config.js';
import type { AppDeps } from './deps.js';
import { createBus } from './infra/bus.js';
import { systemClock, type Clock } from './infra/clock.js';
import { createCipher } from './infra/crypto.js';
import { openDatabase, type Database } from './infra/db/index.js';
import { createImageStore } from './infra/image-store.js';
import { startFaceService, type FaceService } from './infra/face.js';
import { createLogger, type Logger } from './infra/logger.js';
import { createMailer } from './infra/mail.js';
import { loadSecrets } from './infra/secrets.js';
import { createSessionEnds } from './modules/auth/session-ends.js';
import { createBusAuthenticator } from './modules/bus/credentials.js';
import { createFaceGallery } from './modules/faces/gallery.js';
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
  /** Tests share one face engine per file; the caller closes it, not the runtime. */
  face?: FaceService;
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
    const clock = overrides.clock ?? systemClock;
    const serviceCredential = { username: config.mqtt.username, password: secrets.busPassword };
    const bus = await createBus({
      url: config.mqtt.url,
      embedded: {
        host: config.mqtt.host,
        port: config.mqtt.port,
        wsPort: config.mqtt.wsPort,
        allowedOrigins: config.mqtt.allowedOrigins,
        authenticateTenant: createBusAuthenticator({ db, clock, jwtKey: secrets.jwtKey }),
      },
      credential: !config.mqtt.url || config.mqtt.externalCredential ? serviceCredential : undefined,
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
    // Started in the background: missing models must not stop the server (enrollment answers 503).
    const face =
      overrides.face ??
      startFaceService({
        workers: config.faceWorkers ?? defaultFaceWorkers(),
        modelId: config.faceModel,
        logger,
      });
    if (!overrides.face) closers.push(() => face.close());
    const cipher = createCipher(secrets.dataKey);
    const deps: AppDeps = {
      config,
      logger,
      db,
      bus,
      mailer,
      secrets,
      cipher,
      clock,
      outbox: createOutboxSignal(),
      sessionEnds: createSessionEnds(),
      face,
      images: createImageStore({ dataDir: config.dataDir, cipher }),
      gallery: createFaceGallery({ db, cipher, clock, logger }),
    };
    closers.push(() => deps.gallery.close());
    // Readiness waits for it (modules/health): the first check-in finds the galleries in memory.
    void deps.gallery.warm();
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

/**
 * Face worker threads: one per core, at most 4. Measured on 2 cores (cloud/bench/identify.ts): 2 workers
 * gave 25 identifications/s at concurrency 4 against 20 with 1, the event loop's share notwithstanding.
 */
function defaultFaceWorkers(): number {
  return Math.max(1, Math.min(4, os.availableParallelism()));
}
