// Contract 4.2 and 5 rule 3: applications and API keys (admin session only), integrator authentication.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOf, bearer, loggedInUser, startApp, type IdentityApp } from '../support/identity.js';

describe('applications and API keys', () => {
  let app: IdentityApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.close());

  async function createApp(headers: Record<string, string>, body: object = { name: 'Front desk' }) {
    const res = await app.request('POST', '/v1/applications', { headers, body });
    expect(res.status, res.text).toBe(201);
    return res.body as {
      application: { id: string };
      apiKey: { id: string; key: string; prefix: string; lastFour: string };
    };
  }
  /** An integrator call: the tenant read accepts API keys. */
  const integratorCall = (tenantId: string, key: string) =>
    app.request('GET', `/v1/tenants/${tenantId}`, { headers: bearer(key) });

  it('creating an application answers its first key in clear text once: pk_live_ + 43 base64url characters', async () => {
    const a = await adminOf(app);
    const created = await createApp(a.headers);
    expect(created.application).toMatchObject({ name: 'Front desk', environment: 'live' });
    expect(created.apiKey.key).toMatch(/^pk_live_[A-Za-z0-9_-]{43}$/);
    expect(created.apiKey).toMatchObject({
      status: 'active',
      environment: 'live',
      prefix: created.apiKey.key.slice(0, 12),
      lastFour: created.apiKey.key.slice(-4),
      lastUsedAt: null,
      applicationId: created.application.id,
    });
    const list = await app.request('GET', `/v1/applications/${created.application.id}/api-keys`, {
      headers: a.headers,
    });
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0]).not.toHaveProperty('key');
    expect(list.text).not.toContain(created.apiKey.key);
  });

  it('sandbox applications get pk_test_ keys', async () => {
    const a = await adminOf(app);
    const created = await createApp(a.headers, { name: 'Staging', environment: 'sandbox' });
    expect(created.apiKey.key).toMatch(/^pk_test_/);
    const me = await integratorCall(a.tenant.tenantId, created.apiKey.key);
    expect(me.status).toBe(200);
  });

  it('stores only the SHA-256 of a key', async () => {
    const a = await adminOf(app);
    const created = await createApp(a.headers);
    const row = await app.deps.db.prisma.apiKey.findUniqueOrThrow({ where: { id: created.apiKey.id } });
    expect(row.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(created.apiKey.key);
    expect(JSON.stringify(row)).not.toContain(created.apiKey.key.slice(12, -4));
  });

  it('lists the tenant’s applications with cursor pagination', async () => {
    const a = await adminOf(app);
    for (const name of ['one', 'two', 'three']) await createApp(a.headers, { name });
    const page1 = await app.request('GET', '/v1/applications?limit=2', { headers: a.headers });
    expect(page1.status).toBe(200);
    expect(page1.body.items.map((x: { name: string }) => x.name)).toEqual(['one', 'two']);
    const page2 = await app.request('GET', `/v1/applications?limit=2&cursor=${page1.body.nextCursor}`, {
      headers: a.headers,
    });
    expect(page2.body).toMatchObject({ items: [{ name: 'three' }], nextCursor: null });
  });

  it('an API key authenticates integrator routes; unknown and malformed keys are 401 invalid_api_key', async () => {
    const a = await adminOf(app);
    const { apiKey } = await createApp(a.headers);
    expect((await integratorCall(a.tenant.tenantId, apiKey.key)).status).toBe(200);
    const unknown = await integratorCall(a.tenant.tenantId, `pk_live_${'A'.repeat(43)}`);
    expect(unknown.status).toBe(401);
    expect(unknown.body.code).toBe('invalid_api_key');
    const malformed = await integratorCall(a.tenant.tenantId, 'hello');
    expect(malformed.body.code).toBe('invalid_api_key');
  });

  it('refuses an API key on every /v1/applications route with 403 forbidden', async () => {
    const a = await adminOf(app);
    const { application, apiKey } = await createApp(a.headers);
    const k = bearer(apiKey.key);
    const calls = [
      app.request('GET', '/v1/applications', { headers: k }),
      app.request('POST', '/v1/applications', { headers: k, body: { name: 'x' } }),
      app.request('DELETE', `/v1/applications/${application.id}`, { headers: k }),
      app.request('GET', `/v1/applications/${application.id}/api-keys`, { headers: k }),
      app.request('POST', `/v1/applications/${application.id}/api-keys`, { headers: k }),
      app.request('POST', `/v1/applications/${application.id}/api-keys/${apiKey.id}/rotate`, { headers: k }),
      app.request('DELETE', `/v1/applications/${application.id}/api-keys/${apiKey.id}`, { headers: k }),
    ];
    for (const res of await Promise.all(calls)) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'forbidden', detail: expect.stringContaining('API key') });
    }
  });

  it('refuses operators (not owner/admin) with 403 forbidden', async () => {
    const a = await adminOf(app);
    const op = await loggedInUser(app, a.tenant.tenantId, 'operator', `op@${a.tenant.slug}.example.com`);
    const res = await app.request('GET', '/v1/applications', { headers: op });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
  });

  it('rotation stops the old key at once and answers the new one once', async () => {
    const a = await adminOf(app);
    const { application, apiKey } = await createApp(a.headers);
    const rotated = await app.request(
      'POST',
      `/v1/applications/${application.id}/api-keys/${apiKey.id}/rotate`,
      {
        headers: a.headers,
      },
    );
    expect(rotated.status, rotated.text).toBe(201);
    expect(rotated.body).toMatchObject({ status: 'active', rotatedFromId: apiKey.id });
    expect(rotated.body.key).toMatch(/^pk_live_/);
    const old = await integratorCall(a.tenant.tenantId, apiKey.key);
    expect(old.status).toBe(401);
    expect(old.body.code).toBe('invalid_api_key');
    expect((await integratorCall(a.tenant.tenantId, rotated.body.key)).status).toBe(200);
    const list = await app.request('GET', `/v1/applications/${application.id}/api-keys`, {
      headers: a.headers,
    });
    expect(list.body.items.map((k: { status: string }) => k.status)).toEqual(['rotated', 'active']);
    const twice = await app.request(
      'POST',
      `/v1/applications/${application.id}/api-keys/${apiKey.id}/rotate`,
      {
        headers: a.headers,
      },
    );
    expect(twice.status).toBe(409);
  });

  it('issues extra keys and revokes one without touching the others', async () => {
    const a = await adminOf(app);
    const { application, apiKey } = await createApp(a.headers);
    const second = await app.request('POST', `/v1/applications/${application.id}/api-keys`, {
      headers: a.headers,
    });
    expect(second.status).toBe(201);
    const revoke = await app.request('DELETE', `/v1/applications/${application.id}/api-keys/${apiKey.id}`, {
      headers: a.headers,
    });
    expect(revoke.status).toBe(204);
    expect((await integratorCall(a.tenant.tenantId, apiKey.key)).body.code).toBe('invalid_api_key');
    expect((await integratorCall(a.tenant.tenantId, second.body.key)).status).toBe(200);
    const list = await app.request('GET', `/v1/applications/${application.id}/api-keys`, {
      headers: a.headers,
    });
    expect(list.body.items[0]).toMatchObject({ status: 'revoked', revokedAt: expect.any(String) });
    const again = await app.request('DELETE', `/v1/applications/${application.id}/api-keys/${apiKey.id}`, {
      headers: a.headers,
    });
    expect(again.status).toBe(204);
  });

  it('deleting an application revokes its keys and hides it', async () => {
    const a = await adminOf(app);
    const { application, apiKey } = await createApp(a.headers);
    const del = await app.request('DELETE', `/v1/applications/${application.id}`, { headers: a.headers });
    expect(del.status).toBe(204);
    expect((await integratorCall(a.tenant.tenantId, apiKey.key)).status).toBe(401);
    const list = await app.request('GET', '/v1/applications', { headers: a.headers });
    expect(list.body.items.find((x: { id: string }) => x.id === application.id)).toBeUndefined();
    const keys = await app.request('GET', `/v1/applications/${application.id}/api-keys`, {
      headers: a.headers,
    });
    expect(keys.status).toBe(404);
  });

  it('another tenant’s application and key ids are 404 not_found', async () => {
    const mine = await adminOf(app);
    const theirs = await adminOf(app);
    const { application, apiKey } = await createApp(theirs.headers);
    const h = mine.headers;
    const calls = [
      app.request('DELETE', `/v1/applications/${application.id}`, { headers: h }),
      app.request('GET', `/v1/applications/${application.id}/api-keys`, { headers: h }),
      app.request('POST', `/v1/applications/${application.id}/api-keys`, { headers: h }),
      app.request('POST', `/v1/applications/${application.id}/api-keys/${apiKey.id}/rotate`, { headers: h }),
      app.request('DELETE', `/v1/applications/${application.id}/api-keys/${apiKey.id}`, { headers: h }),
    ];
    for (const res of await Promise.all(calls)) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    // A key id of another application of my own tenant is 404 as well.
    const own = await createApp(h);
    const cross = await app.request(
      'DELETE',
      `/v1/applications/${own.application.id}/api-keys/${apiKey.id}`,
      { headers: h },
    );
    expect(cross.status).toBe(404);
    expect((await integratorCall(theirs.tenant.tenantId, apiKey.key)).status).toBe(200);
    const list = await app.request('GET', '/v1/applications', { headers: h });
    expect(list.body.items.map((x: { id: string }) => x.id)).toEqual([own.application.id]);
  });

  it('records the last use at most once a minute', async () => {
    const a = await adminOf(app);
    const { application, apiKey } = await createApp(a.headers);
    const t0 = app.clock.now().toISOString();
    await integratorCall(a.tenant.tenantId, apiKey.key);
    app.clock.advance(30_000);
    await integratorCall(a.tenant.tenantId, apiKey.key);
    const lastUsed = async () =>
      (await app.request('GET', `/v1/applications/${application.id}/api-keys`, { headers: a.headers })).body
        .items[0].lastUsedAt;
    expect(await lastUsed()).toBe(t0);
    app.clock.advance(30_000);
    await integratorCall(a.tenant.tenantId, apiKey.key);
    expect(await lastUsed()).toBe(app.clock.now().toISOString());
  });

  it('audits application and key creation, rotation, revocation and deletion without the keys', async () => {
    const a = await adminOf(app);
    const { application, apiKey } = await createApp(a.headers);
    const rotated = await app.request(
      'POST',
      `/v1/applications/${application.id}/api-keys/${apiKey.id}/rotate`,
      {
        headers: a.headers,
      },
    );
    await app.request('DELETE', `/v1/applications/${application.id}/api-keys/${rotated.body.id}`, {
      headers: a.headers,
    });
    await app.request('DELETE', `/v1/applications/${application.id}`, { headers: a.headers });
    const rows = await app.deps.db.prisma.auditLog.findMany({
      where: { tenantId: a.tenant.tenantId, NOT: { action: { startsWith: 'auth.' } } },
      orderBy: { id: 'asc' },
    });
    expect(rows.map((r) => r.action)).toEqual([
      'tenant.created',
      'application.created',
      'api_key.created',
      'api_key.rotated',
      'api_key.revoked',
      'application.deleted',
    ]);
    const text = JSON.stringify(rows);
    expect(text).not.toContain(apiKey.key);
    expect(text).not.toContain(rotated.body.key);
  });

  it('validates the body: name required, environment sandbox or live, nothing else', async () => {
    const a = await adminOf(app);
    for (const body of [{}, { name: '' }, { name: 'x', environment: 'prod' }, { name: 'x', extra: 1 }]) {
      const res = await app.request('POST', '/v1/applications', { headers: a.headers, body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });
});
