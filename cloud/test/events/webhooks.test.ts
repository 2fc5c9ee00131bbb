import { createHmac, timingSafeEqual } from 'node:crypto';
import mqtt from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { emitEvent } from '../../src/modules/outbox/emit.js';
import { provisionTenant, type ProvisionedTenant } from '../../src/modules/tenants/provision.js';
import { RETRY_DELAYS_MS } from '../../src/modules/webhooks/dispatcher.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { serviceLogin } from '../support/bus.js';
import { adminOf, TestClock } from '../support/identity.js';
import { createTestDatabase } from '../support/database.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/** What a receiver does (contract 6.1): HMAC-SHA256 of the raw body, compared in constant time. */
function verifySignature(rawBody: string, header: string | string[] | undefined, secret: string): boolean {
  const expected = Buffer.from(createHmac('sha256', secret).update(rawBody).digest('hex'));
  const given = Buffer.from(String(header ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function tenantWithWebhook(t: TestApp, url: string, slug: string): Promise<ProvisionedTenant> {
  const tenant = await provisionTenant(t.deps, { slug, name: slug, adminEmail: `${slug}@example.test` });
  await t.deps.db.prisma.tenant.update({
    where: { id: tenant.tenantId },
    data: { settings: { webhookUrl: url } },
  });
  return tenant;
}

async function emitEnrolled(t: TestApp, tenantId: string, personId = 'person-1') {
  const event = await t.deps.db.prisma.$transaction((tx) =>
    emitEvent(tx, {
      tenantId,
      name: 'person.enrolled',
      data: { personId, quality: 0.87, modelId: 'test-model' },
      at: t.deps.clock.now(),
    }),
  );
  t.deps.outbox.notify();
  return event;
}

describe('webhook delivery', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  afterEach(() => receiver?.close());

  it('POSTs the event signed with the tenant secret, with a delivery id, right after the commit', async () => {
    receiver = await startWebhookReceiver();
    const tenant = await tenantWithWebhook(t, receiver.url, 'hooks-ok');
    const committedAt = Date.now();
    const event = await emitEnrolled(t, tenant.tenantId);
    const [hit] = await receiver.waitFor(1);
    console.log(`first webhook attempt ${hit!.receivedAt - committedAt} ms after the commit`);
    expect(verifySignature(hit!.rawBody, hit!.headers['x-service-signature'], tenant.webhookSecret)).toBe(
      true,
    );
    expect(verifySignature(hit!.rawBody, hit!.headers['x-service-signature'], 'whsec_other')).toBe(false);
    expect(hit!.headers['content-type']).toBe('application/json');
    expect(hit!.headers['x-service-delivery-id']).toEqual(expect.any(String));
    const body = JSON.parse(hit!.rawBody);
    expect(body).toEqual({
      id: event.id,
      event: 'person.enrolled',
      tenantId: tenant.tenantId,
      environment: 'live',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { personId: 'person-1', quality: 0.87, modelId: 'test-model' },
    });
    await expect
      .poll(
        async () =>
          (await t.deps.db.prisma.webhookDelivery.findFirstOrThrow({ where: { outboxEventId: event.id } }))
            .status,
      )
      .toBe('delivered');
  });

  it('sends nothing for a tenant without a webhookUrl', async () => {
    const tenant = await provisionTenant(t.deps, {
      slug: 'no-hooks',
      name: 'n',
      adminEmail: 'n@example.test',
    });
    const event = await emitEnrolled(t, tenant.tenantId);
    expect(event.hasWebhook).toBe(false);
    expect(await t.deps.db.prisma.webhookDelivery.count({ where: { tenantId: tenant.tenantId } })).toBe(0);
  });

  it('does not deliver to a private address unless the operator allows it', async () => {
    const strict = await createTestApp({ env: { ALLOW_PRIVATE_WEBHOOK_URLS: 'false' } });
    try {
      receiver = await startWebhookReceiver();
      const tenant = await tenantWithWebhook(strict, receiver.url, 'ssrf');
      const event = await emitEnrolled(strict, tenant.tenantId);
      await expect
        .poll(
          async () =>
            (
              await strict.deps.db.prisma.webhookDelivery.findFirstOrThrow({
                where: { outboxEventId: event.id },
              })
            ).status,
        )
        .toBe('failed');
      const delivery = await strict.deps.db.prisma.webhookDelivery.findFirstOrThrow({
        where: { outboxEventId: event.id },
      });
      expect(delivery.lastError).toMatch(/not a public address|non-public/);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });

  it('counts no answer within 10 s as a failed attempt and schedules the retry', async () => {
    receiver = await startWebhookReceiver();
    receiver.respondWith = 'hang';
    const tenant = await tenantWithWebhook(t, receiver.url, 'hooks-slow');
    const event = await emitEnrolled(t, tenant.tenantId);
    await receiver.waitFor(1);
    await expect
      .poll(
        () => t.deps.db.prisma.webhookAttempt.count({ where: { delivery: { outboxEventId: event.id } } }),
        { timeout: 15_000 },
      )
      .toBe(1);
    const logged = await t.deps.db.prisma.webhookAttempt.findFirstOrThrow({
      where: { delivery: { outboxEventId: event.id } },
    });
    expect(logged.error).toBe('timeout after 10 s');
    expect(logged.durationMs).toBeGreaterThanOrEqual(9_900);
    const delivery = await t.deps.db.prisma.webhookDelivery.findFirstOrThrow({
      where: { outboxEventId: event.id },
    });
    expect(delivery.status).toBe('pending');
  }, 30_000);
});

describe('webhook retries (test clock)', () => {
  it('retries a failing receiver 1 s, 5 s and 30 s after each failure, then gives up', async () => {
    const clock = new TestClock();
    const t = await createTestApp({ clock });
    const receiver = await startWebhookReceiver();
    receiver.respondWith = 503;
    try {
      const tenant = await tenantWithWebhook(t, receiver.url, 'hooks-retry');
      const event = await emitEnrolled(t, tenant.tenantId);
      // The receiver sees a request before the service records its outcome: wait for the record, so
      // the clock moves only once the next attempt has been scheduled.
      const recorded = (n: number) =>
        expect
          .poll(() =>
            t.deps.db.prisma.webhookAttempt.count({ where: { delivery: { outboxEventId: event.id } } }),
          )
          .toBe(n);
      await receiver.waitFor(1);
      await recorded(1);
      const quiet = async (ms: number) => {
        clock.advance(ms);
        t.deps.outbox.notify();
        await new Promise((r) => setTimeout(r, 300));
      };
      for (const [n, delay] of [
        [2, 1_000],
        [3, 5_000],
        [4, 30_000],
      ] as const) {
        await quiet(delay - 1); // just before the delay: nothing is sent
        expect(receiver.received).toHaveLength(n - 1);
        clock.advance(1);
        t.deps.outbox.notify();
        await receiver.waitFor(n);
        await recorded(n);
        expect(receiver.received[n - 1]!.headers['x-service-attempt']).toBe(String(n));
      }
      await quiet(60 * 60 * 1000); // an hour later: no fifth attempt
      expect(receiver.received).toHaveLength(4);
      const ids = new Set(receiver.received.map((r) => r.headers['x-service-delivery-id']));
      expect(ids.size).toBe(1); // one delivery id across retries: receivers deduplicate by it
      await expect
        .poll(
          async () =>
            (await t.deps.db.prisma.webhookDelivery.findFirstOrThrow({ where: { outboxEventId: event.id } }))
              .status,
        )
        .toBe('failed');
      const attempts = await t.deps.db.prisma.webhookAttempt.findMany({
        where: { delivery: { outboxEventId: event.id } },
        orderBy: { attempt: 'asc' },
      });
      expect(attempts.map((a) => [a.attempt, a.statusCode])).toEqual([
        [1, 503],
        [2, 503],
        [3, 503],
        [4, 503],
      ]);
    } finally {
      await receiver.close();
      await t.close();
    }
  });

  it('completes a delivery after the process restarts', async () => {
    const db = await createTestDatabase();
    const clock = new TestClock();
    const receiver = await startWebhookReceiver();
    receiver.respondWith = 500;
    // A restart keeps the data directory's secrets; here both processes get the same key explicitly.
    const env = { DATA_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64') };
    let first: TestApp | undefined = await createTestApp({ database: db, clock, env });
    try {
      const tenant = await tenantWithWebhook(first, receiver.url, 'hooks-restart');
      const event = await emitEnrolled(first, tenant.tenantId);
      await receiver.waitFor(1);
      await first.close(); // the process goes away with the retry still pending
      first = undefined;
      receiver.respondWith = 200;
      clock.advance(1_000);
      const second = await createTestApp({ database: db, clock, env });
      try {
        await receiver.waitFor(2);
        expect(JSON.parse(receiver.received[1]!.rawBody).id).toBe(event.id);
        await expect
          .poll(
            async () =>
              (await db.prisma.webhookDelivery.findFirstOrThrow({ where: { outboxEventId: event.id } }))
                .status,
          )
          .toBe('delivered');
      } finally {
        await second.close();
      }
    } finally {
      await first?.close();
      await receiver.close();
      await db.close();
    }
  });
});

describe('webhookUrl changes with retries pending (test clock)', () => {
  let t: TestApp;
  const clock = new TestClock();
  beforeAll(async () => {
    t = await createTestApp({ clock });
  });
  afterAll(() => t.close());

  /** A tenant whose admin sets `url` through the API, and one event whose first attempt failed. */
  async function failedOnce(receiver: WebhookReceiver) {
    const admin = await adminOf(t);
    const settings = (webhookUrl: string | null) =>
      t.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, {
        headers: admin.headers,
        body: { webhookUrl },
      });
    expect((await settings(receiver.url)).status).toBe(200);
    const event = await emitEnrolled(t, admin.tenant.tenantId);
    await receiver.waitFor(1);
    await expect
      .poll(() => t.deps.db.prisma.webhookAttempt.count({ where: { delivery: { outboxEventId: event.id } } }))
      .toBe(1);
    return { tenantId: admin.tenant.tenantId, event, settings };
  }

  const deliveryOf = (eventId: string) =>
    t.deps.db.prisma.webhookDelivery.findFirstOrThrow({
      where: { outboxEventId: eventId },
      include: { attemptLog: { orderBy: { attempt: 'asc' } } },
    });

  it('cancels a pending retry once the webhookUrl is cleared, and records why', async () => {
    const receiver = await startWebhookReceiver();
    try {
      receiver.respondWith = 503;
      const { event, settings } = await failedOnce(receiver);
      expect((await settings(null)).status).toBe(200);
      clock.advance(RETRY_DELAYS_MS[0]);
      t.deps.outbox.notify();
      await expect.poll(async () => (await deliveryOf(event.id)).status).toBe('cancelled');
      const delivery = await deliveryOf(event.id);
      expect(delivery.lastError).toBe("cancelled: the tenant's webhookUrl was cleared");
      expect(delivery.attempts).toBe(1);
      expect(delivery.attemptLog.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
        [1, 503, null],
        [2, null, "cancelled: the tenant's webhookUrl was cleared"],
      ]);
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('cancels (does not redirect) a pending retry when the webhookUrl changes; new events go to the new URL', async () => {
    const old = await startWebhookReceiver();
    const next = await startWebhookReceiver();
    try {
      old.respondWith = 503;
      const { tenantId, event, settings } = await failedOnce(old);
      expect((await settings(next.url)).status).toBe(200);
      clock.advance(RETRY_DELAYS_MS[0]);
      t.deps.outbox.notify();
      await expect.poll(async () => (await deliveryOf(event.id)).status).toBe('cancelled');
      expect((await deliveryOf(event.id)).lastError).toBe("cancelled: the tenant's webhookUrl was changed");
      const later = await emitEnrolled(t, tenantId, 'person-2');
      const [hit] = await next.waitFor(1);
      expect(JSON.parse(hit!.rawBody).id).toBe(later.id);
      await new Promise((r) => setTimeout(r, 300));
      expect(old.received).toHaveLength(1);
      expect(next.received).toHaveLength(1);
    } finally {
      await old.close();
      await next.close();
    }
  });
});

describe('bus publishing from the outbox', () => {
  it('publishes an emitted event on the tenant topic at QoS 1', async () => {
    const t = await createTestApp();
    try {
      const tenant = await provisionTenant(t.deps, {
        slug: 'bus-out',
        name: 'b',
        adminEmail: 'b@example.test',
      });
      const client = await mqtt.connectAsync(t.deps.bus.url, serviceLogin(t));
      await client.subscribeAsync(`portico/v1/tenants/${tenant.tenantId}/#`, { qos: 1 });
      const got = new Promise<{ topic: string; body: string }>((resolve) =>
        client.once('message', (topic, payload) => resolve({ topic, body: payload.toString() })),
      );
      const event = await emitEnrolled(t, tenant.tenantId, 'p-bus');
      const msg = await got;
      await client.endAsync();
      expect(msg.topic).toBe(`portico/v1/tenants/${tenant.tenantId}/person.enrolled`);
      expect(JSON.parse(msg.body)).toMatchObject({
        id: event.id,
        event: 'person.enrolled',
        data: { personId: 'p-bus' },
      });
      await expect
        .poll(
          async () =>
            (await t.deps.db.prisma.outboxEvent.findUniqueOrThrow({ where: { id: event.id } }))
              .busPublishedAt,
        )
        .not.toBeNull();
    } finally {
      await t.close();
    }
  });
});
