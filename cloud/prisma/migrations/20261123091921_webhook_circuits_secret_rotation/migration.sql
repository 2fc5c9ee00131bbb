-- AlterTable
ALTER TABLE "tenants" ADD COLUMN     "webhook_secret_prev_enc" BYTEA,
ADD COLUMN     "webhook_secret_prev_until" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "webhook_circuits" (
    "tenant_id" TEXT NOT NULL,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "open_until" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_circuits_pkey" PRIMARY KEY ("tenant_id")
);

-- AddForeignKey
ALTER TABLE "webhook_circuits" ADD CONSTRAINT "webhook_circuits_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
