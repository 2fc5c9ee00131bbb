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
