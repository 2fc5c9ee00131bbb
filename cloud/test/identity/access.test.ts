// Who may do what (issue 12): the operator role runs check-in and reads; the tenant of a session comes
// from its session record; enrollment links are limited; enabling MFA can end the user's other
// sessions; API keys may change the tenant and can be issued with narrower scopes.
import { API_SCOPES } from '@portico/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken, randomToken } from '../../src/infra/crypto.js';
import { newId } from '../../src/infra/db/index.js';
import { signAdminToken } from '../../src/modules/auth/tokens.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp.js';
import {
  adminOf,
  bearer,
  loggedInUser,
  login,
  startApp,
  totp,
  type IdentityApp,
} from '../support/identity.js';

const HOUR = 3_600_000;
let app: IdentityApp;
let smtp: SmtpSink;

beforeAll(async () => {
  smtp = await startSmtpSink();
  app = await startApp({ SMTP_URL: smtp.url });
});
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

async function person(headers: Record<string, string>, fields: Record<string, unknown> = {}) {
  const res = await app.request('POST', '/v1/persons', {
    headers,
    body: { name: 'Rita Lobo', document: `D-${Math.random()}`, ...fields },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

async function keyOf(headers: Record<string, string>, scopes?: string[]) {
  const res = await app.request('POST', '/v1/applications', {
    headers,
    body: { name: 'integration', ...(scopes ? { scopes } : {}) },
  });
  expect(res.status, res.text).toBe(201);
  return { headers: bearer(res.body.apiKey.key), application: res.body.application, apiKey: res.body.apiKey };
}

describe('the operator role', () => {
  it('reads persons and checks them in, but may not create, change, anonymise or delete them (403 forbidden)', async () => {
    const a = await adminOf(app);
    const op = await loggedInUser(app, a.tenant.tenantId, 'operator', `op@${a.tenant.slug}.example.com`);
    const id = await person(a.headers, { email: 'rita@example.com' });

    expect((await app.request('GET', '/v1/persons', { headers: op })).status).toBe(200);
    expect((await app.request('GET', `/v1/persons/${id}`, { headers: op })).status).toBe(200);
    const manual = await app.request('POST', '/v1/checkin/manual', { headers: op, body: { personId: id } });
    expect(manual.status, manual.text).toBe(200);

    const refused: [string, string, unknown][] = [
      ['POST', '/v1/persons', { name: 'X', document: 'X1' }],
      ['POST', '/v1/persons/upsert', { name: 'X', document: 'X2', externalId: 'x-2' }],
      ['POST', '/v1/persons/import', { rows: [{ name: 'X', document: 'X3' }] }],
      ['PATCH', `/v1/persons/${id}`, { name: 'Changed' }],
      ['DELETE', `/v1/persons/${id}/data`, undefined],
      ['DELETE', `/v1/persons/${id}`, undefined],
      ['POST', `/v1/persons/${id}/send-enrollment-link`, undefined],
      ['POST', '/v1/onboarding', { name: 'X', document: 'X4', frame: 'AAAA' }],
      ['PATCH', `/v1/tenants/${a.tenant.tenantId}`, { name: 'Renamed' }],
      ['PATCH', `/v1/tenants/${a.tenant.tenantId}/settings`, { geofenceRadiusMetros: 1 }],
    ];
    for (const [method, path, body] of refused) {
      const res = await app.request(method, path, { headers: op, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.code, `${method} ${path}`).toBe('forbidden');
    }
    const row = await app.deps.db.prisma.person.findUniqueOrThrow({ where: { id } });
    expect(row.name).toBe('Rita Lobo');
    expect(await app.deps.db.prisma.person.count({ where: { tenantId: a.tenant.tenantId } })).toBe(1);
    expect(smtp.messages.some((m) => m.includes('rita@example.com'))).toBe(false);
  });

  it('may read an identity’s QR token but not revoke it (403 forbidden); an admin or a checkin key may', async () => {
    const a = await adminOf(app);
    const op = await loggedInUser(app, a.tenant.tenantId, 'operator', `op-qr@${a.tenant.slug}.example.com`);
    const admin = await loggedInUser(
      app,
      a.tenant.tenantId,
      'admin',
      `admin-qr@${a.tenant.slug}.example.com`,
    );
    const key = await keyOf(a.headers, ['checkin']);
    const id = await person(a.headers);
    const { identityId } = (await app.request('GET', `/v1/persons/${id}`, { headers: a.headers })).body;
    const qr = `/v1/checkin/identities/${identityId}/qr-token`;

    expect((await app.request('GET', qr, { headers: op })).status).toBe(201);
    const refused = await app.request('DELETE', qr, { headers: op });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.code).toBe('forbidden');
    expect((await app.request('GET', qr, { headers: op })).status).toBe(200);

    expect((await app.request('DELETE', qr, { headers: admin })).status).toBe(204);
    expect((await app.request('GET', qr, { headers: a.headers })).status).toBe(201);
    expect((await app.request('DELETE', qr, { headers: key.headers })).status).toBe(204);
  });

  it('owners and admins still may change persons', async () => {
    const a = await adminOf(app);
    const admin = await loggedInUser(app, a.tenant.tenantId, 'admin', `admin@${a.tenant.slug}.example.com`);
    const id = await person(admin);
    const res = await app.request('PATCH', `/v1/persons/${id}`, {
      headers: a.headers,
      body: { name: 'New' },
    });
    expect(res.status).toBe(200);
  });
});

describe('the tenant of a session', () => {
  it('comes from the session record: a token whose tid claim names another tenant is 401 invalid_token', async () => {
    const a = await adminOf(app);
    const b = await adminOf(app);
    const claims = JSON.parse(Buffer.from(a.token.split('.')[1]!, 'base64url').toString());
    const forged = await signAdminToken(
      app.deps.secrets.jwtKey,
      { sub: claims.sub, tid: b.tenant.tenantId, role: 'owner', sid: claims.sid },
      app.clock.now(),
    );
    for (const path of [`/v1/tenants/${b.tenant.tenantId}`, '/v1/persons']) {
      const res = await app.request('GET', path, { headers: bearer(forged) });
      expect(res.status, path).toBe(401);
      expect(res.body.code).toBe('invalid_token');
    }
    expect(
      (await app.request('GET', `/v1/tenants/${a.tenant.tenantId}`, { headers: a.headers })).status,
    ).toBe(200);
  });
});

describe('POST /v1/persons/:id/send-enrollment-link limits', () => {
  it('sends at most 3 links per person an hour (429 rate_limited with Retry-After), other persons unaffected', async () => {
    const a = await adminOf(app);
    const { headers } = await keyOf(a.headers); // outlives the hour the test waits, unlike a session token
    const id = await person(headers, { email: 'limit@example.com' });
    const send = (personId: string) =>
      app.request('POST', `/v1/persons/${personId}/send-enrollment-link`, { headers });
    for (let i = 0; i < 3; i++) expect((await send(id)).status).toBe(200);
    const before = smtp.messages.length;
    const limited = await send(id);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(smtp.messages.length).toBe(before);
    expect((await send(await person(headers, { email: 'other@example.com' }))).status).toBe(200);
    app.clock.advance(HOUR);
    expect((await send(id)).status).toBe(200);
  });

  it('sends at most 500 links per tenant an hour', async () => {
    const a = await adminOf(app);
    const other = await adminOf(app);
    const send = (headers: Record<string, string>, personId: string) =>
      app.request('POST', `/v1/persons/${personId}/send-enrollment-link`, { headers });
    // Unknown persons count too (the limit is counted first): 500 quick 404s use up the tenant's hour.
    for (let batch = 0; batch < 50; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => send(a.headers, `00000000-0000-7000-8000-${batch}-${i}`)),
      );
      expect(answers.map((r) => r.status)).toEqual(Array(10).fill(404));
    }
    const limited = await send(a.headers, await person(a.headers, { email: 'late@example.com' }));
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    const elsewhere = await send(other.headers, await person(other.headers, { email: 'x@example.com' }));
    expect(elsewhere.status).toBe(200);
  }, 120_000);
});

describe('enabling MFA', () => {
  async function twoSessions() {
    const a = await adminOf(app);
    const second = await login(app, a.tenant.adminEmail);
    const { body } = await app.request('POST', '/v1/auth/mfa/setup', { headers: a.headers });
    return { a, second, secret: body.secret as string };
  }

  it('with endOtherSessions ends the user’s other sessions at once and keeps the calling one', async () => {
    const { a, second, secret } = await twoSessions();
    const res = await app.request('POST', '/v1/auth/mfa/enable', {
      headers: a.headers,
      body: { code: await totp(secret, app.clock.now()), endOtherSessions: true },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ mfaEnabled: true, endedSessions: 1 });
    const stale = await app.request('GET', '/v1/auth/me', { headers: bearer(second.token) });
    expect(stale.status).toBe(401);
    expect(stale.body.code).toBe('invalid_token');
    const refresh = await app.request('POST', '/v1/auth/refresh', {
      headers: { cookie: `portico_refresh=${second.refresh}` },
    });
    expect(refresh.status).toBe(401);
    expect((await app.request('GET', '/v1/auth/me', { headers: a.headers })).status).toBe(200);
    const audit = await app.deps.db.prisma.auditLog.findFirstOrThrow({
      where: { action: 'auth.mfa.enabled', tenantId: a.tenant.tenantId },
    });
    expect(audit.metadata).toEqual({ endedSessions: '1' });
  });

  it('without it leaves the other sessions alone (endedSessions 0)', async () => {
    const { a, second, secret } = await twoSessions();
    const res = await app.request('POST', '/v1/auth/mfa/enable', {
      headers: a.headers,
      body: { code: await totp(secret, app.clock.now()) },
    });
    expect(res.body).toMatchObject({ mfaEnabled: true, endedSessions: 0 });
    expect((await app.request('GET', '/v1/auth/me', { headers: bearer(second.token) })).status).toBe(200);
  });
});

describe('API keys and the tenant', () => {
  it('a key with every scope may change the tenant and its settings (recorded as the key)', async () => {
    const a = await adminOf(app);
    const { headers, apiKey } = await keyOf(a.headers);
    const renamed = await app.request('PATCH', `/v1/tenants/${a.tenant.tenantId}`, {
      headers,
      body: { name: 'Renamed by key' },
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.name).toBe('Renamed by key');
    const settings = await app.request('PATCH', `/v1/tenants/${a.tenant.tenantId}/settings`, {
      headers,
      body: { geofenceRadiusMetros: 75 },
    });
    expect(settings.status, settings.text).toBe(200);
    expect(settings.body.geofenceRadiusMetros).toBe(75);
    const audit = await app.deps.db.prisma.auditLog.findFirstOrThrow({
      where: { tenantId: a.tenant.tenantId, action: 'tenant.settings.updated' },
    });
    expect(audit).toMatchObject({ actorType: 'apiKey', actorId: apiKey.id });
  });
});

describe('API key scopes', () => {
  it('a key issued without scopes (new or from before scopes) holds every scope', async () => {
    const a = await adminOf(app);
    const { application, apiKey } = await keyOf(a.headers);
    expect(apiKey.scopes).toEqual([...API_SCOPES]);
    const more = await app.request('POST', `/v1/applications/${application.id}/api-keys`, {
      headers: a.headers,
    });
    expect(more.status, more.text).toBe(201);
    expect(more.body.scopes).toEqual([...API_SCOPES]);
    // A key row written without scopes, as every key made before they existed (the column's default).
    const key = randomToken('pk_live_');
    await app.deps.db.prisma.$executeRaw`
      INSERT INTO api_keys (id, tenant_id, application_id, prefix, last_four, key_hash)
      VALUES (${newId()}, ${a.tenant.tenantId}, ${application.id}, ${key.slice(0, 12)}, ${key.slice(-4)},
              ${hashToken(key)})`;
    const res = await app.request('PATCH', `/v1/tenants/${a.tenant.tenantId}/settings`, {
      headers: bearer(key),
      body: { geofenceRadiusMetros: 10 },
    });
    expect(res.status, res.text).toBe(200);
  });

  it('a key with some scopes may do only those; anything else is 403 insufficient_scope', async () => {
    const a = await adminOf(app);
    const id = await person(a.headers);
    const { headers, apiKey } = await keyOf(a.headers, ['persons:read']);
    expect(apiKey.scopes).toEqual(['persons:read']);
    expect((await app.request('GET', '/v1/persons', { headers })).status).toBe(200);
    expect((await app.request('GET', `/v1/persons/${id}`, { headers })).status).toBe(200);
    const refused: [string, string, unknown][] = [
      ['POST', '/v1/persons', { name: 'X', document: 'X1' }],
      ['DELETE', `/v1/persons/${id}`, undefined],
      ['GET', `/v1/tenants/${a.tenant.tenantId}/settings`, undefined],
      ['PATCH', `/v1/tenants/${a.tenant.tenantId}/settings`, { geofenceRadiusMetros: 1 }],
      ['POST', `/v1/public/checkin/${a.tenant.slug}/identify`, { frame: 'AAAA' }],
    ];
    for (const [method, path, body] of refused) {
      const res = await app.request(method, path, { headers, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.code, `${method} ${path}`).toBe('insufficient_scope');
    }
    expect(await app.deps.db.prisma.person.count({ where: { tenantId: a.tenant.tenantId } })).toBe(1);
  });

  it('issues narrower keys on an application, lists their scopes, and a rotation keeps them', async () => {
    const a = await adminOf(app);
    const { application } = await keyOf(a.headers);
    const created = await app.request('POST', `/v1/applications/${application.id}/api-keys`, {
      headers: a.headers,
      body: { scopes: ['checkin', 'tenant:write'] },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.scopes).toEqual(['checkin', 'tenant:write']);
    const patched = await app.request('PATCH', `/v1/tenants/${a.tenant.tenantId}/settings`, {
      headers: bearer(created.body.key),
      body: { qrRepeatWindowMinutes: 10 },
    });
    expect(patched.status, patched.text).toBe(200);
    const rotated = await app.request(
      'POST',
      `/v1/applications/${application.id}/api-keys/${created.body.id}/rotate`,
      { headers: a.headers },
    );
    expect(rotated.status).toBe(201);
    expect(rotated.body.scopes).toEqual(['checkin', 'tenant:write']);
    const list = await app.request('GET', `/v1/applications/${application.id}/api-keys`, {
      headers: a.headers,
    });
    expect(list.body.items.map((k: { scopes: string[] }) => k.scopes)).toEqual([
      [...API_SCOPES],
      ['checkin', 'tenant:write'],
      ['checkin', 'tenant:write'],
    ]);
  });

  it('refuses unknown, repeated and empty scopes with 400 validation_failed', async () => {
    const a = await adminOf(app);
    const { application } = await keyOf(a.headers);
    for (const scopes of [['persons:admin'], ['checkin', 'checkin'], []]) {
      const res = await app.request('POST', `/v1/applications/${application.id}/api-keys`, {
        headers: a.headers,
        body: { scopes },
      });
      expect(res.status, JSON.stringify(scopes)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });

  it('documents scopes in OpenAPI: per-route security scopes and an optional key request body', async () => {
    const doc = (await app.request('GET', '/docs-json')).body;
    expect(doc.paths['/v1/persons'].post.security).toContainEqual({ apiKey: ['persons:write'] });
    expect(doc.paths['/v1/persons'].get.security).toContainEqual({ apiKey: ['persons:read'] });
    expect(doc.paths['/v1/tenants/{id}/settings'].patch.security).toContainEqual({
      apiKey: ['tenant:write'],
    });
    expect(doc.paths['/v1/applications/{id}/api-keys'].post.requestBody.required).toBe(false);
    expect(doc.paths['/v1/persons'].post.responses['403'].description).toContain('insufficient_scope');
  });
});
