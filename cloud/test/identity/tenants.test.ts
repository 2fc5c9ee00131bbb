// Contract 4.3: the caller's own tenant and its settings; other tenants' ids are 404.
import { FACE_LINE_DEFAULTS } from '@portico/checkin-policy';
import { TENANT_SETTINGS_DEFAULTS } from '@portico/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import { getTenantSettings } from '../../src/modules/tenants/service.js';
import { tenantSettingsOf } from '../../src/modules/tenants/settings.js';
import { checkWebhookUrl } from '../../src/modules/tenants/webhook-url.js';
import { isPrivateAddress } from '../../src/modules/webhooks/address-policy.js';
import { adminOf, bearer, loggedInUser, startApp, type IdentityApp } from '../support/identity.js';

describe('tenant and settings', () => {
  let app: IdentityApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.close());

  it('GET /v1/tenants/:id answers the caller’s tenant', async () => {
    const a = await adminOf(app);
    const res = await app.request('GET', `/v1/tenants/${a.tenant.tenantId}`, { headers: a.headers });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: a.tenant.tenantId, slug: a.tenant.slug, status: 'active' });
  });

  it('another tenant’s id (and an unknown id) is 404 on every tenant route, for sessions and API keys', async () => {
    const mine = await adminOf(app);
    const theirs = await adminOf(app);
    const key = (
      await app.request('POST', '/v1/applications', { headers: mine.headers, body: { name: 'k' } })
    ).body.apiKey.key;
    for (const id of [theirs.tenant.tenantId, newId()]) {
      const calls = [
        app.request('GET', `/v1/tenants/${id}`, { headers: mine.headers }),
        app.request('PATCH', `/v1/tenants/${id}`, { headers: mine.headers, body: { name: 'x' } }),
        app.request('GET', `/v1/tenants/${id}/settings`, { headers: mine.headers }),
        app.request('PATCH', `/v1/tenants/${id}/settings`, {
          headers: mine.headers,
          body: { geofenceRadiusMetros: 1 },
        }),
        app.request('GET', `/v1/tenants/${id}`, { headers: bearer(key) }),
        app.request('GET', `/v1/tenants/${id}/settings`, { headers: bearer(key) }),
      ];
      for (const res of await Promise.all(calls)) {
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
    }
    const untouched = await app.request('GET', `/v1/tenants/${theirs.tenant.tenantId}/settings`, {
      headers: theirs.headers,
    });
    expect(untouched.body.geofenceRadiusMetros).toBe(200);
  });

  it('PATCH /v1/tenants/:id changes the name only; unknown fields (slug) are 400', async () => {
    const a = await adminOf(app);
    const res = await app.request('PATCH', `/v1/tenants/${a.tenant.tenantId}`, {
      headers: a.headers,
      body: { name: 'Renamed' },
    });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Renamed');
    const slug = await app.request('PATCH', `/v1/tenants/${a.tenant.tenantId}`, {
      headers: a.headers,
      body: { slug: 'x' },
    });
    expect(slug.status).toBe(400);
  });

  it('settings start at the documented defaults', async () => {
    const a = await adminOf(app);
    const res = await app.request('GET', `/v1/tenants/${a.tenant.tenantId}/settings`, { headers: a.headers });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      webhookUrl: null,
      geofenceRadiusMetros: 200,
      age_policy: { minimumAge: null, belowMinimum: 'deny' },
      selfRegistration: 'off',
      biometricQualityLevel: 0.5,
      // The face lines are the evaluation's (checkin-policy), read from there.
      matchThreshold: FACE_LINE_DEFAULTS.matchThreshold,
      stepUpThreshold: FACE_LINE_DEFAULTS.stepUpThreshold,
      probeQualityMin: FACE_LINE_DEFAULTS.probeQualityMin,
      stepUpFactors: ['qr', 'staff'],
      livenessThreshold: 0.5,
      requireLiveness: true,
      livenessChallenge: 'when_uncertain',
      allowDuplicateFaces: false,
      qrTokenTtlHours: 720,
      qrRepeatWindowMinutes: 5,
      syncCheckinImages: false,
      refreshTemplates: false,
      identifyCallers: 'credentialed',
      apiKeyCheckinsPerMinute: 900,
      requireMfaForAdmins: false,
      defaultLocale: 'en',
    });
    expect(res.body).toEqual(TENANT_SETTINGS_DEFAULTS);
  });

  it('PATCH settings is partial: only the fields sent change, age_policy merges field by field', async () => {
    const a = await adminOf(app);
    const url = `/v1/tenants/${a.tenant.tenantId}/settings`;
    const first = await app.request('PATCH', url, {
      headers: a.headers,
      body: {
        webhookUrl: 'https://hooks.example.com/portico',
        geofenceRadiusMetros: 50,
        age_policy: { minimumAge: 18 },
      },
    });
    expect(first.status, first.text).toBe(200);
    const second = await app.request('PATCH', url, {
      headers: a.headers,
      body: { biometricQualityLevel: 0.7, age_policy: { belowMinimum: 'require_guardian_consent' } },
    });
    expect(second.body).toEqual({
      ...TENANT_SETTINGS_DEFAULTS,
      webhookUrl: 'https://hooks.example.com/portico',
      geofenceRadiusMetros: 50,
      biometricQualityLevel: 0.7,
      age_policy: { minimumAge: 18, belowMinimum: 'require_guardian_consent' },
    });
    expect((await app.request('GET', url, { headers: a.headers })).body).toEqual(second.body);
    expect(await getTenantSettings(app.deps.db, a.tenant.tenantId)).toEqual(second.body);
    const cleared = await app.request('PATCH', url, { headers: a.headers, body: { webhookUrl: null } });
    expect(cleared.body.webhookUrl).toBeNull();
    // Only overrides are stored.
    const row = await app.deps.db.prisma.tenant.findUniqueOrThrow({ where: { id: a.tenant.tenantId } });
    expect(Object.keys(row.settings as object).sort()).toEqual([
      'age_policy',
      'biometricQualityLevel',
      'geofenceRadiusMetros',
      'webhookUrl',
    ]);
  });

  it('refuses unknown fields and out-of-range values with 400 validation_failed and the field path', async () => {
    const a = await adminOf(app);
    const url = `/v1/tenants/${a.tenant.tenantId}/settings`;
    const cases: [object, string][] = [
      [{ unknownSetting: true }, 'body'],
      [{ geofenceRadiusMetros: -1 }, 'body.geofenceRadiusMetros'],
      [{ biometricQualityLevel: 1.5 }, 'body.biometricQualityLevel'],
      [{ matchThreshold: -0.1 }, 'body.matchThreshold'],
      [{ webhookUrl: 'not a url' }, 'body.webhookUrl'],
      [{ webhookUrl: 'ftp://files.example.com/x' }, 'body.webhookUrl'],
      [{ age_policy: { minimumAge: 17.5 } }, 'body.age_policy.minimumAge'],
      [{ age_policy: { belowMinimum: 'allow' } }, 'body.age_policy.belowMinimum'],
      [{ age_policy: { other: 1 } }, 'body.age_policy'],
      [{ requireLiveness: 'yes' }, 'body.requireLiveness'],
    ];
    for (const [body, path] of cases) {
      const res = await app.request('PATCH', url, { headers: a.headers, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors[0].path, JSON.stringify(body)).toBe(path);
    }
  });

  it('audits settings and tenant changes', async () => {
    const a = await adminOf(app);
    await app.request('PATCH', `/v1/tenants/${a.tenant.tenantId}/settings`, {
      headers: a.headers,
      body: { matchThreshold: 0.45 },
    });
    await app.request('PATCH', `/v1/tenants/${a.tenant.tenantId}`, {
      headers: a.headers,
      body: { name: 'New' },
    });
    const rows = await app.deps.db.prisma.auditLog.findMany({
      where: { tenantId: a.tenant.tenantId, action: { in: ['tenant.settings.updated', 'tenant.updated'] } },
      orderBy: { id: 'asc' },
    });
    expect(rows.map((r) => [r.action, r.metadata])).toEqual([
      ['tenant.settings.updated', { changed: { matchThreshold: 0.45 } }],
      ['tenant.updated', { fields: ['name'] }],
    ]);
  });

  it('operators may read but not change the tenant (403); API keys may do both (scope tenant:write)', async () => {
    const a = await adminOf(app);
    const op = await loggedInUser(app, a.tenant.tenantId, 'operator', `op@${a.tenant.slug}.example.com`);
    const key = bearer(
      (await app.request('POST', '/v1/applications', { headers: a.headers, body: { name: 'k' } })).body.apiKey
        .key,
    );
    const url = `/v1/tenants/${a.tenant.tenantId}/settings`;
    expect((await app.request('GET', url, { headers: op })).status).toBe(200);
    expect((await app.request('GET', url, { headers: key })).status).toBe(200);
    const refused = await app.request('PATCH', url, { headers: op, body: { geofenceRadiusMetros: 1 } });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('forbidden');
    const byKey = await app.request('PATCH', url, { headers: key, body: { geofenceRadiusMetros: 1 } });
    expect(byKey.status).toBe(200);
  });
});

describe('effective settings', () => {
  it('merge stored overrides over the defaults and fall back to the default for an override that no longer validates', () => {
    expect(tenantSettingsOf(null)).toEqual(TENANT_SETTINGS_DEFAULTS);
    expect(
      tenantSettingsOf({
        geofenceRadiusMetros: -5,
        matchThreshold: 0.3,
        junk: 1,
        age_policy: { minimumAge: 16 },
      }),
    ).toEqual({
      ...TENANT_SETTINGS_DEFAULTS,
      matchThreshold: 0.3,
      age_policy: { minimumAge: 16, belowMinimum: 'deny' },
    });
  });
});

describe('webhook URL guard (SSRF)', () => {
  let app: IdentityApp;
  beforeAll(async () => {
    app = await startApp({ ALLOW_PRIVATE_WEBHOOK_URLS: 'false' });
  });
  afterAll(() => app?.close());

  it('refuses loopback, private and link-local webhook hosts unless the operator allows them', async () => {
    const a = await adminOf(app);
    const url = `/v1/tenants/${a.tenant.tenantId}/settings`;
    for (const webhookUrl of [
      'http://localhost:8080/hook',
      'http://127.0.0.1/hook',
      'http://10.1.2.3/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/hook',
      'http://[fd00::1]/hook',
      'http://[::ffff:192.168.1.1]/hook',
      'http://2130706433/hook',
    ]) {
      const res = await app.request('PATCH', url, { headers: a.headers, body: { webhookUrl } });
      expect(res.status, webhookUrl).toBe(400);
      expect(res.body.errors[0].path).toBe('body.webhookUrl');
    }
    const ok = await app.request('PATCH', url, {
      headers: a.headers,
      body: { webhookUrl: 'https://93.184.216.34/hook' },
    });
    expect(ok.status).toBe(200);
  });

  it('classifies addresses', () => {
    for (const ip of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.0.1',
      '169.254.1.1',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      '::ffff:10.0.0.1',
      '::ffff:a00:1',
    ]) {
      expect(isPrivateAddress(ip), ip).toBe(true);
    }
    for (const ip of ['8.8.8.8', '93.184.216.34', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(isPrivateAddress(ip), ip).toBe(false);
    }
    expect(checkWebhookUrl('http://127.0.0.1/x', { allowPrivate: true }).ok).toBe(true);
    expect(checkWebhookUrl('https://user:pw@example.com/', { allowPrivate: true }).ok).toBe(false);
    expect(checkWebhookUrl('http://api.localhost/', { allowPrivate: false }).ok).toBe(false);
  });
});
