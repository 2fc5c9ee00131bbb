-- CreateTable
CREATE TABLE "face_template_refreshes" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "person_id" TEXT NOT NULL,
    "model_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "check_in_id" TEXT,
    "score" DOUBLE PRECISION,
    "embedding_enc" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "face_template_refreshes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "face_template_refreshes_tenant_id_idx" ON "face_template_refreshes"("tenant_id");

-- CreateIndex
CREATE INDEX "face_template_refreshes_person_id_model_id_idx" ON "face_template_refreshes"("person_id", "model_id");

-- AddForeignKey
ALTER TABLE "face_template_refreshes" ADD CONSTRAINT "face_template_refreshes_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "face_template_refreshes" ADD CONSTRAINT "face_template_refreshes_person_id_fkey" FOREIGN KEY ("person_id") REFERENCES "persons"("id") ON DELETE CASCADE ON UPDATE CASCADE;
