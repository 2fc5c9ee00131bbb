-- AlterTable
ALTER TABLE "tenants" ADD COLUMN     "face_model_id" TEXT;

-- Tenants with enrolled people are served by the model of their templates.
UPDATE "tenants" t SET "face_model_id" = (
  SELECT f."model_id" FROM "face_templates" f WHERE f."tenant_id" = t."id" ORDER BY f."created_at" DESC LIMIT 1
);
