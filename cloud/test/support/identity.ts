// Shared set-up of the identity tests: an app with a movable clock, tenants with an owner, logins.
import { generate } from 'otplib';
import { newId } from '../../src/infra/db/index.js';
import { hashPassword } from '../../src/modules/auth/passwords.js';
import { provisionTenant } from '../../src/modules/tenants/provision.js';
import { createTestApp, type TestApp, type TestResponse } from './app.js';

export class TestClock {
  constructor(public current = new Date('2026-11-21T10:00:00.000Z')) {}
  now = () => new Date(this.current.getTime());
  advance(ms: number) {
    this.current = new Date(this.current.getTime() + ms);
  }
}

/**
 * The real time, moved on by `advance`: for an app a browser talks to, whose clock may run ahead of the
 * browser's by a few TOTP steps (a test then takes a step instead of waiting up to 30 s for it).
 */
export class ShiftedClock {
  private offsetMs = 0;
  now = () => new Date(Date.now() + this.offsetMs);
  advance(ms: number) {
    this.offsetMs += ms;
  }
}

export interface IdentityApp extends TestApp {
  clock: TestClock;
}

export async function startApp(env?: Record<string, string>): Promise<IdentityApp> {
  const clock = new TestClock();
  const app = await createTestApp({ clock, ...(env ? { env } : {}) });
  return Object.assign(app, { clock });
}

let counter = 0;
export const PASSWORD = 'correct horse battery staple';

export async function newTenant(app: TestApp, slug = `t${Date.now().toString(36)}${counter++}`) {
  const t = await provisionTenant(app.deps, {
    slug,
    name: `Tenant ${slug}`,
    adminEmail: `owner@${slug}.example.com`,
    adminPassword: PASSWORD,
  });
  return t;
}

/** The refresh token value from a Set-Cookie header. */
export function refreshCookieOf(res: TestResponse): string | undefined {
  const header = res.headers.get('set-cookie');
  const m = header ? /portico_refresh=([^;]*)/.exec(header) : null;
  return m?.[1] || undefined;
}

export async function login(
  app: TestApp,
  email: string,
  password = PASSWORD,
  headers: Record<string, string> = {},
) {
  const res = await app.request('POST', '/v1/auth/login', { body: { email, password }, headers });
  return { res, token: res.body?.accessToken as string, refresh: refreshCookieOf(res) };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A tenant with its owner logged in. */
export async function adminOf(app: TestApp) {
  const tenant = await newTenant(app);
  const { token, refresh } = await login(app, tenant.adminEmail);
  if (!token) throw new Error('login failed in set-up');
  return { tenant, token, refresh, headers: bearer(token) };
}

export function totp(secret: string, at: Date): Promise<string> {
  return generate({ secret, epoch: Math.floor(at.getTime() / 1000) });
}

/** TOTP's time step. */
export const TOTP_STEP_MS = 30_000;

/**
 * Codes of `secret` for ever later 30 s steps: the service takes a step once and only after the last
 * one it took, and accepts one step ahead of its clock (so at most one code is ready ahead of time).
 * Given the service's clock (a `ShiftedClock` or a `TestClock`), a code not ready yet moves that clock
 * on a step; else it waits for the real time.
 */
export function totpCodes(
  secret: string,
  clock?: Pick<ShiftedClock, 'now' | 'advance'>,
): () => Promise<string> {
  let last = -Infinity;
  return async () => {
    for (;;) {
      const now = Math.floor((clock?.now() ?? new Date()).getTime() / TOTP_STEP_MS);
      const step = Math.max(last + 1, now);
      if (step <= now + 1) {
        last = step;
        return totp(secret, new Date(step * TOTP_STEP_MS + 1000));
      }
      if (clock) clock.advance(TOTP_STEP_MS);
      else await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  };
}

/** A second user of `tenantId` with `role`, logged in: its bearer headers. */
export async function loggedInUser(
  app: TestApp,
  tenantId: string,
  role: 'operator' | 'admin',
  email: string,
) {
  await app.deps.db.prisma.user.create({
    data: { id: newId(), tenantId, email, passwordHash: await hashPassword(PASSWORD), role },
  });
  const { token } = await login(app, email);
  if (!token) throw new Error('login failed in set-up');
  return bearer(token);
}
