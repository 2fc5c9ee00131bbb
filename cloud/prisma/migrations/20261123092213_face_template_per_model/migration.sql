-- DropIndex
DROP INDEX "face_templates_person_id_key";

-- CreateIndex
CREATE UNIQUE INDEX "face_templates_person_id_model_id_key" ON "face_templates"("person_id", "model_id");

-- matchThreshold is now a calibrated score (see the face engine's calibration.ts), no longer a cosine:
-- a stored cosine threshold means nothing on the new scale, so tenants fall back to the new default.
UPDATE "tenants" SET "settings" = "settings" - 'matchThreshold' WHERE "settings" ? 'matchThreshold';
