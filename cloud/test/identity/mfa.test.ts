// Contract 4.1 and 5 rule 2: TOTP setup, enable, verify (second login step), disable; replay and brute force.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminOf,
  bearer,
  login,
  refreshCookieOf,
  startApp,
  totp,
  type IdentityApp,
} from '../support/identity.js';

const STEP = 30_000;

describe('MFA (TOTP)', () => {
  let app: IdentityApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.close());

  /** An owner with MFA enabled; the clock is moved past the step used to enable it. */
  async function mfaAdmin() {
    const a = await adminOf(app);
    const setup = await app.request('POST', '/v1/auth/mfa/setup', { headers: a.headers });
    const secret = setup.body.secret as string;
    const enable = await app.request('POST', '/v1/auth/mfa/enable', {
      headers: a.headers,
      body: { code: await totp(secret, app.clock.now()) },
    });
    expect(enable.status, enable.text).toBe(200);
    app.clock.advance(STEP);
    return { ...a, secret };
  }

  it('setup answers a base32 secret, its otpauth:// URI and a PNG QR code, and stores the secret encrypted', async () => {
    const a = await adminOf(app);
    const res = await app.request('POST', '/v1/auth/mfa/setup', { headers: a.headers });
    expect(res.status, res.text).toBe(200);
    expect(res.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(res.body.otpauthUri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(uri.searchParams.get('secret')).toBe(res.body.secret);
    expect(uri.searchParams.get('issuer')).toBe('Portico');
    expect(decodeURIComponent(uri.pathname)).toContain(a.tenant.adminEmail);
    expect(res.body.qrCodeDataUrl).toMatch(/^data:image\/png;base64,/);
    const png = Buffer.from(res.body.qrCodeDataUrl.split(',')[1], 'base64');
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    const user = await app.deps.db.prisma.user.findUniqueOrThrow({ where: { email: a.tenant.adminEmail } });
    expect(user.mfaEnabled).toBe(false);
    expect(user.mfaSecretEnc).not.toBeNull();
    expect(Buffer.from(user.mfaSecretEnc!).toString('latin1')).not.toContain(res.body.secret);
  });

  it('enable refuses a wrong code (401 invalid_mfa_code) and turns MFA on with a right one', async () => {
    const a = await adminOf(app);
    const { body } = await app.request('POST', '/v1/auth/mfa/setup', { headers: a.headers });
    const wrong = await app.request('POST', '/v1/auth/mfa/enable', {
      headers: a.headers,
      body: { code: '000000' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('invalid_mfa_code');
    const ok = await app.request('POST', '/v1/auth/mfa/enable', {
      headers: a.headers,
      body: { code: await totp(body.secret, app.clock.now()) },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ mfaEnabled: true, endedSessions: 0 });
    expect(ok.body.recoveryCodes.codes).toHaveLength(10);
    const me = await app.request('GET', '/v1/auth/me', { headers: a.headers });
    expect(me.body.mfaEnabled).toBe(true);
    const again = await app.request('POST', '/v1/auth/mfa/setup', { headers: a.headers });
    expect(again.status).toBe(409);
  });

  it('enable without a setup is 409 conflict; a malformed code is 400', async () => {
    const a = await adminOf(app);
    const res = await app.request('POST', '/v1/auth/mfa/enable', {
      headers: a.headers,
      body: { code: '123456' },
    });
    expect(res.status).toBe(409);
    const bad = await app.request('POST', '/v1/auth/mfa/enable', {
      headers: a.headers,
      body: { code: '12345x' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
  });

  it('with MFA on, login answers a ticket and no token or cookie; verify with the ticket and a code issues the session', async () => {
    const a = await mfaAdmin();
    const { res } = await login(app, a.tenant.adminEmail);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      mfaRequired: true,
      mfaTicket: expect.stringMatching(/^mfa_/),
      expiresIn: 300,
    });
    expect(res.headers.get('set-cookie')).toBeNull();
    const verify = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: res.body.mfaTicket, code: await totp(a.secret, app.clock.now()) },
    });
    expect(verify.status, verify.text).toBe(200);
    expect(verify.body).toMatchObject({ tokenType: 'Bearer', expiresIn: 900, user: { mfaEnabled: true } });
    expect(refreshCookieOf(verify)).toMatch(/^rt_/);
    const me = await app.request('GET', '/v1/auth/me', { headers: bearer(verify.body.accessToken) });
    expect(me.status).toBe(200);
    const audits = await app.deps.db.prisma.auditLog.findMany({
      where: { tenantId: a.tenant.tenantId, action: { startsWith: 'auth.' } },
      orderBy: { id: 'asc' },
    });
    expect(audits.map((r) => r.action)).toEqual(
      expect.arrayContaining([
        'auth.mfa.setup_started',
        'auth.mfa.enabled',
        'auth.login.mfa_required',
        'auth.login.succeeded',
      ]),
    );
    expect(JSON.stringify(audits)).not.toContain(a.secret);
  });

  it('a ticket is single use', async () => {
    const a = await mfaAdmin();
    const { res } = await login(app, a.tenant.adminEmail);
    const code = await totp(a.secret, app.clock.now());
    const first = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: res.body.mfaTicket, code },
    });
    expect(first.status).toBe(200);
    app.clock.advance(STEP);
    const second = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: res.body.mfaTicket, code: await totp(a.secret, app.clock.now()) },
    });
    expect(second.status).toBe(401);
    expect(second.body.code).toBe('invalid_token');
  });

  it('a ticket expires after 5 minutes', async () => {
    const a = await mfaAdmin();
    const { res } = await login(app, a.tenant.adminEmail);
    app.clock.advance(301_000);
    const late = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: res.body.mfaTicket, code: await totp(a.secret, app.clock.now()) },
    });
    expect(late.status).toBe(401);
    expect(late.body.code).toBe('invalid_token');
  });

  it('refuses a replayed code within its window (401 invalid_mfa_code), also an older code of the window', async () => {
    const a = await mfaAdmin();
    const code = await totp(a.secret, app.clock.now());
    const t1 = (await login(app, a.tenant.adminEmail)).res.body.mfaTicket;
    expect((await app.request('POST', '/v1/auth/mfa/verify', { body: { mfaTicket: t1, code } })).status).toBe(
      200,
    );
    const t2 = (await login(app, a.tenant.adminEmail)).res.body.mfaTicket;
    const replay = await app.request('POST', '/v1/auth/mfa/verify', { body: { mfaTicket: t2, code } });
    expect(replay.status).toBe(401);
    expect(replay.body).toMatchObject({
      code: 'invalid_mfa_code',
      detail: expect.stringContaining('already used'),
    });
    // One step later the previous code is still inside the drift window, but older than the last used step.
    app.clock.advance(STEP);
    const previous = await app.request('POST', '/v1/auth/mfa/verify', { body: { mfaTicket: t2, code } });
    expect(previous.status).toBe(401);
    const fresh = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: t2, code: await totp(a.secret, app.clock.now()) },
    });
    expect(fresh.status).toBe(200);
  });

  it('accepts one step of clock drift and refuses two', async () => {
    const a = await mfaAdmin();
    const ticket = (await login(app, a.tenant.adminEmail)).res.body.mfaTicket;
    const twoAhead = await totp(a.secret, new Date(app.clock.now().getTime() + 2 * STEP));
    expect(
      (await app.request('POST', '/v1/auth/mfa/verify', { body: { mfaTicket: ticket, code: twoAhead } }))
        .status,
    ).toBe(401);
    const oneAhead = await totp(a.secret, new Date(app.clock.now().getTime() + STEP));
    expect(
      (await app.request('POST', '/v1/auth/mfa/verify', { body: { mfaTicket: ticket, code: oneAhead } }))
        .status,
    ).toBe(200);
  });

  it('kills a ticket after 5 wrong codes with 429 rate_limited and Retry-After, even for a right code afterwards', async () => {
    const a = await mfaAdmin();
    const ticket = (await login(app, a.tenant.adminEmail)).res.body.mfaTicket;
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 5; i++) {
      last = await app.request('POST', '/v1/auth/mfa/verify', {
        body: { mfaTicket: ticket, code: '000000' },
      });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    expect(last!.body.code).toBe('rate_limited');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    const right = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: ticket, code: await totp(a.secret, app.clock.now()) },
    });
    expect(right.status).toBe(401);
    expect(right.body.code).toBe('invalid_token');
    const failures = await app.deps.db.prisma.auditLog.count({
      where: { tenantId: a.tenant.tenantId, action: 'auth.mfa.verify_failed' },
    });
    expect(failures).toBe(5);
  });

  it('limits wrong codes per user across tickets: 10 in 15 minutes, then 429 until the window ends', async () => {
    const a = await mfaAdmin();
    for (let t = 0; t < 2; t++) {
      const ticket = (await login(app, a.tenant.adminEmail)).res.body.mfaTicket;
      for (let i = 0; i < 5; i++)
        await app.request('POST', '/v1/auth/mfa/verify', { body: { mfaTicket: ticket, code: '000000' } });
    }
    const ticket = (await login(app, a.tenant.adminEmail)).res.body.mfaTicket;
    const blocked = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: ticket, code: await totp(a.secret, app.clock.now()) },
    });
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe('rate_limited');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    app.clock.advance(15 * 60_000);
    const later = (await login(app, a.tenant.adminEmail)).res.body.mfaTicket;
    const ok = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: later, code: await totp(a.secret, app.clock.now()) },
    });
    expect(ok.status).toBe(200);
  });

  it('verify without a ticket re-checks a code inside a session; without a session it is 400', async () => {
    const a = await mfaAdmin();
    const ticket = (await login(app, a.tenant.adminEmail)).res.body.mfaTicket;
    const session = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: ticket, code: await totp(a.secret, app.clock.now()) },
    });
    app.clock.advance(STEP);
    const headers = bearer(session.body.accessToken);
    const check = await app.request('POST', '/v1/auth/mfa/verify', {
      headers,
      body: { code: await totp(a.secret, app.clock.now()) },
    });
    expect(check.status, check.text).toBe(200);
    expect(check.body).toEqual({ verified: true, verifiedAt: app.clock.now().toISOString() });
    const wrong = await app.request('POST', '/v1/auth/mfa/verify', { headers, body: { code: '000000' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('invalid_mfa_code');
    const anonymous = await app.request('POST', '/v1/auth/mfa/verify', { body: { code: '123456' } });
    expect(anonymous.status).toBe(400);
    expect(anonymous.body.errors).toEqual([expect.objectContaining({ path: 'body.mfaTicket' })]);
  });

  it('disable needs a valid, unused code; then login issues tokens directly again', async () => {
    const a = await mfaAdmin();
    const ticket = (await login(app, a.tenant.adminEmail)).res.body.mfaTicket;
    const code = await totp(a.secret, app.clock.now());
    const session = await app.request('POST', '/v1/auth/mfa/verify', { body: { mfaTicket: ticket, code } });
    const headers = bearer(session.body.accessToken);
    const wrong = await app.request('DELETE', '/v1/auth/mfa/disable', { headers, body: { code: '000000' } });
    expect(wrong.status).toBe(401);
    const replayed = await app.request('DELETE', '/v1/auth/mfa/disable', { headers, body: { code } });
    expect(replayed.status).toBe(401);
    app.clock.advance(STEP);
    const ok = await app.request('DELETE', '/v1/auth/mfa/disable', {
      headers,
      body: { code: await totp(a.secret, app.clock.now()) },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ mfaEnabled: false });
    const user = await app.deps.db.prisma.user.findUniqueOrThrow({ where: { email: a.tenant.adminEmail } });
    expect(user.mfaSecretEnc).toBeNull();
    const direct = await login(app, a.tenant.adminEmail);
    expect(direct.res.body.accessToken).toBeTruthy();
    const audit = await app.deps.db.prisma.auditLog.count({
      where: { tenantId: a.tenant.tenantId, action: 'auth.mfa.disabled' },
    });
    expect(audit).toBe(1);
    const again = await app.request('DELETE', '/v1/auth/mfa/disable', { headers, body: { code: '123456' } });
    expect(again.status).toBe(409);
  });
});
