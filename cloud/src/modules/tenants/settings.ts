// A tenant's effective settings: the stored overrides (Tenant.settings JSON) over the documented
// defaults. An override that no longer validates (e.g. after a rule tightened) falls back to its default.
import { AgePolicy, TENANT_SETTINGS_DEFAULTS, TenantSettings } from '@portico/contract';

export function tenantSettingsOf(stored: unknown): TenantSettings {
  const overrides = (stored && typeof stored === 'object' && !Array.isArray(stored) ? stored : {}) as Record<
    string,
    unknown
  >;
  const merged: Record<string, unknown> = { ...TENANT_SETTINGS_DEFAULTS };
  const shape = TenantSettings.shape;
  for (const [key, value] of Object.entries(overrides)) {
    if (key === 'age_policy') {
      const policy = AgePolicy.safeParse({ ...TENANT_SETTINGS_DEFAULTS.age_policy, ...(value as object) });
      if (policy.success) merged.age_policy = policy.data;
    } else if (key in shape && shape[key as keyof typeof shape].safeParse(value).success) {
      merged[key] = value;
    }
  }
  return TenantSettings.parse(merged);
}
