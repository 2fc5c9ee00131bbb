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
