// Every identity route, body and answer is documented in /docs-json.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type IdentityApp } from '../support/identity.js';

const ROUTES: [string, string, string][] = [
  ['post', '/v1/auth/login', 'authLogin'],
  ['post', '/v1/auth/refresh', 'authRefresh'],
  ['post', '/v1/auth/logout', 'authLogout'],
  ['get', '/v1/auth/me', 'authMe'],
  ['get', '/v1/auth/products', 'authProducts'],
  ['post', '/v1/auth/mfa/setup', 'authMfaSetup'],
  ['post', '/v1/auth/mfa/enable', 'authMfaEnable'],
  ['post', '/v1/auth/mfa/verify', 'authMfaVerify'],
  ['delete', '/v1/auth/mfa/disable', 'authMfaDisable'],
  ['get', '/v1/applications', 'listApplications'],
  ['post', '/v1/applications', 'createApplication'],
  ['delete', '/v1/applications/{id}', 'deleteApplication'],
  ['get', '/v1/applications/{id}/api-keys', 'listApiKeys'],
  ['post', '/v1/applications/{id}/api-keys', 'createApiKey'],
  ['post', '/v1/applications/{id}/api-keys/{keyId}/rotate', 'rotateApiKey'],
  ['delete', '/v1/applications/{id}/api-keys/{keyId}', 'revokeApiKey'],
  ['get', '/v1/tenants/{id}', 'getTenant'],
  ['patch', '/v1/tenants/{id}', 'updateTenant'],
  ['get', '/v1/tenants/{id}/settings', 'getTenantSettings'],
  ['patch', '/v1/tenants/{id}/settings', 'updateTenantSettings'],
];

describe('/docs-json', () => {
  let app: IdentityApp;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking a JSON document
  let doc: any;
  beforeAll(async () => {
    app = await startApp();
    doc = (await app.request('GET', '/docs-json')).body;
  });
  afterAll(() => app?.close());

  it.each(ROUTES)('documents %s %s with a success schema and its errors', (method, path, operationId) => {
    const op = doc.paths[path]?.[method];
    expect(op, `${method} ${path}`).toBeDefined();
    expect(op.operationId).toBe(operationId);
    expect(op.description?.length).toBeGreaterThan(20);
    const success = Object.keys(op.responses).filter((s) => s.startsWith('2'));
    expect(success.length).toBe(1);
    const ok = op.responses[success[0]!];
    if (success[0] !== '204') expect(ok.content['application/json'].schema).toBeDefined();
    expect(op.responses['500']).toBeDefined();
  });

  it('documents the request bodies', () => {
    for (const [method, path] of [
      ['post', '/v1/auth/login'],
      ['post', '/v1/auth/mfa/enable'],
      ['post', '/v1/auth/mfa/verify'],
      ['delete', '/v1/auth/mfa/disable'],
      ['post', '/v1/applications'],
      ['patch', '/v1/tenants/{id}'],
      ['patch', '/v1/tenants/{id}/settings'],
    ] as const) {
      expect(
        doc.paths[path][method].requestBody?.content['application/json'].schema,
        `${method} ${path}`,
      ).toBeDefined();
    }
  });

  it('names token lifetimes, the cookie and the MFA step, the key format and the settings defaults', () => {
    const text = JSON.stringify(doc);
    for (const fact of [
      '15 minutes',
      '30 days',
      'portico_refresh',
      'SameSite=Strict',
      'mfaTicket',
      'pk_live_',
      'pk_test_',
      'geofenceRadiusMetros` 200',
    ]) {
      expect(text).toContain(fact);
    }
    for (const schema of [
      'LoginRequest',
      'TokenResponse',
      'MfaChallenge',
      'MfaSetupResponse',
      'ApiKeyWithSecret',
      'TenantSettings',
      'TenantSettingsPatch',
      'AgePolicy',
      'ProductList',
    ]) {
      expect(doc.components.schemas[schema], schema).toBeDefined();
    }
  });

  it('marks the applications routes as admin-session only', () => {
    expect(doc.paths['/v1/applications'].get.security).toEqual([{ adminSession: [] }]);
    expect(doc.paths['/v1/tenants/{id}/settings'].get.security).toEqual([
      { adminSession: [] },
      { apiKey: ['tenant:read'] },
    ]);
    expect(doc.paths['/v1/auth/login'].post.security).toEqual([]);
  });

  it('does not serve POST /v1/auth/api-keys', async () => {
    expect(doc.paths['/v1/auth/api-keys']).toBeUndefined();
    const res = await app.request('POST', '/v1/auth/api-keys', { body: {} });
    expect(res.status).toBe(404);
  });
});
