-- CreateIndex
CREATE INDEX "persons_tenant_id_updated_at_idx" ON "persons"("tenant_id", "updated_at");
