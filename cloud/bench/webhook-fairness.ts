// Webhook fairness: how long a tenant with a fast receiver waits for its webhooks while another tenant's
// receiver hangs (no answer: each attempt ends at the 10 s time-out) with a backlog of deliveries.
// Real HTTP receivers, the real worker; PGlite in a temporary directory, or with
// BENCH_DATABASE_URL=postgresql://… a scratch database created (and dropped) on that server.
import os from 'node:os';
import { benchEnvironment } from './bench-environment.js';
import { unavailableFaceService } from '../src/infra/face.js';
import { createLogger } from '../src/infra/logger.js';
import { emitEvent } from '../src/modules/outbox/emit.js';
import { provisionTenant } from '../src/modules/tenants/provision.js';
import { createRuntime } from '../src/runtime.js';
import { startServer } from '../src/server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../test/support/webhook-receiver.js';

const BACKLOGS = (process.env.BENCH_WEBHOOK_BACKLOGS ?? '0,1,20,200').split(',').map(Number);
/** Deliveries of the fast tenant measured per backlog, one after the other. */
const SAMPLES = Number(process.env.BENCH_WEBHOOK_SAMPLES ?? 5);

async function main(): Promise<void> {
  const bench = await benchEnvironment('webhooks', {
    LOG_LEVEL: 'error',
    ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
  });
  const { config } = bench;
  const runtime = await createRuntime(config, {
    logger: createLogger('error'),
    face: unavailableFaceService('not needed by this benchmark'),
  });
  const server = await startServer(runtime);
  const { deps } = runtime;
  const receivers: WebhookReceiver[] = [];
  const receiver = async () => {
    const r = await startWebhookReceiver();
    receivers.push(r);
    return r;
  };
  const tenant = async (slug: string, url: string) => {
    const t = await provisionTenant(deps, { slug, name: slug, adminEmail: `${slug}@example.test` });
    await deps.db.prisma.tenant.update({
      where: { id: t.tenantId },
      data: { settings: { webhookUrl: url } },
    });
    return t.tenantId;
  };
  const emit = async (tenantId: string, count: number) => {
    await deps.db.prisma.$transaction(async (tx) => {
      for (let i = 0; i < count; i++) {
        await emitEvent(tx, {
          tenantId,
          name: 'person.enrolled',
          data: { personId: `p-${i}`, quality: 0.9, modelId: 'bench' },
          at: deps.clock.now(),
        });
      }
    });
    deps.outbox.notify();
  };

  console.log(
    `webhook fairness benchmark: ${bench.database}, ${os.cpus().length} cores; ` +
      `the slow tenant's receiver never answers (10 s time-out per attempt)`,
  );
  try {
    // One delivery first, so the first figure does not include the process warming up.
    const warm = await receiver();
    await emit(await tenant('warm-up', warm.url), 1);
    await warm.waitFor(1);
    for (const backlog of BACKLOGS) {
      const slow = await receiver();
      slow.respondWith = 'hang';
      const fast = await receiver();
      const slowTenant = await tenant(`slow-${backlog}`, slow.url);
      const fastTenant = await tenant(`fast-${backlog}`, fast.url);
      if (backlog > 0) {
        await emit(slowTenant, backlog);
        await slow.waitFor(1); // the backlog is being worked on
      }
      const latencies: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const sent = Date.now();
        await emit(fastTenant, 1);
        const hit = (await fast.waitFor(i + 1, 60_000))[i]!;
        latencies.push(Math.max(hit.receivedAt - sent, 0));
      }
      latencies.sort((a, b) => a - b);
      console.log(
        `  slow tenant's backlog ${String(backlog).padStart(3)}: fast tenant's delivery ` +
          `p50 ${latencies[Math.floor(latencies.length / 2)]} ms, max ${latencies.at(-1)} ms ` +
          `(${SAMPLES} deliveries, one after the other; slow receiver got ${slow.received.length} requests meanwhile)`,
      );
    }
  } finally {
    // Receivers first: the server's shutdown waits for the deliveries they hold.
    for (const r of receivers) await r.close();
    await server.stop();
    await bench.cleanup();
  }
}

await main();
