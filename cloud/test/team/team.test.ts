// The tenant's team over HTTP (issue 26): list, invite by e-mail (the mail read from a real SMTP server,
// its link accepted), change role, deactivate, reactivate, resend; owner and admin only, audited, one
// tenant never reaching another's users. PGlite by default, PostgreSQL with TEST_DATABASE_URL.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC_URL, waitForMail } from '../portal/support.js';
import {
  adminOf,
  bearer,
  loggedInUser,
  login,
  refreshCookieOf,
  startApp,
  type IdentityApp,
} from '../support/identity.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp.js';

const DAY = 24 * 3_600_000;
const NEW_PASSWORD = 'a brand new passphrase';
let app: IdentityApp;
let smtp: SmtpSink;
let seq = 0;

beforeAll(async () => {
  smtp = await startSmtpSink();
  app = await startApp({ SMTP_URL: smtp.url, PUBLIC_URL });
});
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const address = (who: string) => `${who}.${Date.now().toString(36)}${seq++}@team.example.com`;

async function invite(headers: Record<string, string>, email: string, role: string, extra = {}) {
  return app.request('POST', '/v1/team/members', { headers, body: { email, role, ...extra } });
}

/** The token of the newest invitation mail to `email`, and the mail's text. */
async function mailedToken(email: string) {
  const mail = await waitForMail(smtp, email, /accept-invite\?token=/);
  const token = /#\/accept-invite\?token=(inv_[A-Za-z0-9_-]+)/.exec(mail)![1]!;
  return { token, mail };
}

async function accept(token: string, name = 'Rita Alves', password = NEW_PASSWORD) {
  return app.request('POST', '/v1/team/invitations/accept', { body: { token, name, password } });
}

/** Invites `role` and accepts the link: the new member's id and bearer headers. */
async function member(headers: Record<string, string>, role: 'owner' | 'admin' | 'operator') {
  const email = address(role);
  const invited = await invite(headers, email, role);
  expect(invited.status, invited.text).toBe(201);
  const accepted = await accept((await mailedToken(email)).token);
  expect(accepted.status, accepted.text).toBe(200);
  return {
    id: invited.body.id as string,
    email,
    headers: bearer(accepted.body.accessToken as string),
    refresh: refreshCookieOf(accepted),
  };
}

const audits = (tenantId: string, action: string) =>
  app.deps.db.prisma.auditLog.findMany({ where: { tenantId, action }, orderBy: { createdAt: 'asc' } });

describe('team: listing and inviting', () => {
  it('lists the owner with role, status, MFA and last sign-in', async () => {
    const { tenant, headers } = await adminOf(app);
    const res = await app.request('GET', '/v1/team/members', { headers });
    expect(res.status, res.text).toBe(200);
    expect(res.body.items).toEqual([
      expect.objectContaining({
        email: tenant.adminEmail,
        role: 'owner',
        status: 'active',
        mfaEnabled: false,
        lastLoginAt: expect.any(String),
        invitation: null,
      }),
    ]);
  });

  it('invites by e-mail: the member is invited, the mail holds a single-use link valid 7 days, stored hashed, audited', async () => {
    const { tenant, headers } = await adminOf(app);
    const email = address('rita');
    const res = await invite(headers, email.toUpperCase(), 'operator', { language: 'en' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ email, role: 'operator', status: 'invited', name: null });
    expect(Date.parse(res.body.invitation.expiresAt) - app.clock.now().getTime()).toBe(7 * DAY);

    const { token, mail } = await mailedToken(email);
    expect(mail).toMatch(/^Subject: Join the Tenant \S+ team on Portico$/m);
    expect(mail).toContain(`${PUBLIC_URL}/console#/accept-invite?token=${token}`);
    expect(mail).toContain('as an operator');
    expect(mail).toContain('until Saturday, 28 November 2026 at 10:00 UTC');
    expect(mail).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);

    const rows = await app.deps.db.prisma.teamInvitation.findMany({ where: { tenantId: tenant.tenantId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(token);
    const [entry] = await audits(tenant.tenantId, 'team.member_invited');
    expect(entry).toMatchObject({ targetType: 'user', targetId: res.body.id });
    expect(JSON.stringify(entry)).not.toContain(token);
  });

  it('mails the invitation in Brazilian Portuguese, chosen or from Accept-Language, with the date in words', async () => {
    const { headers } = await adminOf(app);
    const chosen = address('joao');
    expect((await invite(headers, chosen, 'admin', { language: 'pt-BR' })).status).toBe(201);
    const { mail } = await mailedToken(chosen);
    expect(mail).toMatch(/^Subject: Convite para a equipe de Tenant \S+ no Portico$/m);
    expect(mail).toContain('como administrador(a)');
    expect(mail).toContain('até sábado, 28 de novembro de 2026 às 10:00 UTC');
    expect(mail).not.toMatch(/\d{4}-\d\d-\d\dT/);

    const browser = address('marcia');
    const res = await app.request('POST', '/v1/team/members', {
      headers: { ...headers, 'accept-language': 'pt-BR,pt;q=0.9,en;q=0.5' },
      body: { email: browser, role: 'operator' },
    });
    expect(res.status, res.text).toBe(201);
    expect((await mailedToken(browser)).mail).toContain('Convite para a equipe');
  });

  it('refuses an address already in the team with 409 already_member, and one of another tenant with 409 email_in_use', async () => {
    const a = await adminOf(app);
    const b = await adminOf(app);
    const email = address('dup');
    expect((await invite(a.headers, email, 'operator')).status).toBe(201);
    const again = await invite(a.headers, email, 'admin');
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('already_member');
    const owner = await invite(a.headers, a.tenant.adminEmail, 'operator');
    expect(owner.body.code).toBe('already_member');
    const elsewhere = await invite(b.headers, email, 'operator');
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body.code).toBe('email_in_use');
  });

  it('refuses an operator every team route with 403 forbidden', async () => {
    const { tenant, headers } = await adminOf(app);
    const operator = await loggedInUser(app, tenant.tenantId, 'operator', address('op'));
    const owner = (await app.request('GET', '/v1/team/members', { headers })).body.items[0].id as string;
    for (const [method, path, body] of [
      ['GET', '/v1/team/members', undefined],
      ['POST', '/v1/team/members', { email: address('x'), role: 'operator' }],
      ['PATCH', `/v1/team/members/${owner}`, { role: 'operator' }],
      ['POST', `/v1/team/members/${owner}/deactivate`, undefined],
    ] as const) {
      const res = await app.request(method, path, { headers: operator, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
    const anonymous = await app.request('GET', '/v1/team/members');
    expect(anonymous.status).toBe(401);
  });
});

describe('team: accepting an invitation', () => {
  it('reads the link, refuses a short password, then sets name and password and signs the member in', async () => {
    const { tenant, headers } = await adminOf(app);
    const email = address('ana');
    const invited = await invite(headers, email, 'operator');
    const { token } = await mailedToken(email);

    // Not yet a way in: an invited member has no password.
    expect((await login(app, email, NEW_PASSWORD)).res.status).toBe(401);

    const preview = await app.request('POST', '/v1/team/invitations/lookup', { body: { token } });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body).toMatchObject({
      email,
      role: 'operator',
      tenant: { name: `Tenant ${tenant.slug}` },
    });

    const short = await accept(token, 'Ana', 'short');
    expect(short.status).toBe(400);
    expect(short.body.code).toBe('validation_failed');

    const res = await accept(token, '  Ana Souza  ');
    expect(res.status, res.text).toBe(200);
    expect(res.body.user).toMatchObject({ email, name: 'Ana Souza', role: 'operator' });
    expect(refreshCookieOf(res)).toMatch(/^rt_/);
    const me = await app.request('GET', '/v1/auth/me', { headers: bearer(res.body.accessToken) });
    expect(me.body.email).toBe(email);

    const list = await app.request('GET', '/v1/team/members', { headers });
    expect(list.body.items.find((m: { id: string }) => m.id === invited.body.id)).toMatchObject({
      status: 'active',
      name: 'Ana Souza',
      invitation: null,
    });
    expect((await login(app, email, NEW_PASSWORD)).res.status).toBe(200);
    expect(await audits(tenant.tenantId, 'team.invitation_accepted')).toHaveLength(1);
  });

  it('takes a link once: a second acceptance is 404 invitation_invalid, as is an unknown token', async () => {
    const { headers } = await adminOf(app);
    const email = address('once');
    await invite(headers, email, 'operator');
    const { token } = await mailedToken(email);
    const [first, second] = await Promise.all([accept(token), accept(token)]);
    expect([first.status, second.status].sort()).toEqual([200, 404]);
    expect((first.status === 404 ? first : second).body.code).toBe('invitation_invalid');
    const unknown = await accept('inv_not-a-real-token');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('invitation_invalid');
  });

  it('refuses a link older than 7 days with 410 invitation_expired; a resend works and the old link does not', async () => {
    const { tenant, headers: first } = await adminOf(app);
    const email = address('late');
    const invited = await invite(first, email, 'admin');
    const { token: old } = await mailedToken(email);
    app.clock.advance(7 * DAY + 1);
    try {
      // The owner's access token ran out in those days: a new sign-in.
      const headers = bearer((await login(app, tenant.adminEmail)).token);
      const late = await accept(old);
      expect(late.status).toBe(410);
      expect(late.body.code).toBe('invitation_expired');
      const listed = await app.request('GET', '/v1/team/members', { headers });
      expect(listed.body.items.find((m: { id: string }) => m.id === invited.body.id).invitation.expired).toBe(
        true,
      );

      const resent = await app.request('POST', `/v1/team/members/${invited.body.id}/resend-invitation`, {
        headers,
      });
      expect(resent.status, resent.text).toBe(200);
      expect(resent.body.invitation.expired).toBe(false);
      const { token: fresh } = await mailedToken(email);
      expect(fresh).not.toBe(old);
      expect((await accept(old)).body.code).toBe('invitation_invalid');
      expect((await accept(fresh)).status).toBe(200);
    } finally {
      app.clock.advance(-(7 * DAY + 1));
    }
  });

  it('resends only to an invited member: 409 not_invited otherwise, audited when sent', async () => {
    const { tenant, headers } = await adminOf(app);
    const rita = await member(headers, 'operator');
    const res = await app.request('POST', `/v1/team/members/${rita.id}/resend-invitation`, { headers });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('not_invited');

    const email = address('resend');
    const invited = await invite(headers, email, 'operator');
    await mailedToken(email);
    const resent = await app.request('POST', `/v1/team/members/${invited.body.id}/resend-invitation`, {
      headers,
      body: { language: 'pt-BR' },
    });
    expect(resent.status, resent.text).toBe(200);
    expect((await mailedToken(email)).mail).toContain('Convite para a equipe');
    expect(await audits(tenant.tenantId, 'team.invitation_resent')).toHaveLength(1);
  });
});

describe('team: roles', () => {
  it('changes a role, ends the member’s sessions so it applies at once, and audits from and to', async () => {
    const { tenant, headers } = await adminOf(app);
    const op = await member(headers, 'operator');
    const res = await app.request('PATCH', `/v1/team/members/${op.id}`, { headers, body: { role: 'admin' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.role).toBe('admin');
    expect((await app.request('GET', '/v1/auth/me', { headers: op.headers })).status).toBe(401);
    const again = await login(app, op.email, NEW_PASSWORD);
    expect(again.res.body.user.role).toBe('admin');
    expect((await app.request('GET', '/v1/team/members', { headers: bearer(again.token) })).status).toBe(200);
    const [entry] = await audits(tenant.tenantId, 'team.role_changed');
    expect(entry!.metadata).toMatchObject({ from: 'operator', to: 'admin', endedSessions: 1 });
  });

  it('lets an admin manage operators and admins but never make or change an owner (403 owner_only)', async () => {
    const { headers } = await adminOf(app);
    const admin = await member(headers, 'admin');
    const owner = (await app.request('GET', '/v1/team/members', { headers })).body.items[0].id as string;
    const op = await member(headers, 'operator');

    const inviteOwner = await invite(admin.headers, address('boss'), 'owner');
    expect(inviteOwner.status).toBe(403);
    expect(inviteOwner.body.code).toBe('owner_only');
    for (const [method, path, body] of [
      ['PATCH', `/v1/team/members/${op.id}`, { role: 'owner' }],
      ['PATCH', `/v1/team/members/${owner}`, { role: 'admin' }],
      ['POST', `/v1/team/members/${owner}/deactivate`, undefined],
    ] as const) {
      const res = await app.request(method, path, { headers: admin.headers, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.code).toBe('owner_only');
    }
    const promote = await app.request('PATCH', `/v1/team/members/${op.id}`, {
      headers: admin.headers,
      body: { role: 'admin' },
    });
    expect(promote.status, promote.text).toBe(200);
    // An owner may invite an owner.
    expect((await invite(headers, address('co-owner'), 'owner')).status).toBe(201);
  });

  it('keeps the last active owner: demoting them is 409 last_owner; with a second owner it is allowed', async () => {
    const { tenant, headers } = await adminOf(app);
    const me = (await app.request('GET', '/v1/team/members', { headers })).body.items[0].id as string;
    const alone = await app.request('PATCH', `/v1/team/members/${me}`, { headers, body: { role: 'admin' } });
    expect(alone.status).toBe(409);
    expect(alone.body.code).toBe('last_owner');

    const second = await member(headers, 'owner');
    const demoted = await app.request('PATCH', `/v1/team/members/${second.id}`, {
      headers,
      body: { role: 'operator' },
    });
    expect(demoted.status, demoted.text).toBe(200);
    const owners = await app.deps.db.prisma.user.count({
      where: { tenantId: tenant.tenantId, role: 'owner' },
    });
    expect(owners).toBe(1);
  });

  it('leaves one owner when two owners demote each other at the same moment', async () => {
    const { tenant, headers } = await adminOf(app);
    const me = (await app.request('GET', '/v1/team/members', { headers })).body.items[0].id as string;
    const other = await member(headers, 'owner');
    const [a, b] = await Promise.all([
      app.request('PATCH', `/v1/team/members/${other.id}`, { headers, body: { role: 'admin' } }),
      app.request('PATCH', `/v1/team/members/${me}`, { headers: other.headers, body: { role: 'admin' } }),
    ]);
    const statuses = [a.status, b.status];
    // The second change either met the first's result (409) or lost its session to it (401).
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    const owners = await app.deps.db.prisma.user.count({
      where: { tenantId: tenant.tenantId, role: 'owner', status: 'active' },
    });
    expect(owners).toBe(1);
  });
});

describe('team: deactivation', () => {
  it('ends the member’s sessions, refuses their sign-in, and reactivation lets them back in; both audited', async () => {
    const { tenant, headers } = await adminOf(app);
    const op = await member(headers, 'operator');
    const res = await app.request('POST', `/v1/team/members/${op.id}/deactivate`, { headers });
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe('deactivated');

    expect((await app.request('GET', '/v1/auth/me', { headers: op.headers })).status).toBe(401);
    const refresh = await app.request('POST', '/v1/auth/refresh', {
      headers: { cookie: `portico_refresh=${op.refresh}` },
    });
    expect(refresh.status).toBe(401);
    const refused = await login(app, op.email, NEW_PASSWORD);
    expect(refused.res.status).toBe(401);
    expect(refused.res.body.code).toBe('invalid_credentials');

    const twice = await app.request('POST', `/v1/team/members/${op.id}/deactivate`, { headers });
    expect(twice.status).toBe(200);
    const back = await app.request('POST', `/v1/team/members/${op.id}/reactivate`, { headers });
    expect(back.status, back.text).toBe(200);
    expect(back.body.status).toBe('active');
    expect((await login(app, op.email, NEW_PASSWORD)).res.status).toBe(200);

    expect(await audits(tenant.tenantId, 'team.member_deactivated')).toHaveLength(1);
    expect(await audits(tenant.tenantId, 'team.member_reactivated')).toHaveLength(1);
  });

  it('refuses to deactivate oneself with 409 cannot_deactivate_self', async () => {
    const { headers } = await adminOf(app);
    const admin = await member(headers, 'admin');
    const res = await app.request('POST', `/v1/team/members/${admin.id}/deactivate`, {
      headers: admin.headers,
    });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('cannot_deactivate_self');
  });

  it('withdraws a pending invitation: its link stops working; reactivated it is invited again', async () => {
    const { headers } = await adminOf(app);
    const email = address('withdrawn');
    const invited = await invite(headers, email, 'operator');
    const { token } = await mailedToken(email);
    const off = await app.request('POST', `/v1/team/members/${invited.body.id}/deactivate`, { headers });
    expect(off.body.status).toBe('deactivated');
    expect((await accept(token)).body.code).toBe('invitation_invalid');
    const back = await app.request('POST', `/v1/team/members/${invited.body.id}/reactivate`, { headers });
    expect(back.body).toMatchObject({ status: 'invited', invitation: null });
  });
});

describe('team: tenant isolation', () => {
  it('answers 404 not_found for another tenant’s user on every member route', async () => {
    const a = await adminOf(app);
    const b = await adminOf(app);
    const theirs = await member(b.headers, 'operator');
    for (const [method, path, body] of [
      ['PATCH', `/v1/team/members/${theirs.id}`, { role: 'admin' }],
      ['POST', `/v1/team/members/${theirs.id}/deactivate`, undefined],
      ['POST', `/v1/team/members/${theirs.id}/reactivate`, undefined],
      ['POST', `/v1/team/members/${theirs.id}/resend-invitation`, undefined],
    ] as const) {
      const res = await app.request(method, path, { headers: a.headers, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    const listed = await app.request('GET', '/v1/team/members', { headers: a.headers });
    expect(listed.body.items.map((m: { email: string }) => m.email)).not.toContain(theirs.email);
    expect((await app.request('GET', '/v1/auth/me', { headers: theirs.headers })).status).toBe(200);
  });
});
