-- AlterTable
ALTER TABLE "events" ADD COLUMN     "list_token_at" TIMESTAMPTZ(3),
ADD COLUMN     "list_token_hash" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "events_list_token_hash_key" ON "events"("list_token_hash");
