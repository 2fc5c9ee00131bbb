// The sandbox (contract 9) over real HTTP: `pk_test_` keys and the admin's sandbox switch act on the
// tenant's sandbox, a tenant of its own, on the same paths; live and sandbox never see each other's
// data; sandbox webhooks and bus messages say so; a reset erases the sandbox and nothing else.
import { createHmac } from 'node:crypto';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { serviceLogin } from '../support/bus.js';
import { bearer, loggedInUser } from '../support/identity.js';
import { integratorOf } from '../persons/support.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const SWITCH = 'x-portico-environment';
const hmac = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');

describe('sandbox', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let live: Awaited<ReturnType<typeof integratorOf>>;
  let other: Awaited<ReturnType<typeof integratorOf>>;
  /** Bearer headers of the tenant's `pk_test_` key, and of another tenant's. */
  let testKey: Record<string, string>;
  let otherTestKey: Record<string, string>;
  let adminSandbox: Record<string, string>;

  const sandboxKeyOf = async (admin: Record<string, string>) => {
    const res = await t.request('POST', '/v1/applications', {
      headers: admin,
      body: { name: 'CI', environment: 'sandbox' },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.apiKey.key).toMatch(/^pk_test_/);
    return bearer(res.body.apiKey.key);
  };
  const createPerson = async (headers: Record<string, string>, name: string, email?: string) => {
    const res = await t.request('POST', '/v1/persons', {
      headers,
      body: { name, document: `DOC-${name}`, ...(email ? { email } : {}) },
    });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: string; identityId: string };
  };
  const sandboxTenant = () =>
    t.deps.db.prisma.tenant.findUniqueOrThrow({ where: { sandboxOfId: live.tenantId } });

  beforeAll(async () => {
    t = await createTestApp();
    receiver = await startWebhookReceiver();
    live = await integratorOf(t);
    other = await integratorOf(t);
    // Set before the sandbox exists: the sandbox starts with a copy of the live settings.
    const patched = await t.request('PATCH', `/v1/tenants/${live.tenantId}/settings`, {
      headers: live.headers,
      body: { webhookUrl: receiver.url, qrRepeatWindowMinutes: 0 },
    });
    expect(patched.status, patched.text).toBe(200);
    testKey = await sandboxKeyOf(live.headers);
    otherTestKey = await sandboxKeyOf(other.headers);
    adminSandbox = { ...live.headers, [SWITCH]: 'sandbox' };
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('keeps persons of a pk_test_ key out of live and live persons out of the sandbox', async () => {
    const inSandbox = await createPerson(testKey, 'Sandy');
    const inLive = await createPerson(live.keyHeaders, 'Liv');

    expect((await t.request('GET', `/v1/persons/${inSandbox.id}`, { headers: live.keyHeaders })).status).toBe(
      404,
    );
    expect((await t.request('GET', `/v1/persons/${inLive.id}`, { headers: testKey })).status).toBe(404);
    expect((await t.request('GET', `/v1/persons/${inSandbox.id}`, { headers: testKey })).body.name).toBe(
      'Sandy',
    );
    const liveNames = (await t.request('GET', '/v1/persons', { headers: live.keyHeaders })).body.items.map(
      (p: { name: string }) => p.name,
    );
    const sandboxNames = (await t.request('GET', '/v1/persons', { headers: testKey })).body.items.map(
      (p: { name: string }) => p.name,
    );
    expect(liveNames).toContain('Liv');
    expect(liveNames).not.toContain('Sandy');
    expect(sandboxNames).toContain('Sandy');
    expect(sandboxNames).not.toContain('Liv');

    // The sandbox is a tenant of its own, linked to the live one.
    const sandbox = await sandboxTenant();
    const row = await t.deps.db.prisma.person.findUniqueOrThrow({ where: { id: inSandbox.id } });
    expect(row.tenantId).toBe(sandbox.id);
    expect(sandbox.id).not.toBe(live.tenantId);
  });

  it('answers the sandbox on the live tenant’s path, with the live settings copied at its creation', async () => {
    const sandbox = await sandboxTenant();
    const viaLiveId = await t.request('GET', `/v1/tenants/${live.tenantId}`, { headers: testKey });
    expect(viaLiveId.status, viaLiveId.text).toBe(200);
    expect(viaLiveId.body).toMatchObject({
      id: sandbox.id,
      slug: live.tenant.slug,
      environment: 'sandbox',
      sandboxOf: live.tenantId,
    });
    const viaOwnId = await t.request('GET', `/v1/tenants/${sandbox.id}`, { headers: testKey });
    expect(viaOwnId.body.id).toBe(sandbox.id);
    const liveView = await t.request('GET', `/v1/tenants/${live.tenantId}`, { headers: live.keyHeaders });
    expect(liveView.body).toMatchObject({ id: live.tenantId, environment: 'live', sandboxOf: null });
    // A live caller cannot name the sandbox.
    expect((await t.request('GET', `/v1/tenants/${sandbox.id}`, { headers: live.keyHeaders })).status).toBe(
      404,
    );

    const copied = await t.request('GET', `/v1/tenants/${live.tenantId}/settings`, { headers: testKey });
    expect(copied.body).toMatchObject({ webhookUrl: receiver.url, qrRepeatWindowMinutes: 0 });
    const changed = await t.request('PATCH', `/v1/tenants/${live.tenantId}/settings`, {
      headers: testKey,
      body: { matchThreshold: 0.9 },
    });
    expect(changed.body.matchThreshold).toBe(0.9);
    const liveSettings = await t.request('GET', `/v1/tenants/${live.tenantId}/settings`, {
      headers: live.keyHeaders,
    });
    expect(liveSettings.body.matchThreshold).toBe(0.57);
  });

  it('switches an admin session to the sandbox with x-portico-environment: sandbox', async () => {
    const sandboxPerson = await createPerson(adminSandbox, 'Switched');
    const withSwitch = await t.request('GET', '/v1/persons', { headers: adminSandbox });
    const without = await t.request('GET', '/v1/persons', { headers: live.headers });
    const explicitLive = await t.request('GET', '/v1/persons', {
      headers: { ...live.headers, [SWITCH]: 'live' },
    });
    const ids = (res: { body: { items: { id: string }[] } }) => res.body.items.map((p) => p.id);
    expect(ids(withSwitch)).toContain(sandboxPerson.id);
    expect(ids(without)).not.toContain(sandboxPerson.id);
    expect(ids(explicitLive)).toEqual(ids(without));
    // The pk_test_ key and the switched session see the same sandbox.
    expect((await t.request('GET', `/v1/persons/${sandboxPerson.id}`, { headers: testKey })).status).toBe(
      200,
    );
    const me = await t.request('GET', `/v1/tenants/${live.tenantId}`, { headers: adminSandbox });
    expect(me.body.environment).toBe('sandbox');
  });

  it('keeps applications and keys on the live tenant whatever the switch says', async () => {
    const switched = await t.request('GET', '/v1/applications', { headers: adminSandbox });
    const plain = await t.request('GET', '/v1/applications', { headers: live.headers });
    expect(switched.status).toBe(200);
    expect(switched.body).toEqual(plain.body);
    expect(plain.body.items.map((a: { environment: string }) => a.environment).sort()).toEqual([
      'live',
      'sandbox',
    ]);
  });

  it('refuses a switch that is not live or sandbox, and one that contradicts the API key', async () => {
    const bad = await t.request('GET', '/v1/persons', { headers: { ...live.headers, [SWITCH]: 'staging' } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
    const liveKeyToSandbox = await t.request('GET', '/v1/persons', {
      headers: { ...live.keyHeaders, [SWITCH]: 'sandbox' },
    });
    expect(liveKeyToSandbox.status).toBe(400);
    expect(liveKeyToSandbox.body.errors[0].message).toContain('pk_test_');
    const testKeyToLive = await t.request('GET', '/v1/persons', {
      headers: { ...testKey, [SWITCH]: 'live' },
    });
    expect(testKeyToLive.status).toBe(400);
    const agreeing = await t.request('GET', '/v1/persons', { headers: { ...testKey, [SWITCH]: 'sandbox' } });
    expect(agreeing.status).toBe(200);
  });

  it('keeps events and their guests apart', async () => {
    const event = await t.request('POST', '/v1/events', { headers: testKey, body: { name: 'Dry run' } });
    expect(event.status, event.text).toBe(201);
    const guest = await t.request('POST', `/v1/events/${event.body.id}/guests`, {
      headers: testKey,
      body: { name: 'Gus Guest', email: 'gus@example.com' },
    });
    expect(guest.status, guest.text).toBe(201);
    expect((await t.request('GET', `/v1/events/${event.body.id}`, { headers: live.keyHeaders })).status).toBe(
      404,
    );
    expect(
      (await t.request('GET', `/v1/events/${event.body.id}/guests`, { headers: live.keyHeaders })).status,
    ).toBe(404);
    const liveEvents = await t.request('GET', '/v1/events', { headers: live.keyHeaders });
    expect(liveEvents.body.items.map((e: { id: string }) => e.id)).not.toContain(event.body.id);
    const liveEvent = await t.request('POST', '/v1/events', {
      headers: live.keyHeaders,
      body: { name: 'Real' },
    });
    const sandboxEvents = await t.request('GET', '/v1/events', { headers: testKey });
    expect(sandboxEvents.body.items.map((e: { id: string }) => e.id)).toEqual([event.body.id]);
    expect((await t.request('GET', `/v1/events/${liveEvent.body.id}`, { headers: testKey })).status).toBe(
      404,
    );
  });

  it('marks a sandbox check-in’s webhook and bus message as sandbox, signed with the sandbox’s own secret', async () => {
    const sandbox = await sandboxTenant();
    const secrets = await t.request('GET', `/v1/tenants/${live.tenantId}/sandbox`, { headers: live.headers });
    expect(secrets.status, secrets.text).toBe(200);
    expect(secrets.body).toMatchObject({ tenantId: sandbox.id, liveTenantId: live.tenantId });
    const sandboxSecret = secrets.body.webhookSecret as string;
    expect(sandboxSecret).not.toBe(live.tenant.webhookSecret);
    const read = await t.deps.db.prisma.auditLog.findFirst({
      where: { tenantId: live.tenantId, action: 'sandbox.webhook_secret.read' },
    });
    expect(read?.targetId).toBe(sandbox.id);
    expect(JSON.stringify(read?.metadata)).not.toContain(sandboxSecret);

    const bus = await mqtt.connectAsync(t.deps.bus.url, serviceLogin(t));
    const messages: { topic: string; body: Record<string, unknown> }[] = [];
    bus.on('message', (topic, payload) => messages.push({ topic, body: JSON.parse(payload.toString()) }));
    await bus.subscribeAsync(`portico/v1/tenants/+/checkin.success`, { qos: 1 });

    const scan = async (keyHeaders: Record<string, string>) => {
      const person = await createPerson(keyHeaders, `Scanned ${Math.random().toString(36).slice(2, 7)}`);
      const qr = await t.request('GET', `/v1/checkin/identities/${person.identityId}/qr-token`, {
        headers: keyHeaders,
      });
      expect(qr.status, qr.text).toBe(201);
      // The public QR route needs no credentials: the token says which tenant (and environment) it is.
      const res = await t.request('GET', `/v1/public/checkin/qr/${qr.body.token}`);
      expect(res.body.outcome, res.text).toBe('success');
      return res.body.checkInId as string;
    };
    const sandboxCheckIn = await scan(testKey);
    const liveCheckIn = await scan(live.keyHeaders);

    const sandboxHook = await receiver.waitForBody((b) => b.data.checkInId === sandboxCheckIn);
    expect(sandboxHook).toMatchObject({
      event: 'checkin.success',
      environment: 'sandbox',
      tenantId: sandbox.id,
    });
    const raw = receiver.received.find((r) => r.rawBody.includes(sandboxCheckIn))!;
    expect(raw.headers['x-service-signature']).toBe(hmac(sandboxSecret, raw.rawBody));
    expect(raw.headers['x-service-signature']).not.toBe(hmac(live.tenant.webhookSecret, raw.rawBody));
    const liveHook = await receiver.waitForBody((b) => b.data.checkInId === liveCheckIn);
    expect(liveHook).toMatchObject({ environment: 'live', tenantId: live.tenantId });

    // By check-in: CI's Mosquitto is shared by the test files running at the same time.
    const onBus = (checkInId: string) =>
      messages.find((m) => (m.body.data as { checkInId?: string } | undefined)?.checkInId === checkInId);
    const deadline = Date.now() + 5_000;
    while (!(onBus(sandboxCheckIn) && onBus(liveCheckIn)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    await bus.endAsync();
    expect(onBus(sandboxCheckIn)).toMatchObject({
      topic: `portico/v1/tenants/${sandbox.id}/checkin.success`,
      body: { environment: 'sandbox', tenantId: sandbox.id },
    });
    expect(onBus(liveCheckIn)).toMatchObject({
      topic: `portico/v1/tenants/${live.tenantId}/checkin.success`,
      body: { environment: 'live' },
    });
    // The check-ins themselves are apart too.
    const row = await t.deps.db.prisma.checkIn.findUniqueOrThrow({ where: { id: sandboxCheckIn } });
    expect(row.tenantId).toBe(sandbox.id);
  });

  it('resolves a public slug path to the live tenant, and to the sandbox only with a sandbox credential', async () => {
    const sandbox = await sandboxTenant();
    const noncesOf = (tenantId: string) => t.deps.db.prisma.livenessNonce.count({ where: { tenantId } });
    const before = { live: await noncesOf(live.tenantId), sandbox: await noncesOf(sandbox.id) };
    const path = `/v1/public/checkin/${live.tenant.slug}/liveness/challenge`;
    const liveNonce = await t.request('GET', path);
    const sandboxNonce = await t.request('GET', path, { headers: testKey });
    expect([liveNonce.status, sandboxNonce.status]).toEqual([200, 200]);
    // A nonce is its tenant's (a row is written when it is used): the sandbox key spends the sandbox's
    // and is refused the live tenant's.
    const identify = (nonce: string) =>
      t.request('POST', `/v1/public/checkin/${live.tenant.slug}/identify`, {
        body: { frame: 'aGVsbG8=', nonce },
        headers: testKey,
      });
    const refused = await identify(liveNonce.body.nonce);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('invalid_nonce');
    expect((await identify(sandboxNonce.body.nonce)).body.code).not.toBe('invalid_nonce');
    expect(await noncesOf(sandbox.id)).toBe(before.sandbox + 1);
    expect(await noncesOf(live.tenantId)).toBe(before.live);
    // The sandbox's own slug in the table is no public path.
    const bySandboxSlug = await t.request('GET', `/v1/public/checkin/${sandbox.slug}/liveness/challenge`);
    expect(bySandboxSlug.status).toBe(404);
  });

  it('keeps another tenant’s sandbox out of reach', async () => {
    const mine = await createPerson(testKey, 'Mine');
    expect((await t.request('GET', `/v1/persons/${mine.id}`, { headers: otherTestKey })).status).toBe(404);
    expect((await t.request('GET', `/v1/tenants/${live.tenantId}`, { headers: otherTestKey })).status).toBe(
      404,
    );
    const sandbox = await sandboxTenant();
    expect((await t.request('GET', `/v1/tenants/${sandbox.id}`, { headers: otherTestKey })).status).toBe(404);
    const otherSwitched = { ...other.headers, [SWITCH]: 'sandbox' };
    expect(
      (await t.request('GET', `/v1/tenants/${sandbox.id}/sandbox`, { headers: otherSwitched })).status,
    ).toBe(404);
    expect(
      (await t.request('POST', `/v1/tenants/${live.tenantId}/sandbox/reset`, { headers: other.headers }))
        .status,
    ).toBe(404);
    const identify = await t.request('POST', `/v1/public/checkin/${live.tenant.slug}/identify`, {
      headers: otherTestKey,
      body: { frame: Buffer.from('not a photo').toString('base64') },
    });
    expect(identify.status).toBe(404);
    // The other tenant's own sandbox has none of this tenant's sandbox persons.
    const theirs = await t.request('GET', '/v1/persons', { headers: otherTestKey });
    expect(theirs.body.items).toEqual([]);
  });

  it('gives a device registered in the sandbox the sandbox’s events only', async () => {
    const device = await t.request('POST', '/v1/devices', { headers: adminSandbox, body: { name: 'Kiosk' } });
    expect(device.status, device.text).toBe(201);
    const asDevice = {
      'x-internal-secret': t.deps.secrets.internalSecret.split(',')[0]!,
      'x-device-token': device.body.token as string,
    };
    const sandboxEvent = await t.request('POST', '/v1/events', {
      headers: testKey,
      body: { name: 'Rehearsal' },
    });
    const liveEvent = await t.request('POST', '/v1/events', {
      headers: live.keyHeaders,
      body: { name: 'Gala' },
    });
    for (const [event, headers] of [
      [sandboxEvent, testKey],
      [liveEvent, live.keyHeaders],
    ] as const) {
      const opened = await t.request('PATCH', `/v1/events/${event.body.id}/status`, {
        headers,
        body: { status: 'open' },
      });
      expect(opened.status, opened.text).toBe(200);
    }
    const replica = (token: string) =>
      t.request('GET', `/v1/sync/events/${token}/replica`, { headers: asDevice });
    expect((await replica(sandboxEvent.body.publicToken)).status).toBe(200);
    expect((await replica(liveEvent.body.publicToken)).status).toBe(404);
    const liveDevices = await t.request('GET', '/v1/devices', { headers: live.headers });
    expect(liveDevices.body.items.map((d: { id: string }) => d.id)).not.toContain(device.body.id);
  });

  it('lets only an owner or admin session read the sandbox secret or reset it', async () => {
    const operator = await loggedInUser(t, live.tenantId, 'operator', `op-${Date.now()}@example.com`);
    expect(
      (await t.request('POST', `/v1/tenants/${live.tenantId}/sandbox/reset`, { headers: operator })).status,
    ).toBe(403);
    expect(
      (await t.request('GET', `/v1/tenants/${live.tenantId}/sandbox`, { headers: operator })).status,
    ).toBe(403);
    expect(
      (await t.request('POST', `/v1/tenants/${live.tenantId}/sandbox/reset`, { headers: testKey })).status,
    ).toBe(403);
  });

  it('reset erases the sandbox’s data, keeps its id and secret, and leaves live intact', async () => {
    const sandbox = await sandboxTenant();
    const secretBefore = (
      await t.request('GET', `/v1/tenants/${live.tenantId}/sandbox`, { headers: live.headers })
    ).body.webhookSecret;
    const device = await t.request('POST', '/v1/devices', {
      headers: adminSandbox,
      body: { name: 'Test door' },
    });
    expect(device.status, device.text).toBe(201);
    const deviceHeaders = {
      'x-internal-secret': t.deps.secrets.internalSecret.split(',')[0]!,
      'x-device-token': device.body.token as string,
    };
    const deviceCall = () =>
      t.request('GET', `/v1/public/checkin/${live.tenant.slug}/liveness/challenge`, {
        headers: deviceHeaders,
      });
    expect((await deviceCall()).status).toBe(200);
    const db = t.deps.db.prisma;
    const count = async (tenantId: string) => ({
      persons: await db.person.count({ where: { tenantId } }),
      events: await db.event.count({ where: { tenantId } }),
      guests: await db.guest.count({ where: { tenantId } }),
      checkIns: await db.checkIn.count({ where: { tenantId } }),
      devices: await db.device.count({ where: { tenantId } }),
      outbox: await db.outboxEvent.count({ where: { tenantId } }),
    });
    const sandboxBefore = await count(sandbox.id);
    const liveBefore = await count(live.tenantId);
    expect(sandboxBefore.persons).toBeGreaterThan(0);
    expect(sandboxBefore.checkIns).toBeGreaterThan(0);

    const reset = await t.request('POST', `/v1/tenants/${live.tenantId}/sandbox/reset`, {
      headers: live.headers,
    });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body).toMatchObject({
      tenantId: sandbox.id,
      erased: {
        persons: sandboxBefore.persons,
        events: sandboxBefore.events,
        guests: sandboxBefore.guests,
        checkIns: sandboxBefore.checkIns,
        devices: sandboxBefore.devices,
      },
    });

    expect(await count(sandbox.id)).toEqual({
      persons: 0,
      events: 0,
      guests: 0,
      checkIns: 0,
      devices: 0,
      outbox: 0,
    });
    expect(await count(live.tenantId)).toEqual(liveBefore);
    expect((await t.request('GET', '/v1/persons', { headers: testKey })).body.items).toEqual([]);
    // Same tenant id, settings and secret: integrations keep working.
    const after = await t.request('GET', `/v1/tenants/${live.tenantId}`, { headers: testKey });
    expect(after.body.id).toBe(sandbox.id);
    const settings = await t.request('GET', `/v1/tenants/${live.tenantId}/settings`, { headers: testKey });
    expect(settings.body.matchThreshold).toBe(0.9);
    const secretAfter = (
      await t.request('GET', `/v1/tenants/${live.tenantId}/sandbox`, { headers: live.headers })
    ).body.webhookSecret;
    expect(secretAfter).toBe(secretBefore);
    // The sandbox's device went with it; the sandbox key still works.
    expect((await deviceCall()).status).toBe(401);
    expect((await createPerson(testKey, 'After reset')).id).toEqual(expect.any(String));
    const audit = await db.auditLog.findFirstOrThrow({
      where: { tenantId: live.tenantId, action: 'sandbox.reset' },
    });
    expect(audit.targetId).toBe(sandbox.id);
  });

  it('makes one sandbox when its first calls race', async () => {
    const fresh = await integratorOf(t);
    const key = await sandboxKeyOf(fresh.headers);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => t.request('GET', `/v1/tenants/${fresh.tenantId}`, { headers: key })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(await t.deps.db.prisma.tenant.count({ where: { sandboxOfId: fresh.tenantId } })).toBe(1);
  });
});
