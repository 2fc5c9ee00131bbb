// A tenant's effective settings: the stored overrides (Tenant.settings JSON) over the documented defaults.
import { TENANT_SETTINGS_DEFAULTS, TenantSettings } from '@portico/contract';

export function tenantSettingsOf(stored: unknown): TenantSettings {
  const overrides = (stored && typeof stored === 'object' ? stored : {}) as Partial<TenantSettings>;
  return TenantSettings.parse({
    ...TENANT_SETTINGS_DEFAULTS,
    ...overrides,
    age_policy: { ...TENANT_SETTINGS_DEFAULTS.age_policy, ...overrides.age_policy },
  });
}
