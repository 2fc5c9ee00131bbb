-- AlterTable
ALTER TABLE "api_keys" ALTER COLUMN "scopes" SET DEFAULT ARRAY['persons:read', 'persons:write', 'checkin', 'tenant:read', 'tenant:write', 'events:read', 'events:write']::TEXT[];

-- Keys that held every scope before the event scopes existed hold every scope still.
UPDATE "api_keys" SET "scopes" = "scopes" || ARRAY['events:read', 'events:write']::TEXT[]
 WHERE "scopes" @> ARRAY['persons:read', 'persons:write', 'checkin', 'tenant:read', 'tenant:write']::TEXT[];
