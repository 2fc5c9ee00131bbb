-- AlterTable
ALTER TABLE "tenants" ADD COLUMN     "sandbox_of_id" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "tenants_sandbox_of_id_key" ON "tenants"("sandbox_of_id");

-- AddForeignKey
ALTER TABLE "tenants" ADD CONSTRAINT "tenants_sandbox_of_id_fkey" FOREIGN KEY ("sandbox_of_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every event recorded so far came from a live tenant: webhook and bus payloads now say their environment.
UPDATE "outbox_events" SET "payload" = "payload" || '{"environment":"live"}'::jsonb;
