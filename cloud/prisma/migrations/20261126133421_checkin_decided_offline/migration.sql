-- AlterTable
ALTER TABLE "check_ins" ADD COLUMN     "decided_offline" BOOLEAN;
