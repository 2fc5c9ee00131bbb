// Public self-registration by tenant setting (issue 23): off by default for new tenants, by guest
// invitation only, or open with the e-mail address verified first (the enrollment link is mailed).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPortalApp, waitForMail, type PortalApp } from '../portal/support.js';
import { integratorOf, registerInvited } from './support.js';

let app: PortalApp;
beforeAll(async () => {
  app = await startPortalApp();
});
afterAll(() => app?.close());

const register = (tenantSlug: string, body: Record<string, unknown>) =>
  app.request('POST', '/v1/public/onboarding/register', { body: { tenantSlug, ...body } });
const slugOf = async (tenantId: string) =>
  (await app.deps.db.prisma.tenant.findUniqueOrThrow({ where: { id: tenantId } })).slug;
const setMode = async (org: Awaited<ReturnType<typeof integratorOf>>, mode: string) => {
  const res = await app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
    headers: org.keyHeaders,
    body: { selfRegistration: mode },
  });
  expect(res.status, res.text).toBe(200);
};

describe('self-registration', () => {
  it('is off for a new tenant: 403 self_registration_off and nothing created', async () => {
    const org = await integratorOf(app);
    const settings = await app.request('GET', `/v1/tenants/${org.tenantId}/settings`, {
      headers: org.keyHeaders,
    });
    expect(settings.body.selfRegistration).toBe('off');
    const res = await register(await slugOf(org.tenantId), {
      name: 'Walk In',
      document: 'W-1',
      email: 'walk.in@example.com',
    });
    expect(res.status, res.text).toBe(403);
    expect(res.body.code).toBe('self_registration_off');
    expect(await app.deps.db.prisma.person.count({ where: { tenantId: org.tenantId } })).toBe(0);
  });

  it('by invitation: only with a guest invitation of the tenant, for its address, once; the person is linked to the guest', async () => {
    const org = await integratorOf(app);
    const person = { name: 'Invited Guest', document: 'I-1', email: 'invited@example.com' };
    const ok = await registerInvited(app, org, person);
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.enrollment_token).toMatch(/^et_/);
    const guest = await app.deps.db.prisma.guest.findFirstOrThrow({ where: { email: person.email } });
    expect(guest.personId).toBe(ok.body.personId);

    const slug = await slugOf(org.tenantId);
    const bare = await register(slug, { ...person, document: 'I-2' });
    expect(bare.status).toBe(403);
    expect(bare.body.code).toBe('invitation_required');
    const event = await app.deps.db.prisma.event.findUniqueOrThrow({ where: { id: guest.eventId } });
    const invitation = { eventToken: event.publicToken, guestToken: guest.guestToken };
    const again = await register(slug, { ...person, document: 'I-3', invitation });
    expect(again.status).toBe(409);
    const forged = await register(slug, {
      ...person,
      document: 'I-4',
      invitation: { ...invitation, guestToken: 'gt_not_a_real_guest_token' },
    });
    expect(forged.status).toBe(404);
    const other = await integratorOf(app);
    const elsewhere = await registerInvited(app, other, { ...person, document: 'I-5' });
    expect(elsewhere.status).toBe(201);
    // Another tenant's invitation does not open this one, nor an invitation for another address.
    const foreign = await register(slug, {
      ...person,
      document: 'I-6',
      invitation: { eventToken: event.publicToken, guestToken: 'x'.repeat(20) },
    });
    expect(foreign.status).toBe(404);
    const g2 = await app.request('POST', `/v1/events/${event.id}/guests`, {
      headers: org.keyHeaders,
      body: { name: 'Somebody Else', email: 'somebody@example.com' },
    });
    const wrongAddress = await register(slug, {
      ...person,
      document: 'I-7',
      invitation: { eventToken: event.publicToken, guestToken: g2.body.guestToken },
    });
    expect(wrongAddress.status).toBe(403);
    expect(await app.deps.db.prisma.person.count({ where: { tenantId: org.tenantId } })).toBe(1);
  });

  it('open with the address verified: 202 without a token; the enrollment link goes to the address and works', async () => {
    const org = await integratorOf(app);
    await setMode(org, 'open_verified');
    const email = 'open.reg@example.com';
    const res = await register(await slugOf(org.tenantId), { name: 'Open Reg', document: 'O-1', email });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({ status: 'verification_sent', expiresAt: expect.any(String) });
    expect(res.text).not.toMatch(/et_/);
    const mail = await waitForMail(app.smtp, email, /\/enroll\?token=/);
    const token = /\/enroll\?token=(et_[A-Za-z0-9_-]+)/.exec(mail)![1]!;
    const verify = await app.request('POST', '/v1/public/onboarding/verify-token', {
      body: { enrollment_token: token },
    });
    expect(verify.status, verify.text).toBe(200);
    const person = await app.deps.db.prisma.person.findUniqueOrThrow({ where: { id: verify.body.personId } });
    expect(person).toMatchObject({ tenantId: org.tenantId, email });
  });

  it('moves tenants that existed before the setting to open_verified, keeping a mode already chosen', async () => {
    const before = await integratorOf(app);
    const chosen = await integratorOf(app);
    await app.deps.db.prisma.tenant.update({ where: { id: before.tenantId }, data: { settings: {} } });
    await setMode(chosen, 'invitation');
    const sql = await readFile(
      path.resolve(__dirname, '../../prisma/migrations/20261126101000_self_registration/migration.sql'),
      'utf8',
    );
    await app.deps.db.prisma.$executeRawUnsafe(sql);
    const modes = await Promise.all(
      [before, chosen].map(
        async (o) =>
          (await app.request('GET', `/v1/tenants/${o.tenantId}/settings`, { headers: o.keyHeaders })).body
            .selfRegistration,
      ),
    );
    expect(modes).toEqual(['open_verified', 'invitation']);
  });
});
