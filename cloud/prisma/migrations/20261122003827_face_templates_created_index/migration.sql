-- DropIndex
DROP INDEX "face_templates_tenant_id_idx";

-- CreateIndex
CREATE INDEX "face_templates_tenant_id_created_at_idx" ON "face_templates"("tenant_id", "created_at");
