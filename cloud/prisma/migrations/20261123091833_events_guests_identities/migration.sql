-- AlterTable
ALTER TABLE "events" ADD COLUMN     "deleted_at" TIMESTAMPTZ(3),
ADD COLUMN     "time_zone" TEXT NOT NULL DEFAULT 'UTC',
ADD COLUMN     "venue_address" TEXT,
ADD COLUMN     "venue_lat" DOUBLE PRECISION,
ADD COLUMN     "venue_lng" DOUBLE PRECISION,
ADD COLUMN     "venue_name" TEXT;

-- AlterTable
ALTER TABLE "guests" ADD COLUMN     "change_seq" BIGSERIAL NOT NULL,
ADD COLUMN     "deleted_at" TIMESTAMPTZ(3),
ADD COLUMN     "invite_count" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "last_invite_error" TEXT,
ADD COLUMN     "link_token" TEXT;

-- Guests made before invitations existed get their check-in link token (gen_random_uuid: strong randomness).
UPDATE "guests" SET "link_token" = 'lk_' || replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '')
 WHERE "link_token" IS NULL;
ALTER TABLE "guests" ALTER COLUMN "link_token" SET NOT NULL;

-- CreateIndex
CREATE INDEX "events_tenant_id_created_at_idx" ON "events"("tenant_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "guests_link_token_key" ON "guests"("link_token");

-- CreateIndex
CREATE INDEX "guests_event_id_change_seq_idx" ON "guests"("event_id", "change_seq");

-- Every person has an identity (its QR token hangs off it): persons made before this, by any path but
-- onboarding, get one now. Anonymised persons keep none (their identities were revoked).
INSERT INTO "identities" ("id", "tenant_id", "person_id", "status", "created_at")
SELECT gen_random_uuid()::text, p."tenant_id", p."id", 'active', p."created_at"
  FROM "persons" p
 WHERE p."anonymised_at" IS NULL
   AND NOT EXISTS (SELECT 1 FROM "identities" i WHERE i."person_id" = p."id");
