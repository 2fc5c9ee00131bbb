-- Gallery snapshots (issue 28): a tenant's face index for one model, sealed, in chunks, so that a start
-- loads it instead of decrypting every template row (src/modules/faces/snapshot.ts).
-- CreateTable
CREATE TABLE "face_gallery_snapshots" (
    "tenant_id" TEXT NOT NULL,
    "model_id" TEXT NOT NULL,
    "generation" TEXT NOT NULL,
    "chunks" INTEGER NOT NULL,
    "templates" INTEGER NOT NULL,
    "layout" TEXT NOT NULL,
    "synced_at" TIMESTAMPTZ(6) NOT NULL,
    "confirmed_at" TIMESTAMPTZ(6) NOT NULL,
    "written_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "face_gallery_snapshots_pkey" PRIMARY KEY ("tenant_id","model_id")
);

-- CreateTable
CREATE TABLE "face_gallery_snapshot_chunks" (
    "tenant_id" TEXT NOT NULL,
    "model_id" TEXT NOT NULL,
    "generation" TEXT NOT NULL,
    "chunk" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "face_gallery_snapshot_chunks_pkey" PRIMARY KEY ("tenant_id","model_id","generation","chunk")
);

-- AddForeignKey
ALTER TABLE "face_gallery_snapshots" ADD CONSTRAINT "face_gallery_snapshots_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "face_gallery_snapshot_chunks" ADD CONSTRAINT "face_gallery_snapshot_chunks_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
