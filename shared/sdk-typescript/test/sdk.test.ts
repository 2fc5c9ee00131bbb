// The TypeScript SDK against a real service (HTTP, PGlite or TEST_DATABASE_URL, the real face engine
// and photos): the README's quick start, sessions, paging, retries, problem errors, webhooks, the bus.
import type { FaceEngine } from '@portico/face-engine';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateWebhookSecret } from '../../../cloud/src/modules/webhooks/secret-rotation.js';
import { createTestApp, type TestApp } from '@portico/test-support/app';
import { serviceLogin } from '@portico/test-support/bus';
import {
  base64,
  cleanPhotos,
  HAS_MODELS,
  MODELS_SKIP_REASON,
  samePersonPair,
  sharedFaceEngine,
} from '@portico/test-support/faces';
import { newTenant, TestClock } from '@portico/test-support/identity';
import {
  startWebhookReceiver,
  type ReceivedWebhook,
  type WebhookReceiver,
} from '@portico/test-support/webhook-receiver';
import {
  constructWebhookEvent,
  createPortico,
  ok,
  paginate,
  PorticoError,
  verifyWebhookSignature,
  WebhookSignatureError,
  type Portico,
  type PorticoEvent,
} from '../src/index.js';
import { subscribeEvents } from '../src/mqtt.js';

if (!HAS_MODELS) console.warn(MODELS_SKIP_REASON);

describe.skipIf(!HAS_MODELS)('@portico/sdk against a running service', () => {
  let engine: FaceEngine;
  let t: TestApp;
  let receiver: WebhookReceiver;
  const clock = new TestClock(new Date());
  let tenant: Awaited<ReturnType<typeof newTenant>>;
  let admin: Portico;
  let apiKey: string;
  /** An integrator's client whose waits move the service's clock instead of sleeping. */
  const integrator = (waits: number[] = [], maxRetryAfterMs = 60_000) =>
    createPortico({
      baseUrl: t.url,
      apiKey,
      retry: { maxRetryAfterMs },
      sleep: async (ms) => {
        waits.push(ms);
        clock.advance(ms);
      },
    });
  const signedDelivery = async (match: (body: PorticoEvent) => boolean): Promise<ReceivedWebhook> => {
    const body = await receiver.waitForBody(match, 10_000);
    return receiver.received.find((r) => JSON.parse(r.rawBody).id === body.id)!;
  };

  beforeAll(async () => {
    let face;
    ({ engine, face } = await sharedFaceEngine(1));
    t = await createTestApp({ face, clock });
    receiver = await startWebhookReceiver();
    tenant = await newTenant(t);
    admin = createPortico({ baseUrl: t.url });
    await admin.login(tenant.adminEmail, tenant.adminPassword);
    ok(
      await admin.api.PATCH('/v1/tenants/{id}/settings', {
        params: { path: { id: tenant.tenantId } },
        body: { webhookUrl: receiver.url, requireLiveness: false },
      }),
    );
    const app = ok(await admin.api.POST('/v1/applications', { body: { name: 'sdk test' } }));
    apiKey = app.apiKey.key;
  }, 120_000);
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
    await engine?.close();
  });

  it('runs the quick start: create a person, enroll a photo, identify them in another photo', async () => {
    const portico = integrator();
    const [enrollPhoto, probePhoto] = await samePersonPair();
    const person = ok(
      await portico.api.POST('/v1/persons', { body: { name: 'Ada Lovelace', document: 'AL-1815' } }),
    );
    const enrolled = ok(
      await portico.api.POST('/v1/public/onboarding/enroll', {
        body: { personId: person.id, frame: base64(enrollPhoto.bytes) },
      }),
    );
    expect(enrolled.quality).toBeGreaterThan(0.5);
    const result = ok(
      await portico.api.POST('/v1/public/checkin/{tenantSlug}/identify', {
        params: { path: { tenantSlug: tenant.slug } },
        body: { frame: base64(probePhoto.bytes), deviceId: 'sdk-door' },
      }),
    );
    expect(result).toMatchObject({ outcome: 'success', method: 'facial', person: { id: person.id } });
  });

  it('surfaces a problem answer as a PorticoError carrying its code', async () => {
    const portico = integrator();
    const missing = await portico.api.GET('/v1/persons/{id}', { params: { path: { id: 'no-such-person' } } });
    expect(() => ok(missing)).toThrow(PorticoError);
    const error = (() => {
      try {
        ok(missing);
      } catch (e) {
        return e as PorticoError;
      }
    })();
    expect(error).toMatchObject({ status: 404, code: 'not_found' });
    expect(error?.requestId).toBeTruthy();

    const refused = await portico.api.POST('/v1/persons', { body: { name: '', document: 'X' } });
    expect(() => ok(refused)).toThrow(expect.objectContaining({ status: 400, code: 'validation_failed' }));
  });

  it('retries a 429 after the Retry-After the service sent, then succeeds', async () => {
    const waits: number[] = [];
    const portico = integrator(waits, 2 * 3_600_000);
    const person = ok(
      await portico.api.POST('/v1/persons', {
        body: { name: 'Link Person', document: 'LP-1', email: 'link.person@example.com' },
      }),
    );
    const send = () =>
      portico.api.POST('/v1/persons/{id}/send-enrollment-link', { params: { path: { id: person.id } } });
    for (let i = 0; i < 3; i++) ok(await send());
    expect(waits).toEqual([]);
    // The fourth link within the hour is refused with 429 and a Retry-After; the SDK waits and retries.
    const fourth = await send();
    expect(fourth.response.status).toBeLessThan(300);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(0);
    expect(waits[0]).toBeLessThanOrEqual(3_600_000);
  });

  it('does not wait longer than maxRetryAfterMs: the 429 is thrown with its code and retryAfter', async () => {
    const waits: number[] = [];
    const portico = integrator(waits, 1_000);
    const person = ok(
      await portico.api.POST('/v1/persons', {
        body: { name: 'Patient Person', document: 'PP-1', email: 'patient.person@example.com' },
      }),
    );
    const send = () =>
      portico.api.POST('/v1/persons/{id}/send-enrollment-link', { params: { path: { id: person.id } } });
    for (let i = 0; i < 3; i++) ok(await send());
    const refused = await send();
    expect(waits).toEqual([]);
    expect(() => ok(refused)).toThrow(expect.objectContaining({ status: 429, code: 'rate_limited' }));
    try {
      ok(refused);
    } catch (e) {
      expect((e as PorticoError).retryAfter).toBeGreaterThan(1);
    }
  });

  it('pages through every person with paginate', async () => {
    const portico = integrator();
    const created = [];
    for (let i = 0; i < 5; i++) {
      created.push(
        ok(await portico.api.POST('/v1/persons', { body: { name: `Paged ${i}`, document: `PG-${i}` } })).id,
      );
    }
    const seen: string[] = [];
    const pages: number[] = [];
    for await (const person of paginate(async (cursor) => {
      const page = ok(
        await portico.api.GET('/v1/persons', { params: { query: { limit: 2, q: 'Paged', cursor } } }),
      );
      pages.push(page.items.length);
      return page;
    })) {
      seen.push(person.id);
    }
    expect(seen.sort()).toEqual(created.sort());
    expect(pages).toEqual([2, 2, 1]);
  });

  it('renews an expired admin session from its refresh cookie and carries on', async () => {
    const first = admin.accessToken;
    ok(await admin.api.GET('/v1/auth/me'));
    clock.advance(16 * 60_000); // past the 15-minute access token
    const me = ok(await admin.api.GET('/v1/auth/me'));
    expect(me.email).toBe(tenant.adminEmail);
    expect(admin.accessToken).toBeTruthy();
    expect(admin.accessToken).not.toBe(first);
  });

  it("acts on the tenant's sandbox with environment: 'sandbox', apart from live", async () => {
    const switched = createPortico({ baseUrl: t.url, environment: 'sandbox' });
    await switched.login(tenant.adminEmail, tenant.adminPassword);
    const person = ok(
      await switched.api.POST('/v1/persons', { body: { name: 'Sandy Box', document: 'SB-1' } }),
    );
    const app = ok(
      await admin.api.POST('/v1/applications', { body: { name: 'sdk sandbox', environment: 'sandbox' } }),
    );
    const testKey = createPortico({ baseUrl: t.url, apiKey: app.apiKey.key });
    const byTestKey = ok(await testKey.api.GET('/v1/persons/{id}', { params: { path: { id: person.id } } }));
    expect(byTestKey.name).toBe('Sandy Box');
    const byLiveKey = await integrator().api.GET('/v1/persons/{id}', { params: { path: { id: person.id } } });
    expect(byLiveKey.response.status).toBe(404);
    const sandbox = ok(
      await switched.api.GET('/v1/tenants/{id}', { params: { path: { id: tenant.tenantId } } }),
    );
    expect(sandbox).toMatchObject({ environment: 'sandbox', sandboxOf: tenant.tenantId });
    expect(sandbox.id).not.toBe(tenant.tenantId);
  });

  it("calls device routes with an edge device's secret and token", async () => {
    const registered = ok(await admin.api.POST('/v1/devices', { body: { name: 'sdk door' } }));
    const device = createPortico({
      baseUrl: t.url,
      device: { internalSecret: t.deps.secrets.internalSecret, token: registered.token },
    });
    // Past authentication: the device's tenant has no such event (an anonymous caller gets 401).
    const replica = (client: Portico) =>
      client.api.GET('/v1/sync/events/{token}/replica', {
        params: { path: { token: 'no-such-event-token-0000' } },
      });
    const asDevice = await replica(device);
    expect(() => ok(asDevice)).toThrow(expect.objectContaining({ status: 404, code: 'not_found' }));
    const asNobody = await replica(createPortico({ baseUrl: t.url }));
    expect(() => ok(asNobody)).toThrow(expect.objectContaining({ status: 401 }));
  });

  it('verifies an enrollment webhook on its raw body and refuses a tampered copy; sees it on the bus', async () => {
    const portico = integrator();
    const photo = (await cleanPhotos())[1]!;
    const bus = await mqtt.connectAsync(t.deps.bus.url, serviceLogin(t));
    const published: PorticoEvent[] = [];
    const unsubscribe = await subscribeEvents(bus, tenant.tenantId, (e) => published.push(e), {
      events: ['person.enrolled'],
    });
    const person = ok(
      await portico.api.POST('/v1/persons', { body: { name: 'Webhook Person', document: 'WH-1' } }),
    );
    ok(
      await portico.api.POST('/v1/public/onboarding/enroll', {
        body: { personId: person.id, frame: base64(photo.bytes) },
      }),
    );
    const delivery = await signedDelivery(
      (b) => b.event === 'person.enrolled' && b.data.personId === person.id,
    );
    // The receiver's clock: the service's (a test clock the retry tests moved ahead).
    const now = () => clock.now().getTime();
    const headers = delivery.headers as Record<string, string>;
    const event = await constructWebhookEvent({
      rawBody: delivery.rawBody,
      headers,
      secret: tenant.webhookSecret,
      now,
    });
    expect(event).toMatchObject({
      event: 'person.enrolled',
      tenantId: tenant.tenantId,
      data: { personId: person.id },
    });

    const tampered = delivery.rawBody.replace('"person.enrolled"', '"person.deleted"');
    expect(tampered).not.toBe(delivery.rawBody);
    expect(
      await verifyWebhookSignature({ rawBody: tampered, headers, secret: tenant.webhookSecret, now }),
    ).toBe(false);
    await expect(
      constructWebhookEvent({ rawBody: tampered, headers, secret: tenant.webhookSecret, now }),
    ).rejects.toBeInstanceOf(WebhookSignatureError);
    expect(
      await verifyWebhookSignature({ rawBody: delivery.rawBody, headers, secret: 'whsec_other', now }),
    ).toBe(false);

    // Replay protection: the same genuine delivery 5 minutes and a second later is refused (and one
    // the clock says comes from the future); within the tolerance, or a wider one, it passes.
    const sentAt = Number(headers['x-service-timestamp']) * 1000;
    const at = (ms: number) => () => sentAt + ms;
    const verifyAt = (ms: number, toleranceSeconds?: number) =>
      verifyWebhookSignature({
        rawBody: delivery.rawBody,
        headers,
        secret: tenant.webhookSecret,
        now: at(ms),
        ...(toleranceSeconds === undefined ? {} : { toleranceSeconds }),
      });
    expect(await verifyAt(299_000)).toBe(true);
    expect(await verifyAt(301_000)).toBe(false);
    expect(await verifyAt(-301_000)).toBe(false);
    expect(await verifyAt(301_000, 600)).toBe(true);
    await expect(
      constructWebhookEvent({
        rawBody: delivery.rawBody,
        headers,
        secret: tenant.webhookSecret,
        now: at(400_000),
      }),
    ).rejects.toThrow(/timestamp is 400 s from now/);
    // A timestamp changed to look fresh breaks the signature.
    expect(
      await verifyWebhookSignature({
        rawBody: delivery.rawBody,
        headers: { ...headers, 'x-service-timestamp': String(sentAt / 1000 + 400) },
        secret: tenant.webhookSecret,
        now: at(400_000),
      }),
    ).toBe(false);
    // The body-only signature alone (the timestamp headers stripped) is not enough.
    const { 'x-service-timestamp': _t, 'x-service-signature-v2': _v2, ...bodyOnly } = headers;
    expect(bodyOnly['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(
      await verifyWebhookSignature({
        rawBody: delivery.rawBody,
        headers: bodyOnly,
        secret: tenant.webhookSecret,
        now,
      }),
    ).toBe(false);

    await expect.poll(() => published.map((e) => e.id)).toContain(event.id);
    await unsubscribe();
    await bus.endAsync();
  });

  it('accepts either secret during a rotation (two signatures in the header) and neither once tampered', async () => {
    const portico = integrator();
    const rotated = await rotateWebhookSecret(t.deps, { slug: tenant.slug, overlapMs: 3_600_000 });
    const person = ok(
      await portico.api.POST('/v1/persons', { body: { name: 'Rotation', document: 'RT-1' } }),
    );
    ok(await portico.api.DELETE('/v1/persons/{id}', { params: { path: { id: person.id } } }));
    const delivery = await signedDelivery(
      (b) => b.event === 'person.deleted' && b.data.personId === person.id,
    );
    const headers = delivery.headers as Record<string, string>;
    expect(headers['x-service-signature']!.split(',')).toHaveLength(2);
    expect(headers['x-service-signature-v2']!.split(',')).toHaveLength(2);
    const now = () => clock.now().getTime();

    for (const secret of [
      rotated.webhookSecret,
      tenant.webhookSecret,
      [tenant.webhookSecret, rotated.webhookSecret],
    ]) {
      expect(await verifyWebhookSignature({ rawBody: delivery.rawBody, headers, secret, now })).toBe(true);
    }
    const tampered = delivery.rawBody.replace(person.id, 'someone-else');
    expect(
      await verifyWebhookSignature({
        rawBody: tampered,
        headers,
        secret: [tenant.webhookSecret, rotated.webhookSecret],
        now,
      }),
    ).toBe(false);
  });
});
