import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/infra/crypto.js';
import { newId } from '../../src/infra/db/index.js';
import { createNonceService } from '../../src/modules/checkin/nonces.js';
import { adminOf, bearer, TestClock } from '../support/identity.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase } from '../support/database.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

// Persons and identities are created straight in the database here: this file is about check-in.
async function personWithIdentity(t: TestApp, tenantId: string, name: string) {
  const personId = newId();
  const identityId = newId();
  await t.deps.db.prisma.person.create({
    data: { id: personId, tenantId, name, document: `DOC-${personId.slice(-6)}` },
  });
  await t.deps.db.prisma.identity.create({ data: { id: identityId, tenantId, personId } });
  return { personId, identityId };
}

async function event(t: TestApp, tenantId: string, fields: Record<string, unknown> = {}) {
  const id = newId();
  await t.deps.db.prisma.event.create({
    data: { id, tenantId, name: 'Gala', status: 'open', publicToken: `ev_${id}`, ...fields },
  });
  return id;
}

describe('QR tokens and manual check-in', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let admin: Awaited<ReturnType<typeof adminOf>>;
  beforeAll(async () => {
    t = await createTestApp();
    receiver = await startWebhookReceiver();
    admin = await adminOf(t);
    // Every scan records here (no repeat window): these tests scan one code several times on purpose.
    await t.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, {
      body: { webhookUrl: receiver.url, qrRepeatWindowMinutes: 0 },
      headers: admin.headers,
    });
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('generates a QR token once, reads it back, checks the person in with it and revokes it', async () => {
    const { personId, identityId } = await personWithIdentity(t, admin.tenant.tenantId, 'Ana Maria Silva');
    const created = await t.request('GET', `/v1/checkin/identities/${identityId}/qr-token`, {
      headers: admin.headers,
    });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^qr_/);
    expect(created.body.url).toBe(`${t.deps.config.publicUrl}/v1/public/checkin/qr/${created.body.token}`);
    expect(created.body.qrCode).toMatch(/^data:image\/png;base64,/);
    const read = await t.request('GET', `/v1/checkin/identities/${identityId}/qr-token`, {
      headers: admin.headers,
    });
    expect(read.status).toBe(200);
    expect(read.body.token).toBe(created.body.token);
    const stored = await t.deps.db.prisma.checkinToken.findFirstOrThrow({ where: { identityId } });
    expect(stored.tokenHash).not.toContain(created.body.token);
    expect(stored.tokenHash).toBe(hashToken(created.body.token));
    expect(Buffer.from(stored.tokenEnc!).includes(Buffer.from(created.body.token))).toBe(false);

    const scan = await t.request('GET', `/v1/public/checkin/qr/${created.body.token}`);
    expect(scan.status).toBe(200);
    expect(scan.body).toMatchObject({
      outcome: 'success',
      reason: null,
      method: 'qr',
      person: { id: personId, displayName: 'Ana' },
      geofenceStatus: 'not_applicable',
    });
    const row = await t.deps.db.prisma.checkIn.findUniqueOrThrow({ where: { id: scan.body.checkInId } });
    expect(row).toMatchObject({ personId, identityId, method: 'qr', outcome: 'success' });
    const audit = await t.deps.db.prisma.auditLog.findFirst({ where: { targetId: scan.body.checkInId } });
    expect(audit?.action).toBe('checkin.qr');
    expect(await receiver.waitForBody((b) => b.data.checkInId === scan.body.checkInId)).toMatchObject({
      event: 'checkin.success',
      tenantId: admin.tenant.tenantId,
      data: { personId, eventId: null, method: 'qr', geofenceStatus: 'not_applicable' },
    });

    const revoked = await t.request('DELETE', `/v1/checkin/identities/${identityId}/qr-token`, {
      headers: admin.headers,
    });
    expect(revoked.status).toBe(204);
    const again = await t.request('GET', `/v1/public/checkin/qr/${created.body.token}`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('not_found');
    expect(
      (await t.request('DELETE', `/v1/checkin/identities/${identityId}/qr-token`, { headers: admin.headers }))
        .status,
    ).toBe(404);
    const fresh = await t.request('GET', `/v1/checkin/identities/${identityId}/qr-token`, {
      headers: admin.headers,
    });
    expect(fresh.status).toBe(201);
    expect(fresh.body.token).not.toBe(created.body.token);
  });

  it('refuses an unknown QR token and another tenant’s identity with 404', async () => {
    expect((await t.request('GET', `/v1/public/checkin/qr/qr_${'x'.repeat(32)}`)).status).toBe(404);
    const other = await adminOf(t);
    const { identityId } = await personWithIdentity(t, admin.tenant.tenantId, 'Bruno');
    const res = await t.request('GET', `/v1/checkin/identities/${identityId}/qr-token`, {
      headers: other.headers,
    });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });

  it('refuses the QR codes of a suspended tenant with 404 and records nothing', async () => {
    const other = await adminOf(t);
    const { identityId } = await personWithIdentity(t, other.tenant.tenantId, 'Carla');
    const qr = await t.request('GET', `/v1/checkin/identities/${identityId}/qr-token`, {
      headers: other.headers,
    });
    expect(qr.status).toBe(201);
    const { prisma } = t.deps.db;
    await prisma.tenant.update({ where: { id: other.tenant.tenantId }, data: { status: 'suspended' } });
    const scan = await t.request('GET', `/v1/public/checkin/qr/${qr.body.token}`);
    expect(scan.status).toBe(404);
    expect(await prisma.checkIn.count({ where: { tenantId: other.tenant.tenantId } })).toBe(0);
    await prisma.tenant.update({ where: { id: other.tenant.tenantId }, data: { status: 'active' } });
    expect((await t.request('GET', `/v1/public/checkin/qr/${qr.body.token}`)).status).toBe(200);
  });

  it('checks a person in by hand, only with an admin session', async () => {
    const { personId } = await personWithIdentity(t, admin.tenant.tenantId, 'Carla Dias');
    const res = await t.request('POST', '/v1/checkin/manual', { body: { personId }, headers: admin.headers });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: 'success', method: 'manual', person: { id: personId } });
    const app = await t.request('POST', '/v1/applications', {
      body: { name: 'door' },
      headers: admin.headers,
    });
    const key = app.body.apiKey?.key ?? app.body.key;
    const byKey = await t.request('POST', '/v1/checkin/manual', { body: { personId }, headers: bearer(key) });
    expect(byKey.status).toBe(403);
    const unknown = await t.request('POST', '/v1/checkin/manual', {
      body: { personId: newId() },
      headers: admin.headers,
    });
    expect(unknown.status).toBe(404);
  });

  it('applies event capacity (distinct persons), closed status and allowed methods', async () => {
    const eventId = await event(t, admin.tenant.tenantId, {
      capacity: 1,
      checkinMethods: ['manual', 'facial'],
    });
    const a = await personWithIdentity(t, admin.tenant.tenantId, 'Dora');
    const b = await personWithIdentity(t, admin.tenant.tenantId, 'Eli');
    const manual = (personId: string, ev = eventId) =>
      t.request('POST', '/v1/checkin/manual', { body: { personId, eventId: ev }, headers: admin.headers });
    expect((await manual(a.personId)).body.outcome).toBe('success');
    expect((await manual(a.personId)).body.outcome).toBe('success'); // the same person again takes no new place
    const full = await manual(b.personId);
    expect(full.body).toMatchObject({ outcome: 'denied', reason: 'capacity_reached', eventId });

    const qr = await t.request('GET', `/v1/checkin/identities/${b.identityId}/qr-token`, {
      headers: admin.headers,
    });
    const other = await event(t, admin.tenant.tenantId, { checkinMethods: ['facial'] });
    const byQr = await t.request('GET', `/v1/public/checkin/qr/${qr.body.token}?eventId=${other}`);
    expect(byQr.body).toMatchObject({ outcome: 'denied', reason: 'method_not_allowed' });

    const closed = await event(t, admin.tenant.tenantId, { status: 'closed' });
    expect((await manual(b.personId, closed)).body).toMatchObject({
      outcome: 'denied',
      reason: 'event_closed',
    });
    expect((await manual(b.personId, newId())).status).toBe(404);
  });

  it('approves with a geofence alert outside the event radius', async () => {
    const eventId = await event(t, admin.tenant.tenantId, {
      geofenceLat: 38.7223,
      geofenceLng: -9.1393,
      geofenceRadiusM: 150,
    });
    const p = await personWithIdentity(t, admin.tenant.tenantId, 'Fabio');
    const qr = await t.request('GET', `/v1/checkin/identities/${p.identityId}/qr-token`, {
      headers: admin.headers,
    });
    const near = await t.request(
      'GET',
      `/v1/public/checkin/qr/${qr.body.token}?eventId=${eventId}&lat=38.7230&lng=-9.1393`,
    );
    expect(near.body).toMatchObject({ outcome: 'success', geofenceStatus: 'ok' });
    const far = await t.request(
      'GET',
      `/v1/public/checkin/qr/${qr.body.token}?eventId=${eventId}&lat=38.7400&lng=-9.1393`,
    );
    expect(far.body).toMatchObject({ outcome: 'geofence_alert', geofenceStatus: 'outside' });
    const alert = await receiver.waitForBody((b) => b.data.checkInId === far.body.checkInId);
    expect(alert).toMatchObject({
      event: 'checkin.geofence_alert',
      data: { eventId, geofenceStatus: 'outside' },
    });
    const unknown = await t.request('GET', `/v1/public/checkin/qr/${qr.body.token}?eventId=${eventId}`);
    expect(unknown.body).toMatchObject({ outcome: 'success', geofenceStatus: 'unknown' });
  });
});

describe('liveness challenge', () => {
  let t: TestApp;
  let clock: TestClock;
  let tenantId: string;
  let slug: string;
  beforeAll(async () => {
    clock = new TestClock();
    t = await createTestApp({ clock });
    const admin = await adminOf(t);
    tenantId = admin.tenant.tenantId;
    slug = admin.tenant.slug;
  });
  afterAll(() => t.close());

  it('issues a signed nonce for a tenant slug and 404 for an unknown slug', async () => {
    const res = await t.request('GET', `/v1/public/checkin/${slug}/liveness/challenge`);
    expect(res.status).toBe(200);
    expect(res.body.challenge).toBe('passive');
    // Id, expiry, challenge and MAC: issuing one writes nothing (the row is written when it is used).
    expect(res.body.nonce.split('.')).toHaveLength(4);
    expect(res.body.nonce.split('.')[2]).toBe('passive');
    expect(await t.deps.db.prisma.livenessNonce.count()).toBe(0);
    expect(Date.parse(res.body.expiresAt) - clock.now().getTime()).toBe(120_000);
    expect((await t.request('GET', '/v1/public/checkin/no-such-tenant/liveness/challenge')).status).toBe(404);
  });

  it('limits identify to 120 calls a minute per client address, before it even looks up the tenant', async () => {
    const headers = { 'x-forwarded-for': '203.0.113.7' };
    const call = () =>
      t.request('POST', '/v1/public/checkin/no-such-tenant/identify', { body: { frame: 'AAAA' }, headers });
    for (let i = 0; i < 120; i++) expect((await call()).status).toBe(404);
    const limited = await call();
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    clock.advance(60_000);
    expect((await call()).status).toBe(404);
  });

  it('accepts a nonce once, and refuses forged, expired and another tenant’s nonces', async () => {
    const nonces = createNonceService({ db: t.deps.db, clock, key: t.deps.secrets.jwtKey });
    const issue = async () =>
      (await t.request('GET', `/v1/public/checkin/${slug}/liveness/challenge`)).body.nonce as string;
    const first = await issue();
    // Consuming answers what the nonce asked for (passive, or an active challenge's action).
    await expect(nonces.consume(tenantId, first)).resolves.toEqual(expect.any(String));
    await expect(nonces.consume(tenantId, first)).rejects.toMatchObject({
      status: 400,
      code: 'invalid_nonce',
    });
    const [id, exp, challenge, mac] = (await issue()).split('.');
    await expect(nonces.consume(tenantId, `${id}.${exp}.${challenge}.forged`)).rejects.toMatchObject({
      code: 'invalid_nonce',
    });
    // Its own MAC with the expiry pushed back, or another action asked: expiry and challenge are signed.
    for (const altered of [`${id}.${Number(exp) + 3600}.${challenge}.${mac}`, `${id}.${exp}.blink.${mac}`]) {
      await expect(nonces.consume(tenantId, altered)).rejects.toMatchObject({ code: 'invalid_nonce' });
    }
    // Another nonce's MAC on this id: the MAC binds the id.
    await expect(
      nonces.consume(tenantId, `${id}.${exp}.${challenge}.${(await issue()).split('.')[3]}`),
    ).rejects.toMatchObject({ code: 'invalid_nonce' });
    await expect(nonces.consume(tenantId, `${id}.${exp}.${challenge}.${mac}`)).resolves.toBe('passive');
    const other = await adminOf(t);
    await expect(nonces.consume(other.tenant.tenantId, await issue())).rejects.toMatchObject({
      code: 'invalid_nonce',
    });
    const late = await issue();
    clock.advance(120_001);
    await expect(nonces.consume(tenantId, late)).rejects.toMatchObject({ code: 'invalid_nonce' });
  });
});

describe('housekeeping', () => {
  it('deletes liveness nonces a day after they expired, and keeps recent ones', async () => {
    const db = await createTestDatabase();
    const first = await createTestApp({ database: db });
    const admin = await adminOf(first);
    await first.close();
    const day = 24 * 3_600_000;
    const old = newId();
    const recent = newId();
    await db.prisma.livenessNonce.createMany({
      data: [
        { id: old, tenantId: admin.tenant.tenantId, expiresAt: new Date(Date.now() - day - 60_000) },
        { id: recent, tenantId: admin.tenant.tenantId, expiresAt: new Date(Date.now() - 60_000) },
      ],
    });
    const second = await createTestApp({ database: db });
    try {
      await expect.poll(() => db.prisma.livenessNonce.count({ where: { id: old } })).toBe(0);
      expect(await db.prisma.livenessNonce.count({ where: { id: recent } })).toBe(1);
    } finally {
      await second.close();
      await db.close();
    }
  });
});
