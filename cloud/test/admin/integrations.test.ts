// The console's integrations page over real HTTP: a signed webhook.test event reaching a real local
// receiver, the delivery log with its attempts, redelivery, and the MQTT topics (checked with a real
// MQTT client on the broker the route names).
import { createHmac, timingSafeEqual } from 'node:crypto';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminWebhookDelivery } from '@portico/contract';
import { newId } from '../../src/infra/db/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { adminOf, loggedInUser } from '../support/identity.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { manualCheckin, person } from './support.js';

function signedBy(rawBody: string, header: string | string[] | undefined, secret: string): boolean {
  const expected = Buffer.from(createHmac('sha256', secret).update(rawBody).digest('hex'));
  const given = Buffer.from(String(header ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe('admin integrations: webhooks and bus', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let a: Awaited<ReturnType<typeof adminOf>>;
  let b: Awaited<ReturnType<typeof adminOf>>;
  let testDeliveryId: string;

  const deliveries = (query = '', headers = a.headers) =>
    t.request('GET', `/v1/admin/webhook-deliveries${query}`, { headers });

  /** The delivery as the log shows it, once it has left `pending`/`delivering`. */
  async function settled(id: string) {
    for (let i = 0; i < 200; i++) {
      const res = await deliveries('?limit=200');
      const found = res.body.items.find((d: { id: string }) => d.id === id);
      if (found && !['pending', 'delivering'].includes(found.status)) return found;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`delivery ${id} did not settle`);
  }

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await createTestApp();
    a = await adminOf(t);
    b = await adminOf(t);
    const set = await t.request('PATCH', `/v1/tenants/${a.tenant.tenantId}/settings`, {
      headers: a.headers,
      body: { webhookUrl: receiver.url },
    });
    expect(set.status, set.text).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('sends a signed webhook.test event to the tenant’s webhook URL and logs the attempt', async () => {
    const res = await t.request('POST', '/v1/admin/webhooks/test', { headers: a.headers });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ event: 'webhook.test', url: receiver.url });
    testDeliveryId = res.body.id;
    const body = await receiver.waitForBody((p) => p.event === 'webhook.test');
    const hit = receiver.received.find((r) => JSON.parse(r.rawBody).event === 'webhook.test')!;
    expect(signedBy(hit.rawBody, hit.headers['x-service-signature'], a.tenant.webhookSecret)).toBe(true);
    expect(hit.headers['x-service-delivery-id']).toBe(testDeliveryId);
    const user = await t.deps.db.prisma.user.findFirstOrThrow({ where: { tenantId: a.tenant.tenantId } });
    expect(body).toMatchObject({
      event: 'webhook.test',
      tenantId: a.tenant.tenantId,
      data: { requestedBy: user.id },
    });
    const logged = await settled(testDeliveryId);
    expect(logged).toMatchObject({
      status: 'delivered',
      lastStatusCode: 200,
      eventId: body.id,
      payload: body,
    });
    expect(logged.attempts).toEqual([
      {
        attempt: 1,
        at: expect.any(String),
        statusCode: 200,
        durationMs: expect.any(Number),
        error: null,
        response: null,
      },
    ]);
  });

  it('logs a failed attempt with its HTTP status and error', async () => {
    receiver.respondWith = 503;
    try {
      const res = await t.request('POST', '/v1/admin/webhooks/test', { headers: a.headers });
      expect(res.status).toBe(202);
      for (let i = 0; i < 200; i++) {
        const log = await deliveries();
        const d = log.body.items.find((x: { id: string }) => x.id === res.body.id);
        if (d.attempts.length > 0) {
          expect(d.attempts[0]).toMatchObject({ attempt: 1, statusCode: 503, error: null });
          expect(d.lastError).toBe('HTTP 503');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error('no attempt logged');
    } finally {
      receiver.respondWith = 200;
    }
  });

  it('redelivers a delivery: the same signed body under a new delivery id, audited', async () => {
    const before = receiver.received.length;
    const res = await t.request('POST', `/v1/admin/webhook-deliveries/${testDeliveryId}/redeliver`, {
      headers: a.headers,
    });
    expect(res.status, res.text).toBe(202);
    expect(res.body.id).not.toBe(testDeliveryId);
    const original = await settled(testDeliveryId);
    expect(res.body.eventId).toBe(original.eventId);
    await receiver.waitFor(before + 1);
    const hit = receiver.received.find((r) => r.headers['x-service-delivery-id'] === res.body.id)!;
    expect(JSON.parse(hit.rawBody)).toEqual(original.payload);
    expect(signedBy(hit.rawBody, hit.headers['x-service-signature'], a.tenant.webhookSecret)).toBe(true);
    expect((await settled(res.body.id)).status).toBe('delivered');
    const audit = await t.deps.db.prisma.auditLog.findFirst({
      where: { tenantId: a.tenant.tenantId, action: 'webhook.redelivered', targetId: res.body.id },
    });
    expect(audit?.metadata).toEqual({ redeliveryOf: testDeliveryId });
  });

  it('lists deliveries newest first, filtered by status and event type', async () => {
    const ana = await person(t, a.tenant.tenantId, 'Ana');
    const checkIn = await manualCheckin(t, a.headers, ana);
    await receiver.waitForBody((p) => p.data?.checkInId === checkIn);
    const all = await deliveries();
    expect(all.status, all.text).toBe(200);
    expect(all.body.items[0].event).toBe('checkin.success');
    const times = all.body.items.map((d: { createdAt: string }) => d.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    const tests = await deliveries('?event=webhook.test');
    expect(tests.body.items.length).toBe(3);
    expect(tests.body.items.every((d: { event: string }) => d.event === 'webhook.test')).toBe(true);
    const failed = await deliveries('?status=delivered&event=checkin.success');
    expect(
      failed.body.items.map((d: { payload: { data: { checkInId: string } } }) => d.payload.data.checkInId),
    ).toContain(checkIn);
    const page = await deliveries('?limit=2');
    const next = await deliveries(`?limit=2&cursor=${page.body.nextCursor}`);
    expect(next.body.items[0].id).toBe(all.body.items[2].id);
  });

  it('lists a delivery of an event recorded before payloads named their environment, as it is sent', async () => {
    const { prisma } = t.deps.db;
    const tenantId = a.tenant.tenantId;
    const eventId = newId();
    const deliveryId = newId();
    const old = {
      id: eventId,
      event: 'person.deleted',
      tenantId,
      timestamp: '2026-11-20T10:00:00.000Z',
      data: { personId: 'p1', reason: 'deleted' },
    };
    await prisma.outboxEvent.create({
      data: { id: eventId, tenantId, name: 'person.deleted', payload: old, busPublishedAt: new Date() },
    });
    await prisma.webhookDelivery.create({
      data: {
        id: deliveryId,
        outboxEventId: eventId,
        tenantId,
        url: receiver.url,
        status: 'cancelled',
        createdAt: new Date('2026-11-20T10:00:00.000Z'),
      },
    });
    const res = await deliveries('?event=person.deleted');
    expect(res.status, res.text).toBe(200);
    expect(res.body.items).toEqual([
      expect.objectContaining({ id: deliveryId, status: 'cancelled', payload: old, attempts: [] }),
    ]);
  });

  it('answers 404 to a redelivery of another tenant’s or an unknown delivery, and hides the log from them', async () => {
    for (const id of [testDeliveryId, newId()]) {
      const res = await t.request('POST', `/v1/admin/webhook-deliveries/${id}/redeliver`, {
        headers: b.headers,
      });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    expect((await deliveries('', b.headers)).body.items).toEqual([]);
  });

  it('answers 409 webhook_url_not_set to a test or a redelivery when the tenant has no webhook URL', async () => {
    const res = await t.request('POST', '/v1/admin/webhooks/test', { headers: b.headers });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('webhook_url_not_set');
  });

  it('lets an operator read the log but not send a test or redeliver (403)', async () => {
    const operator = await loggedInUser(t, a.tenant.tenantId, 'operator', `op-${newId()}@example.com`);
    expect((await deliveries('', operator)).status).toBe(200);
    expect((await t.request('POST', '/v1/admin/webhooks/test', { headers: operator })).status).toBe(403);
    const redeliver = await t.request('POST', `/v1/admin/webhook-deliveries/${testDeliveryId}/redeliver`, {
      headers: operator,
    });
    expect(redeliver.status).toBe(403);
  });

  it('shows one delivery with its exact payload and every attempt: two 500s with their answers, then the 200 tried now', async () => {
    // The receiver echoes the signature it got: the log must show it redacted.
    receiver.respondWith = 500;
    receiver.respondBody = (hit) =>
      JSON.stringify({ error: 'database down', echo: hit.headers['x-service-signature'] });
    const attemptsOf = async (id: string, count: number): Promise<AdminWebhookDelivery> => {
      for (let i = 0; i < 400; i++) {
        const res = await t.request('GET', `/v1/admin/webhook-deliveries/${id}`, { headers: a.headers });
        expect(res.status, res.text).toBe(200);
        if (res.body.attempts.length >= count && res.body.status !== 'delivering') return res.body;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`delivery ${id} did not reach ${count} attempts`);
    };
    let id: string;
    let delivery: AdminWebhookDelivery;
    try {
      const sent = await t.request('POST', '/v1/admin/webhooks/test', { headers: a.headers });
      expect(sent.status, sent.text).toBe(202);
      id = sent.body.id;
      // The first retry follows after 1 s; the second would wait 5 s more.
      const failedTwice = await attemptsOf(id, 2);
      expect(failedTwice.status).toBe('pending');
      expect(Date.parse(failedTwice.nextAttemptAt!)).toBeGreaterThan(Date.now() + 2_000);
      receiver.respondWith = 200;
      receiver.respondBody = () => 'ok';
      const retried = await t.request('POST', `/v1/admin/webhook-deliveries/${id}/retry`, {
        headers: a.headers,
      });
      expect(retried.status, retried.text).toBe(202);
      expect(retried.body.id).toBe(id);
      const started = Date.now();
      delivery = await attemptsOf(id, 3);
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      receiver.respondWith = 200;
      receiver.respondBody = null;
    }
    const hits = receiver.received.filter((r) => r.headers['x-service-delivery-id'] === id);
    expect(hits.length).toBe(3);
    expect(delivery).toMatchObject({ id, status: 'delivered', lastStatusCode: 200, nextAttemptAt: null });
    expect(JSON.stringify(delivery.payload)).toBe(hits[0]!.rawBody);
    expect(delivery.attempts).toEqual([
      expect.objectContaining({ attempt: 1, statusCode: 500, error: null }),
      expect.objectContaining({ attempt: 2, statusCode: 500, error: null }),
      expect.objectContaining({ attempt: 3, statusCode: 200, error: null, response: 'ok' }),
    ]);
    for (const [i, attempt] of delivery.attempts.slice(0, 2).entries()) {
      expect(JSON.parse(attempt.response!)).toEqual({ error: 'database down', echo: '[redacted]' });
      expect(attempt.response).not.toContain(String(hits[i]!.headers['x-service-signature']));
      expect(attempt.response).not.toContain(a.tenant.webhookSecret);
    }
    const audit = await t.deps.db.prisma.auditLog.findFirst({
      where: { tenantId: a.tenant.tenantId, action: 'webhook.retried', targetId: id },
    });
    expect(audit).not.toBeNull();
    // Delivered: nothing waits for a retry; it is sent again by redeliver.
    const again = await t.request('POST', `/v1/admin/webhook-deliveries/${id}/retry`, { headers: a.headers });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
    expect(again.body.detail).toMatch(/delivered, not waiting for a retry/);
  });

  it('keeps at most the start of a long answer, marked as cut', async () => {
    receiver.respondBody = () => 'x'.repeat(50_000);
    try {
      const sent = await t.request('POST', '/v1/admin/webhooks/test', { headers: a.headers });
      const delivery = await settled(sent.body.id);
      expect(delivery.attempts[0].response).toBe(`${'x'.repeat(1024)}…`);
    } finally {
      receiver.respondBody = null;
    }
  });

  it('answers 404 to another tenant reading or retrying a delivery', async () => {
    for (const [method, path] of [
      ['GET', `/v1/admin/webhook-deliveries/${testDeliveryId}`],
      ['POST', `/v1/admin/webhook-deliveries/${testDeliveryId}/retry`],
      ['GET', `/v1/admin/webhook-deliveries/${newId()}`],
    ] as const) {
      const res = await t.request(method, path, { headers: b.headers });
      expect(res.status, path).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    const operator = await loggedInUser(t, a.tenant.tenantId, 'operator', `op-r-${newId()}@example.com`);
    const retry = await t.request('POST', `/v1/admin/webhook-deliveries/${testDeliveryId}/retry`, {
      headers: operator,
    });
    expect(retry.status).toBe(403);
  });

  it('names the tenant’s MQTT topics and a broker where a real client receives them', async () => {
    const res = await t.request('GET', '/v1/admin/bus', { headers: a.headers });
    expect(res.status, res.text).toBe(200);
    const tenantId = a.tenant.tenantId;
    expect(res.body.topicPrefix).toBe(`portico/v1/tenants/${tenantId}/`);
    expect(res.body.events).toContainEqual({
      event: 'checkin.success',
      topic: `portico/v1/tenants/${tenantId}/checkin.success`,
      webhook: true,
    });
    expect(res.body.events).toContainEqual({
      event: 'identity.deletion_requested',
      topic: `portico/v1/tenants/${tenantId}/identity.deletion_requested`,
      webhook: false,
    });
    const [broker] = res.body.brokers;
    // The embedded broker also serves WebSocket; an external one (TEST_MQTT_URL) has none unless MQTT_WS_URL.
    if (res.body.embedded) expect(res.body.wsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    else expect(res.body.wsUrl).toBeNull();
    const urls: string[] = [broker.url, ...(res.body.wsUrl ? [res.body.wsUrl] : [])];
    // The embedded broker admits the tenant's bus token only; an external one decides with its own accounts.
    if (res.body.embedded) {
      expect(res.body.credentials).toMatchObject({ username: tenantId, password: expect.any(String) });
      expect(Date.parse(res.body.credentials.expiresAt)).toBeGreaterThan(Date.now());
    } else expect(res.body.credentials).toBeNull();
    const login = res.body.credentials
      ? { username: res.body.credentials.username, password: res.body.credentials.password }
      : {};
    const clients = await Promise.all(
      urls.map((url) => mqtt.connectAsync(url, { protocolVersion: 4, ...login })),
    );
    try {
      const topic = res.body.events.find((e: { event: string }) => e.event === 'webhook.test').topic;
      const got = clients.map(
        (client) =>
          new Promise<{ event: string; tenantId: string }>((resolve) =>
            client.on('message', (_t, payload) => resolve(JSON.parse(payload.toString()))),
          ),
      );
      await Promise.all(clients.map((client) => client.subscribeAsync(topic, { qos: 1 })));
      await t.request('POST', '/v1/admin/webhooks/test', { headers: a.headers });
      for (const message of await Promise.all(got)) {
        expect(message).toMatchObject({ event: 'webhook.test', tenantId });
      }
    } finally {
      await Promise.all(clients.map((client) => client.endAsync()));
    }
  });

  it('advertises MQTT_WS_URL as the WebSocket endpoint when the operator sets it, and none when WebSocket is off', async () => {
    const proxied = await createTestApp({ env: { MQTT_WS_URL: 'wss://mqtt.example.com/mqtt' } });
    const off = await createTestApp({ env: { MQTT_WS_PORT: 'off' } });
    try {
      const bus = async (app: TestApp) => {
        const admin = await adminOf(app);
        const res = await app.request('GET', '/v1/admin/bus', { headers: admin.headers });
        expect(res.status, res.text).toBe(200);
        return res.body;
      };
      expect((await bus(proxied)).wsUrl).toBe('wss://mqtt.example.com/mqtt');
      expect(off.deps.bus.wsUrl).toBeUndefined();
      expect((await bus(off)).wsUrl).toBeNull();
    } finally {
      await proxied.close();
      await off.close();
    }
  });
});
