// Tenant-fair webhook delivery: one tenant's slow or failing receiver does not hold up another tenant's
// webhooks, and a receiver that keeps failing gets its circuit opened without any delivery being lost.
import { afterEach, describe, expect, it } from 'vitest';
import { emitEvent } from '../../src/modules/outbox/emit.js';
import {
  CIRCUIT_FAILURES,
  CIRCUIT_OPEN_MS,
  PER_TENANT_IN_FLIGHT,
} from '../../src/modules/webhooks/dispatcher.js';
import { provisionTenant } from '../../src/modules/tenants/provision.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { TestClock } from '../support/identity.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';

async function tenantWithWebhook(t: TestApp, url: string, slug: string): Promise<string> {
  const tenant = await provisionTenant(t.deps, { slug, name: slug, adminEmail: `${slug}@example.test` });
  await t.deps.db.prisma.tenant.update({
    where: { id: tenant.tenantId },
    data: { settings: { webhookUrl: url } },
  });
  return tenant.tenantId;
}

async function emitEnrolled(t: TestApp, tenantId: string, count = 1): Promise<void> {
  await t.deps.db.prisma.$transaction(async (tx) => {
    for (let i = 0; i < count; i++) {
      await emitEvent(tx, {
        tenantId,
        name: 'person.enrolled',
        data: { personId: `person-${i}`, quality: 0.9, modelId: 'test-model' },
        at: t.deps.clock.now(),
      });
    }
  });
  t.deps.outbox.notify();
}

const statuses = async (t: TestApp, tenantId: string) =>
  (await t.deps.db.prisma.webhookDelivery.findMany({ where: { tenantId }, select: { status: true } }))
    .map((d) => d.status)
    .sort();

describe('tenant-fair webhook delivery', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    // Receivers first: the app's shutdown waits for the deliveries they hold.
    for (const close of cleanup.splice(0).reverse()) await close();
  });

  it("delivers a fast tenant's webhook at once while a slow tenant's receiver works through a backlog", async () => {
    const t = await createTestApp();
    cleanup.push(() => t.close());
    const slow = await startWebhookReceiver();
    const fast = await startWebhookReceiver();
    cleanup.push(
      () => fast.close(),
      () => slow.close(),
    );
    slow.delayMs = 3_000;
    const slowTenant = await tenantWithWebhook(t, slow.url, 'fair-slow');
    const fastTenant = await tenantWithWebhook(t, fast.url, 'fair-fast');

    await emitEnrolled(t, slowTenant, 20);
    await slow.waitFor(1); // the slow tenant's backlog is being worked on
    const emittedAt = Date.now();
    await emitEnrolled(t, fastTenant);
    const [hit] = await fast.waitFor(1, 10_000);
    const latency = hit!.receivedAt - emittedAt;
    console.log(
      `fast tenant's delivery ${latency} ms after its commit, behind a slow tenant's backlog of 20`,
    );
    expect(latency).toBeLessThan(1_000);
    // The slow tenant holds no more than its share of the pool.
    expect(slow.received.length).toBeLessThanOrEqual(PER_TENANT_IN_FLIGHT);
  }, 30_000);

  it('opens the circuit of a receiver that keeps failing; its deliveries wait, then all go out once it answers', async () => {
    const clock = new TestClock();
    const t = await createTestApp({ clock });
    cleanup.push(() => t.close());
    const receiver = await startWebhookReceiver();
    cleanup.push(() => receiver.close());
    receiver.respondWith = 503;
    const tenantId = await tenantWithWebhook(t, receiver.url, 'circuit');
    const attempts = () => t.deps.db.prisma.webhookAttempt.count({ where: { tenantId } });
    const quiet = async (ms: number) => {
      clock.advance(ms);
      t.deps.outbox.notify();
      await new Promise((r) => setTimeout(r, 400));
    };

    await emitEnrolled(t, tenantId, CIRCUIT_FAILURES);
    await expect.poll(attempts).toBe(CIRCUIT_FAILURES);
    const openedAt = clock.now().getTime();
    const circuit = await t.deps.db.prisma.webhookCircuit.findUniqueOrThrow({ where: { tenantId } });
    expect(circuit.failures).toBe(CIRCUIT_FAILURES);
    expect(circuit.openUntil?.getTime()).toBe(openedAt + CIRCUIT_OPEN_MS);

    // While it is open: a new event and the due retries are held, not sent, not failed.
    await emitEnrolled(t, tenantId);
    await quiet(CIRCUIT_OPEN_MS - 1);
    expect(receiver.received).toHaveLength(CIRCUIT_FAILURES);
    expect(await statuses(t, tenantId)).toEqual(new Array(CIRCUIT_FAILURES + 1).fill('pending'));

    // Half-open: one probe; it fails, so the circuit opens again.
    await quiet(1);
    await receiver.waitFor(CIRCUIT_FAILURES + 1);
    await expect.poll(attempts).toBe(CIRCUIT_FAILURES + 1);
    await quiet(CIRCUIT_OPEN_MS - 1);
    expect(receiver.received).toHaveLength(CIRCUIT_FAILURES + 1);

    // The next probe succeeds: the circuit closes and everything held is delivered.
    receiver.respondWith = 200;
    await quiet(1);
    await expect
      .poll(() => statuses(t, tenantId), { timeout: 10_000 })
      .toEqual(new Array(CIRCUIT_FAILURES + 1).fill('delivered'));
    const closed = await t.deps.db.prisma.webhookCircuit.findUniqueOrThrow({ where: { tenantId } });
    expect(closed).toMatchObject({ failures: 0, openUntil: null });
  }, 30_000);

  it("keeps another tenant's deliveries flowing while one tenant's circuit is open", async () => {
    const clock = new TestClock();
    const t = await createTestApp({ clock });
    cleanup.push(() => t.close());
    const broken = await startWebhookReceiver();
    const healthy = await startWebhookReceiver();
    cleanup.push(
      () => healthy.close(),
      () => broken.close(),
    );
    broken.respondWith = 500;
    const brokenTenant = await tenantWithWebhook(t, broken.url, 'circuit-broken');
    const healthyTenant = await tenantWithWebhook(t, healthy.url, 'circuit-healthy');
    await emitEnrolled(t, brokenTenant, CIRCUIT_FAILURES + 3);
    await expect
      .poll(
        async () =>
          (await t.deps.db.prisma.webhookCircuit.findUnique({ where: { tenantId: brokenTenant } }))
            ?.openUntil,
      )
      .not.toBeFalsy();
    await emitEnrolled(t, healthyTenant, 3);
    await healthy.waitFor(3);
    await expect.poll(() => statuses(t, healthyTenant)).toEqual(['delivered', 'delivered', 'delivered']);
  }, 30_000);
});
