// First start on an empty database: a `demo` tenant, so a new user can log in right away.
import type { AppDeps } from '../../deps.js';
import { provisionTenant } from './provision.js';

export async function seedDemoTenant(deps: Pick<AppDeps, 'db' | 'cipher'>, print: (text: string) => void) {
  if ((await deps.db.prisma.tenant.count()) > 0) return;
  const t = await provisionTenant(deps, {
    slug: 'demo',
    name: 'Demo',
    adminEmail: 'admin@demo.portico.local',
  });
  print(
    [
      '',
      'Created the demo tenant (shown once, store it now):',
      `  tenant id       ${t.tenantId}  (slug ${t.slug})`,
      `  admin e-mail    ${t.adminEmail}`,
      `  admin password  ${t.adminPassword}`,
      `  webhook secret  ${t.webhookSecret}`,
      '  log in:         POST /v1/auth/login {"email","password"}',
      '',
    ].join('\n'),
  );
}
