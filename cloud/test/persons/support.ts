// Set-up shared by the persons and onboarding tests: a tenant with its admin and an integrator API key.
import type { TestApp } from '../support/app.js';
import { adminOf, bearer } from '../support/identity.js';

export async function integratorOf(app: TestApp) {
  const admin = await adminOf(app);
  const created = await app.request('POST', '/v1/applications', {
    headers: admin.headers,
    body: { name: 'HR sync' },
  });
  if (created.status !== 201) throw new Error(`could not create an application: ${created.text}`);
  const key = created.body.apiKey.key as string;
  return { ...admin, tenantId: admin.tenant.tenantId, apiKey: key, keyHeaders: bearer(key) };
}

/**
 * Public self-registration as a tenant that takes invited guests (`selfRegistration: invitation`): the
 * tenant is switched to it, invites a guest with the address to one of its events, and the guest
 * registers with that invitation. Answers the register response (201 with the enrollment token).
 */
export async function registerInvited(
  app: TestApp,
  org: { tenantId: string; keyHeaders: Record<string, string> },
  person: { name: string; document: string; email: string; birthDate?: string },
) {
  const headers = org.keyHeaders;
  const settings = await app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
    headers,
    body: { selfRegistration: 'invitation' },
  });
  if (settings.status !== 200) throw new Error(`could not allow registration: ${settings.text}`);
  const event = await app.request('POST', '/v1/events', { headers, body: { name: 'Invitation' } });
  await app.request('PATCH', `/v1/events/${event.body.id}/status`, {
    headers,
    body: { status: 'published' },
  });
  const guest = await app.request('POST', `/v1/events/${event.body.id}/guests`, {
    headers,
    body: { name: person.name, email: person.email },
  });
  if (guest.status !== 201) throw new Error(`could not invite: ${guest.text}`);
  const { slug } = await app.deps.db.prisma.tenant.findUniqueOrThrow({ where: { id: org.tenantId } });
  return app.request('POST', '/v1/public/onboarding/register', {
    body: {
      tenantSlug: slug,
      ...person,
      invitation: { eventToken: event.body.publicToken, guestToken: guest.body.guestToken },
    },
  });
}
