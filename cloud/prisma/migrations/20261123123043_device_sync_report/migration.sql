-- AlterTable
ALTER TABLE "devices" ADD COLUMN     "last_sync_at" TIMESTAMPTZ(3),
ADD COLUMN     "queue_length" INTEGER;
