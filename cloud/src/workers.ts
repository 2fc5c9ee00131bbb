// The background workers of an API process: webhook delivery and bus publishing from the outbox.
import type { AppDeps } from './deps.js';
import { startWorkerLoop } from './infra/worker-loop.js';
import { createBusPublisher } from './modules/outbox/bus-publisher.js';
import { createWebhookDispatcher } from './modules/webhooks/dispatcher.js';

const POLL_MS = 1_000;

export function startWorkers(deps: AppDeps): { stop(): Promise<void> } {
  const dispatcher = createWebhookDispatcher({
    db: deps.db,
    cipher: deps.cipher,
    clock: deps.clock,
    logger: deps.logger,
    allowPrivateUrls: deps.config.allowPrivateWebhookUrls,
  });
  const publisher = createBusPublisher(deps);
  const loops = [
    startWorkerLoop({
      name: 'webhooks',
      pollMs: POLL_MS,
      runOnce: dispatcher.runOnce,
      subscribe: deps.outbox.subscribe,
      logger: deps.logger,
    }),
    startWorkerLoop({
      name: 'bus',
      pollMs: POLL_MS,
      runOnce: publisher.runOnce,
      subscribe: deps.outbox.subscribe,
      logger: deps.logger,
    }),
  ];
  return { stop: async () => void (await Promise.all(loops.map((l) => l.stop()))) };
}
