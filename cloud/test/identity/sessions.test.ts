// Contract 4.1 and 5 rule 1: login, refresh rotation with theft detection, logout, profile, products.
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import { clearedRefreshCookie, readRefreshCookie, refreshCookie } from '../../src/modules/auth/cookie.js';
import { signAdminToken } from '../../src/modules/auth/tokens.js';
import {
  adminOf,
  bearer,
  loggedInUser,
  login,
  newTenant,
  PASSWORD,
  refreshCookieOf,
  startApp,
  type IdentityApp,
} from '../support/identity.js';

const cookie = (refresh: string) => ({ cookie: `portico_refresh=${refresh}` });

describe('login', () => {
  let app: IdentityApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.close());

  it('answers a 15-minute bearer JWT, the profile and an httpOnly SameSite=Strict refresh cookie on /v1/auth', async () => {
    const tenant = await newTenant(app);
    const { res } = await login(app, tenant.adminEmail);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      tokenType: 'Bearer',
      expiresIn: 900,
      user: {
        email: tenant.adminEmail,
        role: 'owner',
        mfaEnabled: false,
        tenant: { id: tenant.tenantId, slug: tenant.slug },
      },
    });
    expect(res.body.accessToken.split('.')).toHaveLength(3);
    const [header, payload] = res.body.accessToken
      .split('.')
      .slice(0, 2)
      .map((p: string) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    expect(header.alg).toBe('HS256');
    expect(payload).toMatchObject({
      iss: 'portico',
      aud: 'admin',
      type: 'admin',
      tid: tenant.tenantId,
      role: 'owner',
    });
    expect(payload.exp - payload.iat).toBe(900);
    const setCookie = res.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^portico_refresh=rt_[A-Za-z0-9_-]{43};/);
    expect(setCookie).toContain('Path=/v1/auth');
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain(`Max-Age=${30 * 24 * 3600}`);
    expect(setCookie).not.toContain('Secure'); // test environment: plain http
  });

  it('stores the refresh token only as a SHA-256 hash', async () => {
    const tenant = await newTenant(app);
    const { refresh } = await login(app, tenant.adminEmail);
    const rows = await app.deps.db.prisma.refreshSession.findMany({ where: { tenantId: tenant.tenantId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows)).not.toContain(refresh);
  });

  it('stores passwords as argon2id', async () => {
    const tenant = await newTenant(app);
    const user = await app.deps.db.prisma.user.findUniqueOrThrow({ where: { email: tenant.adminEmail } });
    expect(user.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(user.passwordHash).not.toContain(PASSWORD);
  });

  it('answers 401 invalid_credentials alike for a wrong password and an unknown e-mail, and audits both', async () => {
    const tenant = await newTenant(app);
    const wrong = await login(app, tenant.adminEmail, 'not the password');
    const unknown = await login(app, `nobody-${tenant.slug}@example.com`, 'not the password');
    for (const { res } of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body).toMatchObject({ code: 'invalid_credentials', detail: 'E-mail or password is wrong' });
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    const audits = await app.deps.db.prisma.auditLog.findMany({ where: { action: 'auth.login.failed' } });
    const mine = audits.filter((a) => JSON.stringify(a.metadata).includes(tenant.slug));
    expect(mine.map((a) => (a.metadata as { reason: string }).reason).sort()).toEqual([
      'unknown_email',
      'wrong_password',
    ]);
    expect(JSON.stringify(mine)).not.toContain('not the password');
  });

  it('audits a successful login without secrets', async () => {
    const tenant = await newTenant(app);
    const { res } = await login(app, tenant.adminEmail);
    const rows = await app.deps.db.prisma.auditLog.findMany({
      where: { tenantId: tenant.tenantId, action: 'auth.login.succeeded' },
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.actorId).toBe(res.body.user.id);
    expect(JSON.stringify(rows)).not.toContain(PASSWORD);
    expect(JSON.stringify(rows)).not.toContain(res.body.accessToken);
  });

  it('refuses a login body with unknown or missing fields with 400 validation_failed', async () => {
    const res = await app.request('POST', '/v1/auth/login', {
      body: { email: 'a@b.co', password: 'x', tenant: 'y' },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    const missing = await app.request('POST', '/v1/auth/login', { body: { email: 'a@b.co' } });
    expect(missing.body.errors).toEqual([expect.objectContaining({ path: 'body.password' })]);
  });

  it('accepts the e-mail in any case', async () => {
    const tenant = await newTenant(app);
    const { res } = await login(app, tenant.adminEmail.toUpperCase());
    expect(res.status).toBe(200);
  });
});

describe('access tokens', () => {
  let app: IdentityApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.close());

  it('GET /v1/auth/me answers the profile: tenant, role, MFA state', async () => {
    const a = await adminOf(app);
    const me = await app.request('GET', '/v1/auth/me', { headers: a.headers });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      email: a.tenant.adminEmail,
      role: 'owner',
      mfaEnabled: false,
      tenant: { id: a.tenant.tenantId, slug: a.tenant.slug, name: `Tenant ${a.tenant.slug}` },
    });
  });

  it('refuses a call without a token with 401 unauthorized and WWW-Authenticate', async () => {
    const res = await app.request('GET', '/v1/auth/me');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthorized');
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('refuses an expired token with 401 token_expired', async () => {
    const a = await adminOf(app);
    app.clock.advance(15 * 60_000 + 1000);
    const res = await app.request('GET', '/v1/auth/me', { headers: a.headers });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('token_expired');
  });

  it('refuses a tampered token (payload changed, signature kept) with 401 invalid_token', async () => {
    const a = await adminOf(app);
    const [h, p, s] = a.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, role: 'owner', tid: newId() })).toString(
      'base64url',
    );
    const res = await app.request('GET', '/v1/auth/me', { headers: bearer(`${h}.${forged}.${s}`) });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_token');
    const flipped = s.slice(0, -2) + (s.at(-2) === 'A' ? 'B' : 'A') + s.at(-1);
    const res2 = await app.request('GET', '/v1/auth/me', { headers: bearer(`${h}.${p}.${flipped}`) });
    expect(res2.body.code).toBe('invalid_token');
  });

  it('refuses a token signed with another algorithm (HS512 with the same key, and alg none)', async () => {
    const a = await adminOf(app);
    const claims = JSON.parse(Buffer.from(a.token.split('.')[1]!, 'base64url').toString());
    const hs512 = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS512' })
      .sign(app.deps.secrets.jwtKey);
    const none = new UnsecuredJWT(claims).encode();
    for (const token of [hs512, `${none}`]) {
      const res = await app.request('GET', '/v1/auth/me', {
        headers: bearer(token.endsWith('.') ? `${token}x` : token),
      });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('invalid_token');
    }
  });

  it('refuses a token signed with another key, issuer or audience', async () => {
    const a = await adminOf(app);
    const claims = JSON.parse(Buffer.from(a.token.split('.')[1]!, 'base64url').toString());
    const otherKey = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('another-secret-of-at-least-32-characters!!'));
    const otherIss = await new SignJWT({ ...claims, iss: 'someone-else' })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(app.deps.secrets.jwtKey);
    const otherAud = await new SignJWT({ ...claims, aud: 'person_portal' })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(app.deps.secrets.jwtKey);
    for (const token of [otherKey, otherIss, otherAud]) {
      const res = await app.request('GET', '/v1/auth/me', { headers: bearer(token) });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('invalid_token');
    }
  });

  it('refuses a well-signed token whose session does not exist (no login behind it)', async () => {
    const a = await adminOf(app);
    const claims = JSON.parse(Buffer.from(a.token.split('.')[1]!, 'base64url').toString());
    const token = await signAdminToken(
      app.deps.secrets.jwtKey,
      { sub: claims.sub, tid: claims.tid, role: 'owner', sid: newId() },
      app.clock.now(),
    );
    const res = await app.request('GET', '/v1/auth/me', { headers: bearer(token) });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_token');
  });

  it('GET /v1/auth/products lists what the role may open', async () => {
    const a = await adminOf(app);
    const owner = await app.request('GET', '/v1/auth/products', { headers: a.headers });
    expect(owner.status).toBe(200);
    expect(owner.body.items.map((p: { id: string }) => p.id)).toEqual([
      'admin-console',
      'checkin-kiosk',
      'developer-api',
    ]);
    expect(owner.body.items[0]).toMatchObject({
      name: 'Admin console',
      url: expect.stringMatching(/\/admin$/),
    });

    const op = await loggedInUser(
      app,
      a.tenant.tenantId,
      'operator',
      `operator@${a.tenant.slug}.example.com`,
    );
    const operator = await app.request('GET', '/v1/auth/products', { headers: op });
    expect(operator.body.items.map((p: { id: string }) => p.id)).toEqual(['admin-console', 'checkin-kiosk']);
  });
});

describe('refresh and logout', () => {
  let app: IdentityApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.close());

  it('rotates: a new access token and a new refresh cookie; the family keeps its absolute expiry', async () => {
    const a = await adminOf(app);
    app.clock.advance(60_000);
    const res = await app.request('POST', '/v1/auth/refresh', { headers: cookie(a.refresh!) });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      tokenType: 'Bearer',
      expiresIn: 900,
      user: { email: a.tenant.adminEmail },
    });
    const next = refreshCookieOf(res)!;
    expect(next).toBeTruthy();
    expect(next).not.toBe(a.refresh);
    expect(res.headers.get('set-cookie')).toContain(`Max-Age=${30 * 24 * 3600 - 60}`);
    const me = await app.request('GET', '/v1/auth/me', { headers: bearer(res.body.accessToken) });
    expect(me.status).toBe(200);
    const again = await app.request('POST', '/v1/auth/refresh', { headers: cookie(next) });
    expect(again.status).toBe(200);
  });

  it('treats a reused (already rotated) refresh token as theft: 401 refresh_token_reused, the whole family is revoked', async () => {
    const a = await adminOf(app);
    const first = await app.request('POST', '/v1/auth/refresh', { headers: cookie(a.refresh!) });
    const stolenUse = await app.request('POST', '/v1/auth/refresh', { headers: cookie(a.refresh!) });
    expect(stolenUse.status).toBe(401);
    expect(stolenUse.body.code).toBe('refresh_token_reused');
    expect(stolenUse.headers.get('set-cookie')).toContain('Max-Age=0');
    // The legitimate holder's newer refresh token and every access token of the family stop working.
    const legit = await app.request('POST', '/v1/auth/refresh', { headers: cookie(refreshCookieOf(first)!) });
    expect(legit.status).toBe(401);
    expect(legit.body.code).toBe('invalid_token');
    for (const token of [a.token, first.body.accessToken]) {
      const me = await app.request('GET', '/v1/auth/me', { headers: bearer(token) });
      expect(me.status).toBe(401);
      expect(me.body.code).toBe('invalid_token');
    }
    const sessions = await app.deps.db.prisma.refreshSession.findMany({
      where: { tenantId: a.tenant.tenantId },
    });
    expect(sessions.every((s) => s.revokedReason === 'reuse_detected')).toBe(true);
    const audit = await app.deps.db.prisma.auditLog.findMany({
      where: { tenantId: a.tenant.tenantId, action: 'auth.refresh.reuse_detected' },
    });
    expect(audit).toHaveLength(1);
  });

  it('leaves other sessions of the same user alone when one family is revoked', async () => {
    const a = await adminOf(app);
    const other = await login(app, a.tenant.adminEmail);
    await app.request('POST', '/v1/auth/refresh', { headers: cookie(a.refresh!) });
    await app.request('POST', '/v1/auth/refresh', { headers: cookie(a.refresh!) });
    const me = await app.request('GET', '/v1/auth/me', { headers: bearer(other.token) });
    expect(me.status).toBe(200);
  });

  it('refreshes even when the client still sends its expired access token', async () => {
    const a = await adminOf(app);
    app.clock.advance(16 * 60_000);
    expect((await app.request('GET', '/v1/auth/me', { headers: a.headers })).body.code).toBe('token_expired');
    const r = await app.request('POST', '/v1/auth/refresh', {
      headers: { ...cookie(a.refresh!), ...a.headers },
    });
    expect(r.status).toBe(200);
    expect(r.body.accessToken).toEqual(expect.any(String));
  });

  it('refuses a refresh without a cookie (401 unauthorized) or with an unknown one (401 invalid_token)', async () => {
    const none = await app.request('POST', '/v1/auth/refresh');
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('unauthorized');
    const unknown = await app.request('POST', '/v1/auth/refresh', { headers: cookie('rt_nope') });
    expect(unknown.body.code).toBe('invalid_token');
  });

  it('ends a session 30 days after login whatever the rotations: 401 token_expired', async () => {
    const a = await adminOf(app);
    app.clock.advance(29 * 24 * 3600_000);
    const r = await app.request('POST', '/v1/auth/refresh', { headers: cookie(a.refresh!) });
    expect(r.status).toBe(200);
    app.clock.advance(24 * 3600_000);
    const late = await app.request('POST', '/v1/auth/refresh', { headers: cookie(refreshCookieOf(r)!) });
    expect(late.status).toBe(401);
    expect(late.body.code).toBe('token_expired');
  });

  it('logout revokes the refresh token and the access tokens of the session, clears the cookie, and is idempotent', async () => {
    const a = await adminOf(app);
    const out = await app.request('POST', '/v1/auth/logout', { headers: cookie(a.refresh!) });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^portico_refresh=;.*Max-Age=0/);
    const refresh = await app.request('POST', '/v1/auth/refresh', { headers: cookie(a.refresh!) });
    expect(refresh.status).toBe(401);
    expect(refresh.body.code).toBe('invalid_token');
    const me = await app.request('GET', '/v1/auth/me', { headers: a.headers });
    expect(me.status).toBe(401);
    expect((await app.request('POST', '/v1/auth/logout', { headers: cookie(a.refresh!) })).status).toBe(204);
    const audit = await app.deps.db.prisma.auditLog.findMany({
      where: { tenantId: a.tenant.tenantId, action: 'auth.logout' },
    });
    expect(audit).toHaveLength(1);
  });

  it('refuses refresh and logout from another origin (403 forbidden) without spending the cookie; its own origin and non-browser callers pass', async () => {
    const a = await adminOf(app);
    const own = new URL(app.deps.config.publicUrl).origin;
    for (const origin of ['https://evil.example', 'null']) {
      for (const path of ['/v1/auth/refresh', '/v1/auth/logout']) {
        const res = await app.request('POST', path, { headers: { ...cookie(a.refresh!), origin } });
        expect(res.status, `${path} from ${origin}`).toBe(403);
        expect(res.body.code).toBe('forbidden');
        expect(res.headers.get('set-cookie')).toBeNull();
      }
    }
    const crossSite = await app.request('POST', '/v1/auth/logout', {
      headers: { ...cookie(a.refresh!), 'sec-fetch-site': 'cross-site' },
    });
    expect(crossSite.status).toBe(403);
    expect((await app.request('GET', '/v1/auth/me', { headers: a.headers })).status).toBe(200);
    const fromConsole = await app.request('POST', '/v1/auth/refresh', {
      headers: { ...cookie(a.refresh!), origin: own, 'sec-fetch-site': 'same-origin' },
    });
    expect(fromConsole.status, fromConsole.text).toBe(200);
    const out = await app.request('POST', '/v1/auth/logout', {
      headers: cookie(refreshCookieOf(fromConsole)!),
    });
    expect(out.status).toBe(204);
  });

  it('logout with only the bearer access token revokes that session', async () => {
    const a = await adminOf(app);
    const out = await app.request('POST', '/v1/auth/logout', { headers: a.headers });
    expect(out.status).toBe(204);
    expect((await app.request('POST', '/v1/auth/refresh', { headers: cookie(a.refresh!) })).status).toBe(401);
  });
});

describe('refresh cookie attributes', () => {
  it('adds Secure outside development and test, and reads the cookie among others', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const exp = new Date('2026-01-31T00:00:00Z');
    expect(refreshCookie('rt_x', exp, now, true)).toBe(
      'portico_refresh=rt_x; Path=/v1/auth; HttpOnly; SameSite=Strict; Max-Age=2592000; Expires=Sat, 31 Jan 2026 00:00:00 GMT; Secure',
    );
    expect(clearedRefreshCookie(true)).toContain('Secure');
    expect(readRefreshCookie('a=1; portico_refresh=rt_y; b=2')).toBe('rt_y');
    expect(readRefreshCookie('a=1')).toBeUndefined();
  });
});

describe('concurrent refresh', () => {
  let app: IdentityApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.close());

  it('of two simultaneous uses of one refresh token exactly one rotates; the other is treated as reuse', async () => {
    const a = await adminOf(app);
    const [r1, r2] = await Promise.all([
      app.request('POST', '/v1/auth/refresh', { headers: cookie(a.refresh!) }),
      app.request('POST', '/v1/auth/refresh', { headers: cookie(a.refresh!) }),
    ]);
    expect([r1.status, r2.status].sort()).toEqual([200, 401]);
    expect([r1, r2].find((r) => r.status === 401)!.body.code).toBe('refresh_token_reused');
  });
});
