// A QR token is not a permanent password (issue 12 item 4): repeats within the tenant's window record
// nothing new, tokens expire and rotate, link prefetchers and browsers check no one in, and a code is
// limited per code (checkin/venue-limits.test.ts has the rest of the limits).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import { adminOf, bearer, startApp, type IdentityApp } from '../support/identity.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('QR check-in', () => {
  let app: IdentityApp;
  let receiver: WebhookReceiver;
  let admin: Awaited<ReturnType<typeof adminOf>>;
  let key: Record<string, string>;

  beforeAll(async () => {
    app = await startApp();
    receiver = await startWebhookReceiver();
    admin = await adminOf(app);
    await settings({ webhookUrl: receiver.url });
    // An API key outlives the hours this file moves the clock by (a session token lasts 15 minutes).
    const created = await app.request('POST', '/v1/applications', {
      headers: admin.headers,
      body: { name: 'door' },
    });
    key = bearer(created.body.apiKey.key);
  });
  afterAll(async () => {
    await receiver?.close();
    await app?.close();
  });

  function settings(body: object) {
    return app.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, {
      headers: key ?? admin.headers,
      body,
    });
  }

  async function qrOf(name: string) {
    const personId = newId();
    const identityId = newId();
    const tenantId = admin.tenant.tenantId;
    await app.deps.db.prisma.person.create({
      data: { id: personId, tenantId, name, document: `DOC-${personId.slice(-8)}` },
    });
    await app.deps.db.prisma.identity.create({ data: { id: identityId, tenantId, personId } });
    const res = await app.request('GET', `/v1/checkin/identities/${identityId}/qr-token`, { headers: key });
    expect(res.status, res.text).toBe(201);
    return { personId, identityId, token: res.body.token as string, view: res.body };
  }

  async function event(fields: Record<string, unknown> = {}) {
    const id = newId();
    await app.deps.db.prisma.event.create({
      data: {
        id,
        tenantId: admin.tenant.tenantId,
        name: 'Gala',
        status: 'open',
        publicToken: `ev_${id}`,
        ...fields,
      },
    });
    return id;
  }

  const scan = (token: string, query = '', headers: Record<string, string> = {}) =>
    app.request('GET', `/v1/public/checkin/qr/${token}${query}`, { headers });
  const checkIns = (identityId: string) => app.deps.db.prisma.checkIn.count({ where: { identityId } });

  it('records the first scan; repeats within 5 minutes record nothing and answer the first (alreadyCheckedIn)', async () => {
    const { token, identityId, personId } = await qrOf('Ana Maria');
    const first = await scan(token);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({
      outcome: 'success',
      alreadyCheckedIn: false,
      person: { id: personId },
    });
    for (let i = 0; i < 3; i++) {
      app.clock.advance(MINUTE);
      const again = await scan(token);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({
        alreadyCheckedIn: true,
        checkInId: first.body.checkInId,
        outcome: 'success',
        occurredAt: first.body.occurredAt,
        person: { id: personId, displayName: 'Ana' },
      });
    }
    expect(await checkIns(identityId)).toBe(1);
    expect(
      await app.deps.db.prisma.auditLog.count({
        where: {
          tenantId: admin.tenant.tenantId,
          action: 'checkin.qr',
          metadata: { path: ['personId'], equals: personId },
        },
      }),
    ).toBe(1);
    app.clock.advance(2 * MINUTE); // 5 minutes after the first scan
    const later = await scan(token);
    expect(later.body).toMatchObject({ alreadyCheckedIn: false, outcome: 'success' });
    expect(later.body.checkInId).not.toBe(first.body.checkInId);
    expect(await checkIns(identityId)).toBe(2);
    await receiver.waitForBody((b) => b.data.checkInId === later.body.checkInId);
    const hooks = receiver.received
      .map((r) => JSON.parse(r.rawBody))
      .filter((b) => b.data.personId === personId);
    // Deliveries are at least once (moving the clock can outlast a delivery's lock): count check-ins.
    expect(new Set(hooks.map((b) => b.data.checkInId))).toEqual(
      new Set([first.body.checkInId, later.body.checkInId]),
    );
  });

  it('records one check-in when the same code is scanned five times at once', async () => {
    const { token, identityId } = await qrOf('Bruno');
    const answers = await Promise.all(Array.from({ length: 5 }, () => scan(token)));
    expect(await checkIns(identityId)).toBe(1);
    for (const res of answers) expect([200, 409]).toContain(res.status);
    expect(answers.filter((r) => r.status === 200 && r.body.alreadyCheckedIn === false)).toHaveLength(1);
  });

  it('keeps events apart, and a refused scan does not hold the window', async () => {
    const { token, identityId } = await qrOf('Carla');
    const closed = await event({ status: 'closed' });
    const refused = await scan(token, `?eventId=${closed}`);
    expect(refused.body).toMatchObject({
      outcome: 'denied',
      reason: 'event_closed',
      alreadyCheckedIn: false,
    });
    await app.deps.db.prisma.event.update({ where: { id: closed }, data: { status: 'open' } });
    const admitted = await scan(token, `?eventId=${closed}`);
    expect(admitted.body).toMatchObject({ outcome: 'success', alreadyCheckedIn: false, eventId: closed });
    const other = await scan(token, `?eventId=${await event()}`);
    expect(other.body).toMatchObject({ outcome: 'success', alreadyCheckedIn: false });
    const noEvent = await scan(token);
    expect(noEvent.body.alreadyCheckedIn).toBe(false);
    expect((await scan(token, `?eventId=${closed}`)).body).toMatchObject({
      alreadyCheckedIn: true,
      checkInId: admitted.body.checkInId,
    });
    expect(await checkIns(identityId)).toBe(4);
  });

  it('records every scan when the tenant sets qrRepeatWindowMinutes to 0', async () => {
    const { token, identityId } = await qrOf('Dora');
    expect((await settings({ qrRepeatWindowMinutes: 0 })).status).toBe(200);
    try {
      for (let i = 0; i < 3; i++) expect((await scan(token)).body.alreadyCheckedIn).toBe(false);
      expect(await checkIns(identityId)).toBe(3);
    } finally {
      await settings({ qrRepeatWindowMinutes: 5 });
    }
  });

  it('expires a token after qrTokenTtlHours (default 30 days) with 410 qr_token_expired; reading it again rotates it', async () => {
    const { token, identityId, view } = await qrOf('Eli');
    expect(Date.parse(view.expiresAt) - Date.parse(view.createdAt)).toBe(720 * HOUR);
    app.clock.advance(720 * HOUR);
    const expired = await scan(token);
    expect(expired.status).toBe(410);
    expect(expired.body.code).toBe('qr_token_expired');
    expect(await checkIns(identityId)).toBe(0);
    const fresh = await app.request('GET', `/v1/checkin/identities/${identityId}/qr-token`, { headers: key });
    expect(fresh.status).toBe(201);
    expect(fresh.body.token).not.toBe(token);
    expect(Date.parse(fresh.body.expiresAt)).toBe(app.clock.now().getTime() + 720 * HOUR);
    expect((await scan(fresh.body.token)).status).toBe(200);
    expect((await scan(token)).status).toBe(410);
  });

  it('applies a shorter qrTokenTtlHours to tokens already issued', async () => {
    const { token } = await qrOf('Fabio');
    expect((await settings({ qrTokenTtlHours: 2 })).status).toBe(200);
    try {
      app.clock.advance(2 * HOUR);
      expect((await scan(token)).body.code).toBe('qr_token_expired');
    } finally {
      await settings({ qrTokenTtlHours: 720 });
    }
  });

  it('checks no one in for HEAD, prefetches, link previews and browsers', async () => {
    const { token, identityId } = await qrOf('Gil');
    const head = await app.request('HEAD', `/v1/public/checkin/qr/${token}`);
    expect(head.status).toBe(204);
    for (const headers of <Record<string, string>[]>[
      { purpose: 'prefetch' },
      { 'sec-purpose': 'prefetch;prerender' },
      { 'x-purpose': 'preview' },
      { 'x-moz': 'prefetch' },
    ]) {
      const res = await scan(token, '', headers);
      expect(res.status, JSON.stringify(headers)).toBe(204);
    }
    const browser = await scan(token, '', {
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    });
    expect(browser.status).toBe(200);
    expect(browser.headers.get('content-type')).toMatch(/^text\/html/);
    expect(browser.text).toContain('does not check you in');
    expect(await checkIns(identityId)).toBe(0);
    // A scanner is an API client: JSON, */* or no Accept at all.
    const scanner = await scan(token, '', { accept: 'application/json' });
    expect(scanner.body).toMatchObject({ outcome: 'success', alreadyCheckedIn: false });
    expect(await checkIns(identityId)).toBe(1);
  });

  it('gives anonymous callers no score fields, and API-key callers the scores (null for QR)', async () => {
    const { token } = await qrOf('Hana');
    const anonymous = await scan(token);
    expect(anonymous.status).toBe(200);
    for (const field of ['score', 'threshold', 'livenessScore']) {
      expect(JSON.parse(anonymous.text)).not.toHaveProperty(field);
    }
    const withKey = await scan(token, '', key);
    expect(withKey.body).toMatchObject({ score: null, threshold: null, livenessScore: null });
  });

  it('limits a code to 10 scans a minute whatever the address (429 rate_limited), not the other codes at that address', async () => {
    const { token } = await qrOf('Ivo');
    const { token: other } = await qrOf('Iara');
    const headers = { 'x-forwarded-for': '198.51.100.23' };
    for (let i = 0; i < 10; i++) expect((await scan(token, '', headers)).status).toBe(200);
    const limited = await scan(token, '', { 'x-forwarded-for': '198.51.100.24' });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect((await scan(other, '', headers)).status).toBe(200);
    app.clock.advance(MINUTE);
    expect((await scan(token, '', headers)).status).toBe(200);
  });
});
