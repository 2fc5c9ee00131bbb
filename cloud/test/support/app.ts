// A real application over real HTTP for tests: its own database (PGlite in memory, or a fresh
// PostgreSQL database when TEST_DATABASE_URL is set), its own embedded MQTT broker on a free port
// (or TEST_MQTT_URL's broker), its own data directory.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import type { AppDeps } from '../../src/deps.js';
import type { Clock } from '../../src/infra/clock.js';
import type { Database } from '../../src/infra/db/index.js';
import { unavailableFaceService, type FaceService } from '../../src/infra/face.js';
import type { Logger } from '../../src/infra/logger.js';
import { createRuntime } from '../../src/runtime.js';
import { startServer } from '../../src/server.js';
import { createTestDatabase } from './database.js';

export interface TestApp {
  url: string;
  deps: AppDeps;
  dataDir: string;
  request(
    method: string,
    path: string,
    init?: { body?: unknown; raw?: string; headers?: Record<string, string> },
  ): Promise<TestResponse>;
  /** Stops the server (requests in flight get `graceMs`) and the runtime, and removes the data. */
  close(graceMs?: number): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests assert on shapes
  text: string;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** Run on this database and leave it open on close (to restart an app on the same data). */
  database?: Database;
  /** A face service the test file owns (one engine per file); default: none (enrollment answers 503). */
  face?: FaceService;
  /** Capture the service's log lines (tests of what is and is not logged). */
  logger?: Logger;
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'portico-test-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    MQTT_PORT: '0',
    MQTT_URL: process.env.TEST_MQTT_URL,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    ...options.env,
  });
  const runtime = await createRuntime(config, {
    openDatabase: options.database
      ? async () => ({ ...options.database!, close: async () => {} })
      : createTestDatabase,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    face: options.face ?? unavailableFaceService('no face engine in this test app'),
  });
  const running = await startServer(runtime);
  // Handed out ready, as a deployment routes traffic once the readiness probe answers 200: the stored
  // galleries loaded (a start no longer spends the OpenAPI document's build, which used to cover it).
  await runtime.deps.gallery.warm();

  return {
    url: running.url,
    deps: runtime.deps,
    dataDir,
    async request(method, requestPath, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      let body: string | undefined = init.raw;
      if (init.body !== undefined) {
        body = JSON.stringify(init.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(running.url + requestPath, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = undefined;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
    async close(graceMs = 1000) {
      await running.stop(graceMs);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
