-- AlterTable
ALTER TABLE "check_ins" ADD COLUMN     "step_up_factor" TEXT;

-- CreateTable
CREATE TABLE "step_up_attempts" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "person_id" TEXT NOT NULL,
    "event_id" TEXT,
    "image_id" TEXT,
    "score" DOUBLE PRECISION NOT NULL,
    "liveness_score" DOUBLE PRECISION,
    "device_label" TEXT,
    "latitude" DOUBLE PRECISION,
    "longitude" DOUBLE PRECISION,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "step_up_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "step_up_attempts_tenant_id_idx" ON "step_up_attempts"("tenant_id");

-- CreateIndex
CREATE INDEX "step_up_attempts_person_id_idx" ON "step_up_attempts"("person_id");

-- CreateIndex
CREATE INDEX "step_up_attempts_event_id_idx" ON "step_up_attempts"("event_id");

-- CreateIndex
CREATE INDEX "step_up_attempts_image_id_idx" ON "step_up_attempts"("image_id");

-- CreateIndex
CREATE INDEX "step_up_attempts_expires_at_idx" ON "step_up_attempts"("expires_at");

-- AddForeignKey
ALTER TABLE "step_up_attempts" ADD CONSTRAINT "step_up_attempts_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "step_up_attempts" ADD CONSTRAINT "step_up_attempts_person_id_fkey" FOREIGN KEY ("person_id") REFERENCES "persons"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "step_up_attempts" ADD CONSTRAINT "step_up_attempts_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "step_up_attempts" ADD CONSTRAINT "step_up_attempts_image_id_fkey" FOREIGN KEY ("image_id") REFERENCES "biometric_images"("id") ON DELETE SET NULL ON UPDATE CASCADE;
