// The person portal (contract 4.9) over real HTTP and a real SMTP exchange: magic-link sign-in, caller
// kinds kept apart, and each `/v1/me` route across two tenants holding the same person.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import {
  adminHeaders,
  enrollDirectly,
  fakeJpeg,
  requestLink,
  sha256,
  signIn,
  startPortalApp,
  tenantWithPerson,
  waitForMail,
  type PortalApp,
} from './support.js';

const MINUTE = 60_000;
let app: PortalApp;
let receiver: WebhookReceiver;
let a: Awaited<ReturnType<typeof tenantWithPerson>>;
let b: Awaited<ReturnType<typeof tenantWithPerson>>;
const EMAIL = 'ana.portal@example.com';
const photo = fakeJpeg();

beforeAll(async () => {
  app = await startPortalApp();
  receiver = await startWebhookReceiver();
  a = await tenantWithPerson(app, { name: 'Ana Souza', document: 'A-1', email: EMAIL }, receiver.url);
  // The other tenant wrote the address in capitals: the same person for the portal.
  b = await tenantWithPerson(app, { name: 'Ana S.', document: 'B-1', email: 'Ana.Portal@Example.com' });
});
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

describe('magic-link sign-in', () => {
  it('mails a single-use link over SMTP; verifying it returns a person_portal JWT and records a session', async () => {
    const { body, token } = await signIn(app, EMAIL, { 'user-agent': 'PortalTest/1' });
    expect(body).toMatchObject({ tokenType: 'Bearer', expiresIn: 3600, sessionId: expect.any(String) });
    const claims = JSON.parse(Buffer.from(body.accessToken.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ type: 'person_portal', aud: 'person_portal' });
    const session = await app.deps.db.prisma.portalSession.findUniqueOrThrow({
      where: { id: body.sessionId },
    });
    expect(session.userAgent).toBe('PortalTest/1');
    // The link is spent: a second use is refused.
    const again = await app.request('GET', `/v1/portal/auth/magic-link/verify?token=${token}`);
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('invalid_token');
    const row = await app.deps.db.prisma.magicLink.findFirstOrThrow({ where: { email: EMAIL } });
    expect(row.tokenHash).not.toContain(token);
  });

  it('answers an unknown address exactly as a known one, and mails nothing to it', async () => {
    const known = await requestLink(app, EMAIL);
    const unknown = await requestLink(app, 'nobody.here@example.com');
    expect(unknown.status).toBe(202);
    expect(unknown.body).toEqual(known.body);
    await waitForMail(app.smtp, EMAIL, /portal\/login/);
    expect(app.smtp.messages.some((m) => m.includes('nobody.here@example.com'))).toBe(false);
  });

  it('does the same work for a known and an unknown address: one sealed job queued, the lookup left to the worker', async () => {
    const jobs = () => app.deps.db.prisma.job.count({ where: { kind: 'portal.magic_link' } });
    const before = await jobs();
    expect((await requestLink(app, EMAIL)).status).toBe(202);
    expect(await jobs()).toBe(before + 1);
    expect((await requestLink(app, 'nobody.else@example.com')).status).toBe(202);
    expect(await jobs()).toBe(before + 2);
    const rows = await app.deps.db.prisma.job.findMany({ where: { kind: 'portal.magic_link' } });
    expect(JSON.stringify(rows.map((r) => r.payload))).not.toMatch(/example\.com/i);
    await waitForMail(app.smtp, EMAIL, /portal\/login/);
    expect(app.smtp.messages.some((m) => m.includes('nobody.else@example.com'))).toBe(false);
  });

  it('refuses an expired link (15 minutes) and a forged one with 401 invalid_token', async () => {
    await requestLink(app, EMAIL);
    const mail = await waitForMail(app.smtp, EMAIL, /portal\/login/);
    const token = /token=(ml_[A-Za-z0-9_-]+)/.exec(mail)![1]!;
    app.clock.advance(16 * MINUTE);
    const expired = await app.request('GET', `/v1/portal/auth/magic-link/verify?token=${token}`);
    expect(expired.status).toBe(401);
    const forged = await app.request('GET', '/v1/portal/auth/magic-link/verify?token=ml_forged');
    expect(forged.status).toBe(401);
    expect(forged.body.code).toBe('invalid_token');
  });

  it('spends nothing on a link preview (204)', async () => {
    await requestLink(app, EMAIL);
    const mail = await waitForMail(app.smtp, EMAIL, /portal\/login/);
    const token = /token=(ml_[A-Za-z0-9_-]+)/.exec(mail)![1]!;
    const preview = await app.request('GET', `/v1/portal/auth/magic-link/verify?token=${token}`, {
      headers: { 'sec-purpose': 'prefetch' },
    });
    expect(preview.status).toBe(204);
    expect((await app.request('GET', `/v1/portal/auth/magic-link/verify?token=${token}`)).status).toBe(200);
  });

  it('limits links to 5 per address an hour (429 rate_limited)', async () => {
    const email = 'limited@example.com';
    for (let i = 0; i < 5; i++) expect((await requestLink(app, email)).status).toBe(202);
    const limited = await requestLink(app, email);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
  });
});

describe('caller kinds', () => {
  it('a portal JWT is refused on admin and integrator routes (403 forbidden)', async () => {
    const { headers } = await signIn(app, EMAIL);
    for (const path of ['/v1/persons', `/v1/tenants/${a.tenantId}`, '/v1/applications']) {
      const res = await app.request('GET', path, { headers });
      expect(res.status, path).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
  });

  it('an API key or an admin session is refused on /v1/me like no credentials (401)', async () => {
    for (const headers of [a.keyHeaders, await adminHeaders(app, a)]) {
      for (const path of ['/v1/me', '/v1/me/biometrics', '/v1/me/checkins', '/v1/me/deletion-request']) {
        const res = await app.request('GET', path, { headers });
        expect(res.status, path).toBe(401);
        expect(res.body.code).toBe('unauthorized');
      }
    }
    expect((await app.request('GET', '/v1/me')).status).toBe(401);
  });
});

describe('/v1/me', () => {
  it('shows the profile and every tenant holding a person with the verified address', async () => {
    const { headers } = await signIn(app, EMAIL);
    const me = await app.request('GET', '/v1/me', { headers });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ email: EMAIL, name: null, phone: null, hasPhoto: false });
    expect(me.body.tenants.map((t: { personId: string }) => t.personId).sort()).toEqual(
      [a.personId, b.personId].sort(),
    );
  });

  it('PATCH changes name, phone and the profile photo (stored encrypted, returned as sent)', async () => {
    const { headers } = await signIn(app, EMAIL);
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), fakeJpeg(64)]);
    const res = await app.request('PATCH', '/v1/me', {
      headers,
      body: { name: 'Ana Souza', phone: '+55 11 90000-0000', photo: png.toString('base64') },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ name: 'Ana Souza', phone: '+55 11 90000-0000', hasPhoto: true });
    const got = await fetch(`${app.url}/v1/me/photo`, { headers });
    expect(got.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await got.arrayBuffer()).equals(png)).toBe(true);
    const bad = await app.request('PATCH', '/v1/me', { headers, body: { photo: 'aGVsbG8=' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('body.photo');
    // The tenants' own records are not the portal's to change.
    const person = await app.deps.db.prisma.person.findUniqueOrThrow({ where: { id: b.personId } });
    expect(person.name).toBe('Ana S.');
  });

  it('lists sessions and ends one: its token is refused at once', async () => {
    const first = await signIn(app, EMAIL);
    const second = await signIn(app, EMAIL);
    const list = await app.request('GET', '/v1/me/sessions', { headers: second.headers });
    expect(list.status).toBe(200);
    const current = list.body.items.find((s: { current: boolean }) => s.current);
    expect(current.id).toBe(second.body.sessionId);
    const ended = await app.request('DELETE', `/v1/me/sessions/${first.body.sessionId}`, {
      headers: second.headers,
    });
    expect(ended.status).toBe(204);
    const refused = await app.request('GET', '/v1/me', { headers: first.headers });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('invalid_token');
    expect((await app.request('GET', '/v1/me', { headers: second.headers })).status).toBe(200);
    const other = await app.request('DELETE', '/v1/me/sessions/00000000-0000-0000-0000-000000000000', {
      headers: second.headers,
    });
    expect(other.status).toBe(404);
  });

  it('shows when each session was last used, updated by its calls at most once a minute', async () => {
    const { headers, body } = await signIn(app, EMAIL);
    const lastSeen = async () => {
      const list = await app.request('GET', '/v1/me/sessions', { headers });
      return list.body.items.find((s: { id: string }) => s.id === body.sessionId).lastSeenAt;
    };
    const signedIn = await lastSeen();
    expect(signedIn).toBe(app.clock.now().toISOString());
    app.clock.advance(30_000);
    expect(await lastSeen()).toBe(signedIn);
    app.clock.advance(5 * MINUTE);
    expect(await lastSeen()).toBe(app.clock.now().toISOString());
  });

  it('shows biometrics per tenant, lists and streams the images decrypted, and audits every read', async () => {
    const { imageId } = await enrollDirectly(app, a.tenantId, a.personId, photo);
    const { headers, body } = await signIn(app, EMAIL);
    const bio = await app.request('GET', '/v1/me/biometrics', { headers });
    expect(bio.status).toBe(200);
    const atA = bio.body.items.find((i: { tenantId: string }) => i.tenantId === a.tenantId);
    const atB = bio.body.items.find((i: { tenantId: string }) => i.tenantId === b.tenantId);
    expect(atA).toMatchObject({ enrolled: true, quality: 0.87, modelId: 'test-model@1', images: 1 });
    expect(atB).toMatchObject({ enrolled: false, quality: null, images: 0 });

    const images = await app.request('GET', '/v1/me/biometric-images', { headers });
    expect(images.body.items).toEqual([
      expect.objectContaining({
        id: imageId,
        tenantId: a.tenantId,
        kind: 'enrollment',
        sha256: sha256(photo),
      }),
    ]);
    const file = await fetch(`${app.url}/v1/me/biometric-images/${imageId}/file`, { headers });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/jpeg');
    expect(file.headers.get('cache-control')).toBe('no-store');
    expect(Buffer.from(await file.arrayBuffer()).equals(photo)).toBe(true);

    const audit = await app.deps.db.prisma.auditLog.findMany({
      where: { actorType: 'portal', actorId: claimsOf(body.accessToken).sub },
    });
    const actions = audit.map((r) => r.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        'portal.biometrics_read',
        'portal.biometric_images_listed',
        'portal.biometric_image_read',
      ]),
    );
    expect(audit.find((r) => r.action === 'portal.biometric_image_read')).toMatchObject({
      tenantId: a.tenantId,
      targetId: imageId,
    });
  });

  it('does not serve another person’s image (404)', async () => {
    const stranger = await tenantWithPerson(app, {
      name: 'Other',
      document: 'O-1',
      email: 'other@example.com',
    });
    const { imageId } = await enrollDirectly(app, stranger.tenantId, stranger.personId, fakeJpeg());
    const { headers } = await signIn(app, EMAIL);
    const res = await app.request('GET', `/v1/me/biometric-images/${imageId}/file`, { headers });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });

  it('DELETE /v1/me/biometrics/:tenantId erases that tenant’s templates and images and notifies it by webhook', async () => {
    const { storageKey } = await enrollDirectly(app, b.tenantId, b.personId, fakeJpeg());
    // A refreshed template's kept check-in embedding (tenant setting refreshTemplates) goes with it.
    await app.deps.db.prisma.faceTemplateRefresh.create({
      data: {
        id: newId(),
        tenantId: b.tenantId,
        personId: b.personId,
        modelId: 'test-model',
        kind: 'checkin',
        embeddingEnc: Buffer.alloc(16),
      },
    });
    const { headers } = await signIn(app, EMAIL);
    const res = await app.request('DELETE', `/v1/me/biometrics/${b.tenantId}`, { headers });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ tenantId: b.tenantId, templatesErased: 1, imagesErased: 1 });
    const { prisma } = app.deps.db;
    expect(await prisma.faceTemplate.count({ where: { personId: b.personId } })).toBe(0);
    expect(await prisma.faceTemplateRefresh.count({ where: { personId: b.personId } })).toBe(0);
    expect(await prisma.biometricImage.count({ where: { personId: b.personId } })).toBe(0);
    expect(existsSync(app.deps.images.pathOf(storageKey))).toBe(false);
    const person = await prisma.person.findUniqueOrThrow({ where: { id: b.personId } });
    expect(person).toMatchObject({ enrolledAt: null, name: 'Ana S.' });
    const event = await prisma.outboxEvent.findFirstOrThrow({
      where: { tenantId: b.tenantId, name: 'person.biometrics_revoked' },
    });
    expect(event.payload).toMatchObject({ data: { personId: b.personId, templatesErased: 1 } });
    // Tenant A's templates are untouched.
    expect(await prisma.faceTemplate.count({ where: { personId: a.personId } })).toBe(1);

    const unknownTenant = await app.request('DELETE', '/v1/me/biometrics/not-a-tenant', { headers });
    expect(unknownTenant.status).toBe(404);
  });

  it('the tenant’s webhook receives person.biometrics_revoked', async () => {
    const { headers } = await signIn(app, EMAIL);
    expect((await app.request('DELETE', `/v1/me/biometrics/${a.tenantId}`, { headers })).status).toBe(200);
    const body = await receiver.waitForBody((b) => b.event === 'person.biometrics_revoked');
    expect(body).toMatchObject({ tenantId: a.tenantId, data: { personId: a.personId } });
  });

  it('pages check-ins across tenants, newest first', async () => {
    const admins = new Map([
      [a, await adminHeaders(app, a)],
      [b, await adminHeaders(app, b)],
    ]);
    for (const t of [a, b, a, b, a]) {
      const res = await app.request('POST', '/v1/checkin/manual', {
        headers: admins.get(t)!,
        body: { personId: t.personId },
      });
      expect(res.status, res.text).toBe(200);
      app.clock.advance(1000);
    }
    const { headers } = await signIn(app, EMAIL);
    const seen: { id: string; tenantId: string; occurredAt: string }[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof app.request>> = await app.request(
        'GET',
        `/v1/me/checkins?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        { headers },
      );
      expect(page.status, page.text).toBe(200);
      seen.push(...page.body.items);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(5);
    expect(new Set(seen.map((c) => c.tenantId))).toEqual(new Set([a.tenantId, b.tenantId]));
    const times = seen.map((c) => c.occurredAt);
    expect([...times].sort().reverse()).toEqual(times);
    const bad = await app.request('GET', '/v1/me/checkins?cursor=garbage', { headers });
    expect(bad.status).toBe(400);
  });

  it('notification preferences: read, update, and the portal mails in the chosen language', async () => {
    const { headers } = await signIn(app, EMAIL);
    const read = await app.request('GET', '/v1/me/notification-preferences', { headers });
    expect(read.body).toEqual({ language: 'en', signInAlerts: false });
    const patched = await app.request('PATCH', '/v1/me/notification-preferences', {
      headers,
      body: { language: 'pt-BR', signInAlerts: true },
    });
    expect(patched.body).toEqual({ language: 'pt-BR', signInAlerts: true });
    const unknown = await app.request('PATCH', '/v1/me/notification-preferences', {
      headers,
      body: { marketing: true },
    });
    expect(unknown.status).toBe(400);
    await requestLink(app, EMAIL);
    const mail = await waitForMail(app.smtp, EMAIL, /Seu link de acesso/);
    const token = /token=(ml_[A-Za-z0-9_-]+)/.exec(mail)![1]!;
    expect((await app.request('GET', `/v1/portal/auth/magic-link/verify?token=${token}`)).status).toBe(200);
    await waitForMail(app.smtp, EMAIL, /Novo acesso ao seu portal/);
    await app.request('PATCH', '/v1/me/notification-preferences', {
      headers,
      body: { language: 'en', signInAlerts: false },
    });
  });
});

function claimsOf(jwt: string): { sub: string } {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());
}

describe('OpenAPI', () => {
  it('documents the portal and data-protection routes, with the portal JWT as their only credential', async () => {
    const doc = (await app.request('GET', '/docs-json')).body;
    const routes: [string, string, 'portal' | 'public' | 'public+portal'][] = [
      ['post', '/v1/portal/auth/magic-link', 'public'],
      ['get', '/v1/portal/auth/magic-link/verify', 'public'],
      ['get', '/v1/me', 'portal'],
      ['patch', '/v1/me', 'portal'],
      ['get', '/v1/me/sessions', 'portal'],
      ['get', '/v1/me/biometrics', 'portal'],
      ['delete', '/v1/me/biometrics/{tenantId}', 'portal'],
      ['get', '/v1/me/checkins', 'portal'],
      ['get', '/v1/me/notification-preferences', 'portal'],
      ['patch', '/v1/me/notification-preferences', 'portal'],
      ['get', '/v1/me/biometric-images', 'portal'],
      ['get', '/v1/me/biometric-images/{id}/file', 'portal'],
      ['post', '/v1/me/deletion-request', 'portal'],
      ['get', '/v1/me/deletion-request', 'portal'],
      ['delete', '/v1/me/deletion-request', 'portal'],
      ['post', '/v1/portal/auth/deletion-confirm', 'public+portal'],
      ['post', '/v1/me/data-export', 'portal'],
    ];
    for (const [method, path, who] of routes) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.summary, `${method} ${path}`).toBeTruthy();
      if (who === 'portal') expect(op.security, `${method} ${path}`).toEqual([{ portalJwt: [] }]);
      else expect(op.security, `${method} ${path}`).toEqual([]);
      expect(Object.keys(op.responses).some((s) => s.startsWith('2'))).toBe(true);
    }
  });
});

describe('token guessing', () => {
  it('limits the e-mailed tokens a client may try to 30 in 10 minutes (429 rate_limited)', async () => {
    await app.deps.db.prisma.rateLimitBucket.deleteMany({ where: { key: { startsWith: 'portal-link:' } } });
    for (let i = 0; i < 15; i++) {
      expect((await app.request('GET', `/v1/portal/auth/magic-link/verify?token=ml_guess${i}`)).status).toBe(
        401,
      );
      const confirm = await app.request('POST', '/v1/portal/auth/deletion-confirm', {
        body: { token: `dc_guess${i}` },
      });
      expect(confirm.status).toBe(401);
    }
    const limited = await app.request('GET', '/v1/portal/auth/magic-link/verify?token=ml_guess');
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    const alsoLimited = await app.request('POST', '/v1/portal/auth/deletion-confirm', {
      body: { token: 'dc_x' },
    });
    expect(alsoLimited.status).toBe(429);
    app.clock.advance(10 * MINUTE);
    expect((await app.request('GET', '/v1/portal/auth/magic-link/verify?token=ml_guess')).status).toBe(401);
  });
});
