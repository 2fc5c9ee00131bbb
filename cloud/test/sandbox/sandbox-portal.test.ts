// The person portal is live only: a sandbox person with a real person's address is never linked to
// their portal account (not shown, not exported), yet their deletion request erases it too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../support/identity.js';
import { signIn, startPortalApp, tenantWithPerson, waitForMail, type PortalApp } from '../portal/support.js';

const person = { name: 'Zulmira Quintanilha', document: 'ZQ-918273', email: 'zulmira.sandbox@example.com' };

describe('the person portal and the sandbox', () => {
  let app: PortalApp;
  let org: Awaited<ReturnType<typeof tenantWithPerson>>;
  let sandboxPersonId: string;

  beforeAll(async () => {
    app = await startPortalApp({ DELETION_GRACE_HOURS: '0' });
    org = await tenantWithPerson(app, person);
    const created = await app.request('POST', '/v1/applications', {
      headers: org.headers,
      body: { name: 'CI', environment: 'sandbox' },
    });
    const testKey = bearer(created.body.apiKey.key);
    const res = await app.request('POST', '/v1/persons', { headers: testKey, body: person });
    expect(res.status, res.text).toBe(201);
    sandboxPersonId = res.body.id;
  }, 60_000);
  afterAll(() => app?.close());

  it('shows only the live tenant’s person in the portal, and its deletion request erases the sandbox’s too', async () => {
    const { headers } = await signIn(app, person.email);
    const me = await app.request('GET', '/v1/me', { headers });
    expect(me.status, me.text).toBe(200);
    expect(me.body.tenants).toEqual([
      { tenantId: org.tenantId, tenantName: expect.any(String), personId: org.personId },
    ]);
    const { prisma } = app.deps.db;
    expect(
      (await prisma.person.findUniqueOrThrow({ where: { id: sandboxPersonId } })).portalAccountId,
    ).toBeNull();

    expect((await app.request('POST', '/v1/me/deletion-request', { headers })).status).toBe(201);
    const mail = await waitForMail(app.smtp, person.email, /Confirm the deletion of your data/);
    const token = /token to the portal: (dc_[A-Za-z0-9_-]+)/.exec(mail)![1]!;
    const confirmed = await app.request('POST', '/v1/portal/auth/deletion-confirm', { body: { token } });
    expect(confirmed.status, confirmed.text).toBe(200);
    const deadline = Date.now() + 10_000;
    const anonymised = async (id: string) =>
      (await prisma.person.findUniqueOrThrow({ where: { id } })).anonymisedAt !== null;
    while (!((await anonymised(org.personId)) && (await anonymised(sandboxPersonId)))) {
      if (Date.now() > deadline) throw new Error('the erasure did not reach both persons');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const sandboxRow = await prisma.person.findUniqueOrThrow({ where: { id: sandboxPersonId } });
    expect(sandboxRow.email).toBeNull();
  });
});
