// Contract 5: each caller kind is accepted only where the route says, decided in one place.
import type { AddressInfo } from 'node:net';
import { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import express from 'express';
import { z } from '@portico/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../src/http/authenticate.js';
import { errorHandler } from '../../src/http/errors.js';
import { defineRoute, mountRoute } from '../../src/http/route.js';
import { newId } from '../../src/infra/db/index.js';
import { createDeviceService } from '../../src/modules/devices/service.js';
import { createSandboxService } from '../../src/modules/sandbox/service.js';
import { createCredentialVerifier } from '../../src/modules/auth/verifier.js';
import { signPortalToken } from '../../src/modules/auth/tokens.js';
import { adminOf, bearer, startApp, type IdentityApp } from '../support/identity.js';

describe('caller kinds', () => {
  let app: IdentityApp;
  let portalUrl: string;
  let closePortal: () => Promise<void>;
  let admin: Awaited<ReturnType<typeof adminOf>>;
  let apiKey: string;

  /** A portal JWT of a real portal session (the portal module will issue these through the magic link). */
  async function portalToken(opts: { revoked?: boolean } = {}) {
    const accountId = newId();
    const jti = newId();
    const now = app.clock.now();
    await app.deps.db.prisma.portalAccount.create({
      data: { id: accountId, email: `${accountId}@people.example.com` },
    });
    await app.deps.db.prisma.portalSession.create({
      data: {
        id: newId(),
        accountId,
        tokenId: jti,
        expiresAt: new Date(now.getTime() + 3600_000),
        revokedAt: opts.revoked ? now : null,
      },
    });
    return signPortalToken(app.deps.secrets.jwtKey, { sub: accountId, sid: jti, jti }, now, 3600);
  }

  beforeAll(async () => {
    app = await startApp();
    admin = await adminOf(app);
    apiKey = (await app.request('POST', '/v1/applications', { headers: admin.headers, body: { name: 'k' } }))
      .body.apiKey.key;
    // A stand-in for the future `/v1/me` route: the same authentication middleware and route guard.
    const server = express();
    const router = express.Router();
    mountRoute(
      router,
      new OpenAPIRegistry(),
      defineRoute({
        method: 'get',
        path: '/v1/me',
        operationId: 'portalMe',
        summary: 'stand-in',
        tag: 'Portal',
        auth: ['portal'],
        responses: { 200: { description: 'ok', schema: z.object({ accountId: z.string() }) } },
        handler: async ({ actor }) => ({ status: 200, body: { accountId: actor.accountId } }),
      }),
      {
        authenticate: authenticate({
          internalSecret: app.deps.secrets.internalSecret,
          verifier: createCredentialVerifier(app.deps),
          verifyDevice: createDeviceService(app.deps).verify,
          sandboxOf: createSandboxService(app.deps).tenantIdOf,
        }),
        parseBody: express.json(),
        checkResponses: true,
      },
    );
    server.use(router);
    server.use(errorHandler(app.deps.logger));
    const listening = server.listen(0, '127.0.0.1');
    await new Promise((r) => listening.once('listening', r));
    portalUrl = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
    closePortal = () => new Promise((r) => listening.close(() => r()));
  });
  afterAll(async () => {
    await closePortal?.();
    await app?.close();
  });

  const portalMe = async (headers: Record<string, string>) => {
    const res = await fetch(`${portalUrl}/v1/me`, { headers });
    return {
      status: res.status,
      headers: res.headers,
      body: (await res.json()) as { code?: string; accountId?: string },
    };
  };

  it('a portal JWT is accepted on a portal route', async () => {
    const res = await portalMe(bearer(await portalToken()));
    expect(res.status).toBe(200);
    expect(res.body.accountId).toBeTruthy();
  });

  it('a portal JWT of a revoked portal session is 401 invalid_token', async () => {
    const res = await portalMe(bearer(await portalToken({ revoked: true })));
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_token');
  });

  it('the portal route refuses an admin session, an API key, a device secret and no credentials with 401', async () => {
    for (const headers of [admin.headers, bearer(apiKey)]) {
      const res = await portalMe(headers);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthorized');
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="portal"');
    }
    expect((await portalMe({})).status).toBe(401);
    // The secret without a device token identifies no device (modules/devices).
    expect((await portalMe({ 'x-internal-secret': app.deps.secrets.internalSecret })).status).toBe(401);
  });

  it('admin and integrator routes refuse a portal JWT with 403 forbidden', async () => {
    const token = bearer(await portalToken());
    for (const [method, path] of [
      ['GET', '/v1/applications'],
      ['GET', '/v1/auth/me'],
      ['GET', '/v1/auth/products'],
      ['POST', '/v1/auth/mfa/setup'],
      ['GET', `/v1/tenants/${admin.tenant.tenantId}`],
      ['GET', `/v1/tenants/${admin.tenant.tenantId}/settings`],
    ] as const) {
      const res = await app.request(method, path, { headers: token });
      expect(res.status, path).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
  });

  it('a device secret without its device token is 401 on admin routes; a wrong secret is 403', async () => {
    const ok = await app.request('GET', '/v1/applications', {
      headers: { 'x-internal-secret': app.deps.secrets.internalSecret },
    });
    expect(ok.status).toBe(401);
    const wrong = await app.request('GET', '/v1/applications', { headers: { 'x-internal-secret': 'nope' } });
    expect(wrong.status).toBe(403);
  });

  it('an API key is refused on the session routes /v1/auth/me and /v1/auth/products (403)', async () => {
    for (const path of ['/v1/auth/me', '/v1/auth/products']) {
      const res = await app.request('GET', path, { headers: bearer(apiKey) });
      expect(res.status).toBe(403);
    }
  });

  it('a portal token cannot pass for an admin token by its type claim alone', async () => {
    const now = app.clock.now();
    const { SignJWT, decodeJwt } = await import('jose');
    // The claims of the admin's live session: only the audience differs between the two tokens.
    const { sid, sub } = decodeJwt(admin.token);
    const signed = (audience: string) =>
      new SignJWT({ type: 'admin', tid: admin.tenant.tenantId, role: 'owner', sid })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer('portico')
        .setAudience(audience)
        .setSubject(sub!)
        .setIssuedAt(Math.floor(now.getTime() / 1000))
        .setExpirationTime(Math.floor(now.getTime() / 1000) + 600)
        .sign(app.deps.secrets.jwtKey);
    const res = await app.request('GET', '/v1/auth/me', { headers: bearer(await signed('person_portal')) });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_token');
    // Control: with the admin audience the same claims are accepted.
    expect((await app.request('GET', '/v1/auth/me', { headers: bearer(await signed('admin')) })).status).toBe(
      200,
    );
  });
});
