// Issue 26, account safety over real HTTP with a real SMTP sink (PGlite, or PostgreSQL with
// TEST_DATABASE_URL): MFA recovery codes (shown once, hashed, single use, regenerable, each use audited
// and mailed), the password reset by mailed link (same answer for unknown addresses, single use,
// 30 minutes on the app's clock, sessions ended, rate-limited), and the tenant setting that holds owners
// and admins without MFA at its setup.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/infra/crypto.js';
import { newId } from '../../src/infra/db/index.js';
import { hashPassword } from '../../src/modules/auth/passwords.js';
import { decodeMail, startPortalApp, waitForMail, type PortalApp } from '../portal/support.js';
import { adminOf, bearer, login, newTenant, PASSWORD, refreshCookieOf, totp } from '../support/identity.js';

const STEP = 30_000;
const NEW_PASSWORD = 'a brand new long passphrase';

let app: PortalApp;
beforeAll(async () => {
  app = await startPortalApp();
});
afterAll(() => app?.close());

/** An owner with MFA on (the clock moved past the step used to enable it), their secret and codes. */
async function mfaOwner(language?: 'en' | 'pt-BR') {
  const tenant = await newTenant(app);
  const first = await app.request('POST', '/v1/auth/login', {
    body: { email: tenant.adminEmail, password: PASSWORD, ...(language ? { language } : {}) },
  });
  const headers = bearer(first.body.accessToken);
  const setup = await app.request('POST', '/v1/auth/mfa/setup', { headers });
  const secret = setup.body.secret as string;
  const enable = await app.request('POST', '/v1/auth/mfa/enable', {
    headers,
    body: { code: await totp(secret, app.clock.now()) },
  });
  expect(enable.status, enable.text).toBe(200);
  app.clock.advance(STEP);
  return { tenant, headers, secret, codes: enable.body.recoveryCodes.codes as string[] };
}

async function ticketOf(email: string, password = PASSWORD) {
  const res = await app.request('POST', '/v1/auth/login', { body: { email, password } });
  expect(res.body.mfaRequired, res.text).toBe(true);
  return res.body.mfaTicket as string;
}

/** Every queued job has run (mails handed to the SMTP sink, reset requests looked up). */
async function jobsDone() {
  await expect
    .poll(() => app.deps.db.prisma.job.count({ where: { status: { in: ['pending', 'running'] } } }), {
      timeout: 10_000,
    })
    .toBe(0);
}

const mailsTo = (to: string) =>
  app.smtp.messages
    .map(decodeMail)
    .filter((m) => new RegExp(`^To: ${to.replace(/[.+]/g, '\\$&')}$`, 'mi').test(m));

describe('MFA recovery codes', () => {
  it('turning MFA on answers ten distinct codes, kept only as SHA-256 hashes', async () => {
    const o = await mfaOwner();
    expect(o.codes).toHaveLength(10);
    expect(new Set(o.codes).size).toBe(10);
    for (const c of o.codes) expect(c).toMatch(/^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
    const rows = await app.deps.db.prisma.mfaRecoveryCode.findMany({
      where: { tenantId: o.tenant.tenantId },
    });
    expect(rows).toHaveLength(10);
    const stored = JSON.stringify(rows);
    for (const c of o.codes) {
      expect(stored).not.toContain(c);
      expect(stored).not.toContain(c.replace(/-/g, ''));
    }
    const state = await app.request('GET', '/v1/auth/mfa/recovery-codes', { headers: o.headers });
    expect(state.body).toEqual({ remaining: 10, generatedAt: expect.any(String) });
  });

  it('a recovery code signs in at the MFA step once: audited, mailed with the codes left, refused the second time', async () => {
    const o = await mfaOwner();
    const email = o.tenant.adminEmail;
    const ticket = await ticketOf(email);
    // Any case, with or without dashes.
    const typed = o.codes[3]!.toUpperCase().replace(/-/g, ' ');
    const res = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: ticket, recoveryCode: typed.replace(/ /g, '') },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.accessToken).toEqual(expect.any(String));
    expect(refreshCookieOf(res)).toMatch(/^rt_/);

    const audit = await app.deps.db.prisma.auditLog.findFirstOrThrow({
      where: { tenantId: o.tenant.tenantId, action: 'auth.mfa.recovery_code_used' },
    });
    expect(audit.metadata).toEqual({ remaining: 9 });
    const mail = await waitForMail(app.smtp, email, /recovery code was just used/);
    expect(mail).toContain('9 recovery code(s) left');
    expect(mail).not.toContain(o.codes[3]!);

    const again = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: await ticketOf(email), recoveryCode: o.codes[3] },
    });
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('invalid_mfa_code');
    const state = await app.request('GET', '/v1/auth/mfa/recovery-codes', {
      headers: bearer(res.body.accessToken),
    });
    expect(state.body.remaining).toBe(9);
  });

  it('mails the use in the language of the user’s console (pt-BR)', async () => {
    const o = await mfaOwner('pt-BR');
    const res = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: await ticketOf(o.tenant.adminEmail), recoveryCode: o.codes[0] },
    });
    expect(res.status, res.text).toBe(200);
    const mail = await waitForMail(app.smtp, o.tenant.adminEmail, /Restam 9 código\(s\) de recuperação/);
    expect(mail).not.toMatch(/recovery code/i);
  });

  it('a wrong recovery code is 401 invalid_mfa_code and counts against the ticket like a wrong TOTP code', async () => {
    const o = await mfaOwner();
    const ticket = await ticketOf(o.tenant.adminEmail);
    for (let i = 0; i < 4; i++) {
      const wrong = await app.request('POST', '/v1/auth/mfa/verify', {
        body: { mfaTicket: ticket, recoveryCode: 'aaaa-bbbb-cccc-dddd' },
      });
      expect(wrong.status).toBe(401);
      expect(wrong.body.code).toBe('invalid_mfa_code');
    }
    const fifth = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: ticket, recoveryCode: 'aaaa-bbbb-cccc-dddd' },
    });
    expect(fifth.status).toBe(429);
    // The ticket is dead even for a right code.
    const late = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: ticket, recoveryCode: o.codes[0] },
    });
    expect(late.status).toBe(401);
    expect(late.body.code).toBe('invalid_token');
  });

  it('is taken only at sign-in, instead of (not with) a TOTP code: 400 validation_failed otherwise', async () => {
    const o = await mfaOwner();
    const inSession = await app.request('POST', '/v1/auth/mfa/verify', {
      headers: o.headers,
      body: { recoveryCode: o.codes[0] },
    });
    expect(inSession.status).toBe(400);
    const both = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: 'x', code: '123456', recoveryCode: o.codes[0] },
    });
    expect(both.status).toBe(400);
    expect(both.body.code).toBe('validation_failed');
  });

  it('regenerating with a TOTP code or the password gives ten new codes and the old ones stop working', async () => {
    const o = await mfaOwner();
    const wrongPassword = await app.request('POST', '/v1/auth/mfa/recovery-codes', {
      headers: o.headers,
      body: { password: 'not my password' },
    });
    expect(wrongPassword.status).toBe(401);
    expect(wrongPassword.body.code).toBe('invalid_credentials');
    const byCode = await app.request('POST', '/v1/auth/mfa/recovery-codes', {
      headers: o.headers,
      body: { code: await totp(o.secret, app.clock.now()) },
    });
    expect(byCode.status, byCode.text).toBe(200);
    expect(byCode.body.codes).toHaveLength(10);
    const byPassword = await app.request('POST', '/v1/auth/mfa/recovery-codes', {
      headers: o.headers,
      body: { password: PASSWORD },
    });
    expect(byPassword.status, byPassword.text).toBe(200);
    const newest = byPassword.body.codes as string[];
    expect(newest.some((c) => o.codes.includes(c) || byCode.body.codes.includes(c))).toBe(false);
    expect(await app.deps.db.prisma.mfaRecoveryCode.count({ where: { tenantId: o.tenant.tenantId } })).toBe(
      10,
    );

    for (const old of [o.codes[0], byCode.body.codes[0]]) {
      const res = await app.request('POST', '/v1/auth/mfa/verify', {
        body: { mfaTicket: await ticketOf(o.tenant.adminEmail), recoveryCode: old },
      });
      expect(res.status).toBe(401);
    }
    const fresh = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: await ticketOf(o.tenant.adminEmail), recoveryCode: newest[9] },
    });
    expect(fresh.status, fresh.text).toBe(200);
    const generated = await app.deps.db.prisma.auditLog.count({
      where: { tenantId: o.tenant.tenantId, action: 'auth.mfa.recovery_codes_generated' },
    });
    expect(generated).toBe(3);
  });

  it('regenerating without MFA is 409 conflict; turning MFA off deletes the codes', async () => {
    const a = await adminOf(app);
    const none = await app.request('POST', '/v1/auth/mfa/recovery-codes', {
      headers: a.headers,
      body: { password: PASSWORD },
    });
    expect(none.status).toBe(409);
    const o = await mfaOwner();
    const off = await app.request('DELETE', '/v1/auth/mfa/disable', {
      headers: o.headers,
      body: { code: await totp(o.secret, app.clock.now()) },
    });
    expect(off.status, off.text).toBe(200);
    expect(await app.deps.db.prisma.mfaRecoveryCode.count({ where: { tenantId: o.tenant.tenantId } })).toBe(
      0,
    );
  });
});

describe('password reset by e-mail', () => {
  /** Asks for a link for `email` and answers the token from the mail. */
  async function mailedToken(email: string, language?: 'en' | 'pt-BR') {
    const res = await app.request('POST', '/v1/auth/password/forgot', {
      body: { email, ...(language ? { language } : {}) },
    });
    expect(res.status, res.text).toBe(202);
    const mail = await waitForMail(app.smtp, email, /reset-password\?token=/);
    const link = /https:\/\/portico\.example\.com\/console#\/reset-password\?token=(\S+)/.exec(mail);
    expect(link, mail).not.toBeNull();
    return { token: decodeURIComponent(link![1]!), mail };
  }

  it('answers 202 with the same body for a known and an unknown address; only the known one gets a mail', async () => {
    const tenant = await newTenant(app);
    const unknown = `nobody-${Date.now()}@example.com`;
    const a = await app.request('POST', '/v1/auth/password/forgot', { body: { email: unknown } });
    const b = await app.request('POST', '/v1/auth/password/forgot', { body: { email: tenant.adminEmail } });
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(a.body).toEqual(b.body);
    expect(a.body.message).toMatch(/30 minutes/);
    await waitForMail(app.smtp, tenant.adminEmail, /reset-password\?token=/);
    await jobsDone();
    expect(mailsTo(unknown)).toHaveLength(0);
    expect(
      await app.deps.db.prisma.passwordReset.count({ where: { tenantId: tenant.tenantId, origin: 'user' } }),
    ).toBe(1);
  });

  it('sets the password once with the mailed link, ends every session, lifts a lockout and mails a confirmation', async () => {
    const tenant = await newTenant(app);
    const email = tenant.adminEmail;
    const session = await login(app, email);
    await app.deps.db.prisma.user.update({
      where: { email },
      data: { lockedUntil: new Date(app.clock.now().getTime() + 600_000) },
    });
    const { token, mail } = await mailedToken(email);
    expect(mail).toContain('Reset your Portico password');
    expect(mail).toContain('30 minutes');
    // Only the hash is stored.
    const row = await app.deps.db.prisma.passwordReset.findFirstOrThrow({
      where: { tenantId: tenant.tenantId },
    });
    expect(row.tokenHash).toBe(hashToken(token));
    expect(JSON.stringify(row)).not.toContain(token);

    const short = await app.request('POST', '/v1/auth/password/reset', {
      body: { token, password: 'too short' },
    });
    expect(short.status).toBe(400);
    expect(short.body.code).toBe('validation_failed');

    const res = await app.request('POST', '/v1/auth/password/reset', {
      body: { token, password: NEW_PASSWORD },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ passwordChanged: true, endedSessions: 1 });

    // The old session is over: its access token and its refresh cookie.
    expect((await app.request('GET', '/v1/auth/me', { headers: bearer(session.token) })).status).toBe(401);
    const refresh = await app.request('POST', '/v1/auth/refresh', {
      headers: { cookie: `portico_refresh=${session.refresh}` },
    });
    expect(refresh.status).toBe(401);
    // The old password no longer works, the new one does (the lockout is gone).
    expect((await login(app, email)).res.status).toBe(401);
    expect((await login(app, email, NEW_PASSWORD)).res.status).toBe(200);

    const again = await app.request('POST', '/v1/auth/password/reset', {
      body: { token, password: 'yet another long passphrase' },
    });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('invalid_reset_token');

    const confirmation = await waitForMail(
      app.smtp,
      email,
      /password of your Portico console account was just changed/,
    );
    expect(confirmation).not.toContain(NEW_PASSWORD);
    const audit = await app.deps.db.prisma.auditLog.findFirstOrThrow({
      where: { tenantId: tenant.tenantId, action: 'auth.password.reset' },
    });
    expect(audit.metadata).toEqual({ origin: 'user', endedSessions: 1 });
    expect(
      await app.deps.db.prisma.auditLog.count({
        where: { tenantId: tenant.tenantId, action: 'auth.password.reset_requested' },
      }),
    ).toBe(1);
  });

  it('refuses a link older than 30 minutes on the app’s clock (400 invalid_reset_token); a newer link replaces nothing until used', async () => {
    const tenant = await newTenant(app);
    const { token } = await mailedToken(tenant.adminEmail);
    app.clock.advance(30 * 60_000 + 1000);
    const res = await app.request('POST', '/v1/auth/password/reset', {
      body: { token, password: NEW_PASSWORD },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_reset_token');
    expect((await login(app, tenant.adminEmail)).res.status).toBe(200);
  });

  it('writes the link mail in the language asked for (pt-BR)', async () => {
    const tenant = await newTenant(app);
    const { mail } = await mailedToken(tenant.adminEmail, 'pt-BR');
    expect(mail).toContain('Redefina sua senha do Portico');
    expect(mail).toContain('30 minutos');
    // No English word in the text (the link's path aside).
    const text = mail
      .split(/\r?\n\r?\n/)
      .slice(1)
      .join('\n')
      .replace(/https:\/\/\S+/g, '');
    expect(text).toContain('Escolha uma nova senha');
    expect(text).not.toMatch(/\b(the|your|password|minutes|ask)\b/i);
  });

  it('keeps MFA: after a reset the sign-in still asks for a code', async () => {
    const o = await mfaOwner();
    const { token } = await mailedToken(o.tenant.adminEmail);
    const res = await app.request('POST', '/v1/auth/password/reset', {
      body: { token, password: NEW_PASSWORD },
    });
    expect(res.status, res.text).toBe(200);
    const next = await app.request('POST', '/v1/auth/login', {
      body: { email: o.tenant.adminEmail, password: NEW_PASSWORD },
    });
    expect(next.body.mfaRequired).toBe(true);
  });

  it('limits links to 5 an hour per address, known or not alike, and 20 an hour per client address (429 rate_limited)', async () => {
    // A fresh hour: the windows of the tests above are over.
    app.clock.advance(3_600_000);
    const tenant = await newTenant(app);
    const unknown = `ghost-${Date.now()}@example.com`;
    for (const email of [tenant.adminEmail, unknown]) {
      for (let i = 0; i < 5; i++) {
        const ok = await app.request('POST', '/v1/auth/password/forgot', { body: { email } });
        expect(ok.status, `${email} #${i + 1}`).toBe(202);
      }
      const sixth = await app.request('POST', '/v1/auth/password/forgot', { body: { email } });
      expect(sixth.status).toBe(429);
      expect(sixth.body.code).toBe('rate_limited');
      expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // 12 counted so far from this client address; 8 more pass, the 21st does not.
    for (let i = 0; i < 8; i++) {
      const res = await app.request('POST', '/v1/auth/password/forgot', {
        body: { email: `x${i}@example.com` },
      });
      expect(res.status, `#${i}`).toBe(202);
    }
    const over = await app.request('POST', '/v1/auth/password/forgot', { body: { email: 'y@example.com' } });
    expect(over.status).toBe(429);
    app.clock.advance(3_600_000);
    await jobsDone();
  });
});

describe('tenant setting requireMfaForAdmins', () => {
  it('is refused (409) to a user whose own MFA is off, and accepted from one with MFA on', async () => {
    const a = await adminOf(app);
    const refused = await app.request('PATCH', `/v1/tenants/${a.tenant.tenantId}/settings`, {
      headers: a.headers,
      body: { requireMfaForAdmins: true },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('conflict');
    const o = await mfaOwner();
    const on = await app.request('PATCH', `/v1/tenants/${o.tenant.tenantId}/settings`, {
      headers: o.headers,
      body: { requireMfaForAdmins: true },
    });
    expect(on.status, on.text).toBe(200);
    expect(on.body.requireMfaForAdmins).toBe(true);
  });

  it('holds an admin without MFA at the setup (403 mfa_setup_required elsewhere) until MFA is on; operators are not held', async () => {
    const o = await mfaOwner();
    const tenantId = o.tenant.tenantId;
    expect(
      (
        await app.request('PATCH', `/v1/tenants/${tenantId}/settings`, {
          headers: o.headers,
          body: { requireMfaForAdmins: true },
        })
      ).status,
    ).toBe(200);
    const adminEmail = `admin-${Date.now()}@example.com`;
    const operatorEmail = `operator-${Date.now()}@example.com`;
    for (const [email, role] of [
      [adminEmail, 'admin'],
      [operatorEmail, 'operator'],
    ] as const) {
      await app.deps.db.prisma.user.create({
        data: { id: newId(), tenantId, email, passwordHash: await hashPassword(PASSWORD), role },
      });
    }

    const signedIn = await login(app, adminEmail);
    expect(signedIn.res.status).toBe(200);
    expect(signedIn.res.body.user.mfaSetupRequired).toBe(true);
    const headers = bearer(signedIn.token);
    const held = await app.request('GET', '/v1/persons', { headers });
    expect(held.status).toBe(403);
    expect(held.body.code).toBe('mfa_setup_required');
    expect((await app.request('GET', `/v1/tenants/${tenantId}/settings`, { headers })).status).toBe(403);
    const me = await app.request('GET', '/v1/auth/me', { headers });
    expect(me.status).toBe(200);
    expect(me.body.mfaSetupRequired).toBe(true);

    const setup = await app.request('POST', '/v1/auth/mfa/setup', { headers });
    expect(setup.status, setup.text).toBe(200);
    const enable = await app.request('POST', '/v1/auth/mfa/enable', {
      headers,
      body: { code: await totp(setup.body.secret, app.clock.now()) },
    });
    expect(enable.status, enable.text).toBe(200);
    expect(enable.body.recoveryCodes.codes).toHaveLength(10);
    // The same session may now do everything.
    expect((await app.request('GET', '/v1/persons', { headers })).status).toBe(200);
    expect((await app.request('GET', '/v1/auth/me', { headers })).body.mfaSetupRequired).toBe(false);

    const operator = await login(app, operatorEmail);
    expect(operator.res.body.user.mfaSetupRequired).toBe(false);
    expect((await app.request('GET', '/v1/persons', { headers: bearer(operator.token) })).status).toBe(200);

    // Turned off again: an admin without MFA is no longer held.
    await app.request('PATCH', `/v1/tenants/${tenantId}/settings`, {
      headers: o.headers,
      body: { requireMfaForAdmins: false },
    });
    const other = `admin2-${Date.now()}@example.com`;
    await app.deps.db.prisma.user.create({
      data: {
        id: newId(),
        tenantId,
        email: other,
        passwordHash: await hashPassword(PASSWORD),
        role: 'admin',
      },
    });
    const free = await login(app, other);
    expect(free.res.body.user.mfaSetupRequired).toBe(false);
    expect((await app.request('GET', '/v1/persons', { headers: bearer(free.token) })).status).toBe(200);
  });

  it('is documented in the OpenAPI: the setting, the 403 on admin routes, the routes open during the setup', async () => {
    const doc = (await app.request('GET', '/docs-json')).body;
    expect(doc.components.schemas.TenantSettings.properties.requireMfaForAdmins.description).toMatch(
      /mfa_setup_required/,
    );
    const persons403 = JSON.stringify(doc.paths['/v1/persons'].get.responses['403']);
    expect(persons403).toContain('mfa_setup_required');
    const me403 = JSON.stringify(doc.paths['/v1/auth/me'].get.responses['403'] ?? {});
    expect(me403).not.toContain('mfa_setup_required');
    expect(doc.paths['/v1/auth/password/forgot'].post.responses['202']).toBeDefined();
    expect(doc.paths['/v1/auth/password/reset'].post.responses['400']).toBeDefined();
  });
});
