// Brute force on login: per address+e-mail and per address limits, account lockout, shared counters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/http/rate-limit.js';
import { login, newTenant, startApp, type IdentityApp } from '../support/identity.js';

const from = (ip: string) => ({ 'x-forwarded-for': ip });

describe('login abuse limits', () => {
  let app: IdentityApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.close());

  it('answers 429 rate_limited with Retry-After after 5 failed logins for one e-mail from one address, even with the right password', async () => {
    const tenant = await newTenant(app);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await login(app, tenant.adminEmail, 'wrong', from('203.0.113.1'))).res.status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const blocked = (await login(app, tenant.adminEmail, undefined, from('203.0.113.1'))).res;
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe('rate_limited');
    expect(Number(blocked.headers.get('retry-after'))).toBe(900);
    // Another address is not blocked by this counter.
    expect((await login(app, tenant.adminEmail, undefined, from('203.0.113.2'))).res.status).toBe(200);
    // The window ends.
    app.clock.advance(15 * 60_000);
    expect((await login(app, tenant.adminEmail, undefined, from('203.0.113.1'))).res.status).toBe(200);
  });

  it('counts unknown e-mails too (no free guessing of which accounts exist)', async () => {
    for (let i = 0; i < 5; i++) await login(app, 'ghost@nowhere.example.com', 'x', from('203.0.113.3'));
    const res = (await login(app, 'ghost@nowhere.example.com', 'x', from('203.0.113.3'))).res;
    expect(res.status).toBe(429);
  });

  it('locks the account for 15 minutes after 10 consecutive failures from any addresses (429 account_locked)', async () => {
    const tenant = await newTenant(app);
    for (let i = 0; i < 10; i++) await login(app, tenant.adminEmail, 'wrong', from(`198.51.100.${i}`));
    const locked = (await login(app, tenant.adminEmail, undefined, from('198.51.100.200'))).res;
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe('account_locked');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(800);
    const audit = await app.deps.db.prisma.auditLog.count({
      where: { tenantId: tenant.tenantId, action: 'auth.account.locked' },
    });
    expect(audit).toBe(1);
    app.clock.advance(15 * 60_000 + 1000);
    expect((await login(app, tenant.adminEmail, undefined, from('198.51.100.201'))).res.status).toBe(200);
  });

  it('a successful login resets the consecutive-failure count', async () => {
    const tenant = await newTenant(app);
    for (let i = 0; i < 4; i++) await login(app, tenant.adminEmail, 'wrong', from('192.0.2.10'));
    expect((await login(app, tenant.adminEmail, undefined, from('192.0.2.10'))).res.status).toBe(200);
    const user = await app.deps.db.prisma.user.findUniqueOrThrow({ where: { email: tenant.adminEmail } });
    expect(user.failedLogins).toBe(0);
    for (let i = 0; i < 5; i++) await login(app, tenant.adminEmail, 'wrong', from('192.0.2.10'));
    expect((await login(app, tenant.adminEmail, undefined, from('192.0.2.10'))).res.status).toBe(429);
  });

  it('limits all attempts from one address to 50 per 15 minutes', async () => {
    const ip = from('192.0.2.99');
    let last;
    for (let i = 0; i < 51; i++) last = (await login(app, `spray${i}@nowhere.example.com`, 'x', ip)).res;
    expect(last!.status).toBe(429);
    expect(last!.body.code).toBe('rate_limited');
  }, 60_000);
});

describe('rate limiter', () => {
  let app: IdentityApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.close());

  it('shares its counters through the database: two limiters (two processes) count the same window', async () => {
    const a = createRateLimiter(app.deps.db, app.clock);
    const b = createRateLimiter(app.deps.db, app.clock);
    const rule = { limit: 3, windowMs: 60_000 };
    const results = [
      await a.consume('k', rule),
      await b.consume('k', rule),
      await a.consume('k', rule),
      await b.consume('k', rule),
    ];
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
    expect(results[3]).toMatchObject({ count: 4, retryAfterSeconds: 60 });
    expect(await b.peek('k', rule)).toMatchObject({ allowed: false, count: 4 });
    app.clock.advance(60_000);
    expect(await a.consume('k', rule)).toMatchObject({ allowed: true, count: 1 });
  });

  it('prunes only the buckets whose window has ended', async () => {
    const limiter = createRateLimiter(app.deps.db, app.clock);
    await limiter.consume('short', { limit: 1, windowMs: 1000 });
    await limiter.consume('long', { limit: 1, windowMs: 3600_000 });
    app.clock.advance(2000);
    expect(await limiter.prune()).toBeGreaterThanOrEqual(1);
    expect(await app.deps.db.prisma.rateLimitBucket.findUnique({ where: { key: 'short' } })).toBeNull();
    expect(await app.deps.db.prisma.rateLimitBucket.findUnique({ where: { key: 'long' } })).not.toBeNull();
  });

  it('enforces several keys in one call: counts every one, refuses when any is over, waits for the longest', async () => {
    const limiter = createRateLimiter(app.deps.db, app.clock);
    const client = { key: 'all:client', rule: { limit: 2, windowMs: 60_000 } };
    const tenant = { key: 'all:tenant', rule: { limit: 3, windowMs: 600_000 } };
    await limiter.enforceAll([client, tenant]);
    await limiter.enforceAll([tenant, client]);
    // The client is over its limit now: refused, and the tenant's hit is counted all the same.
    const refused = await limiter.enforceAll([client, tenant]).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(await limiter.peek(tenant.key, tenant.rule)).toMatchObject({ allowed: false, count: 3 });
    // Both over: Retry-After is the tenant's 10-minute window, not the client's minute.
    const both = await limiter.enforceAll([client, tenant]).catch((e: unknown) => e);
    expect(both).toMatchObject({ status: 429, details: { extra: { retryAfterSeconds: 600 } } });
    app.clock.advance(60_000);
    await expect(limiter.enforceAll([client])).resolves.toBeUndefined();
    await expect(limiter.enforceAll([client, tenant])).rejects.toMatchObject({ status: 429 });
  });

  it('counts concurrent hits exactly (atomic upsert)', async () => {
    const limiter = createRateLimiter(app.deps.db, app.clock);
    const rule = { limit: 100, windowMs: 60_000 };
    const all = await Promise.all(Array.from({ length: 20 }, () => limiter.consume('burst', rule)));
    expect(all.map((r) => r.count).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
  });
});
