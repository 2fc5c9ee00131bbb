-- Self-registration becomes a tenant setting (`selfRegistration`, default `off` for new tenants).
-- Tenants that existed before it took open registrations: they keep taking them, now with the
-- e-mail address verified first (`open_verified`), unless they chose a mode already.
UPDATE "tenants"
   SET "settings" = "settings" || '{"selfRegistration": "open_verified"}'::jsonb
 WHERE NOT ("settings" ? 'selfRegistration');
