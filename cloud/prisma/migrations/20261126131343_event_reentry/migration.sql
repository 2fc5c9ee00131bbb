-- AlterTable
ALTER TABLE "events" ADD COLUMN     "reentry" TEXT NOT NULL DEFAULT 'allow';
