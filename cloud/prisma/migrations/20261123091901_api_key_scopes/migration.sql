-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "scopes" TEXT[] DEFAULT ARRAY['persons:read', 'persons:write', 'checkin', 'tenant:read', 'tenant:write']::TEXT[];
