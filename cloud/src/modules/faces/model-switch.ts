// A change of the face embedding model without asking anybody to enroll again. Each tenant is served
// by one model (tenants.face_model_id: identification searches that model's templates). When the
// service is configured with another one (FACE_MODEL), this worker re-embeds every enrolled person's
// stored (encrypted) enrollment photos with the new model, a few persons per run, while the old
// model keeps serving check-ins; enrollments made meanwhile write templates of both. Once every
// person who can be converted has a template of the new model, the tenant switches in one
// transaction: the old templates are deleted, and persons that could not be converted (no stored
// photo, no face found by the new model) are marked not enrolled and counted in the audit row.
// Template refreshes (faces/template-refresh.ts) of the old model are dropped with its templates.
import { embeddingToBuffer, meanEmbedding } from '@portico/face-engine';
import type { AppDeps } from '../../deps.js';
import { newId } from '../../infra/db/index.js';
import { embeddingOf } from '../../infra/face.js';
import { recordAudit } from '../audit/record.js';
import { templateContext } from './gallery.js';

/** Persons re-embedded per run: runs are short so the worker loop stays responsive to shutdown. */
const DEFAULT_BATCH = 8;

export function createModelSwitch(
  deps: Pick<AppDeps, 'db' | 'face' | 'gallery' | 'images' | 'cipher' | 'clock' | 'logger'>,
  options: { batch?: number } = {},
) {
  const { prisma } = deps.db;
  /** Persons this process could not convert (tenant/person): not tried again until the switch ends. */
  const failed = new Set<string>();

  /** The new model's template from a person's stored enrollment photos, or null when impossible. */
  async function reembed(tenantId: string, personId: string, target: string) {
    const photos = await prisma.biometricImage.findMany({
      where: { tenantId, personId, kind: 'enrollment', erasedAt: null },
      select: { id: true, storageKey: true },
    });
    if (photos.length === 0) return null;
    try {
      const analyses = await Promise.all(
        photos.map(async (p) =>
          deps.face.analyze((await deps.images.read(tenantId, p.id, p.storageKey)).toString('base64')),
        ),
      );
      return {
        embedding: meanEmbedding(analyses.map((a) => embeddingOf(a, target))),
        quality: Math.min(...analyses.map((a) => a.quality)),
      };
    } catch (err) {
      // No face by the new model, an unreadable file: this person stays on the old template for now.
      deps.logger.warn(
        { err: { code: (err as { code?: string }).code }, tenantId, personId },
        'face model switch: person not converted',
      );
      return null;
    }
  }

  /** Deletes the old model's templates and moves the tenant to the new model. */
  async function complete(tenantId: string, from: string, to: string) {
    const now = deps.clock.now();
    const summary = await prisma.$transaction(async (tx) => {
      const stranded = await tx.faceTemplate.findMany({
        where: { tenantId, modelId: from, person: { faceTemplates: { none: { modelId: to } } } },
        select: { personId: true },
      });
      const strandedIds = stranded.map((s) => s.personId);
      await tx.person.updateMany({
        where: { id: { in: strandedIds } },
        data: { enrolledAt: null, updatedAt: now },
      });
      const removed = await tx.faceTemplate.deleteMany({ where: { tenantId, modelId: { not: to } } });
      // Refreshed templates are not carried over: the new model's templates come from the enrollment
      // photos alone, and the old model's refresh embeddings are of no use to it.
      await tx.faceTemplateRefresh.deleteMany({ where: { tenantId, modelId: { not: to } } });
      await tx.tenant.update({ where: { id: tenantId }, data: { faceModelId: to } });
      const converted = await tx.faceTemplate.count({ where: { tenantId, modelId: to } });
      const metadata = {
        from,
        to,
        converted,
        notConverted: strandedIds.length,
        oldTemplatesDeleted: removed.count,
      };
      await recordAudit(tx, {
        tenantId,
        actorType: 'system',
        action: 'face_model.switched',
        targetType: 'tenant',
        targetId: tenantId,
        metadata,
      });
      return metadata;
    });
    for (const key of failed) if (key.startsWith(`${tenantId}/`)) failed.delete(key);
    deps.gallery.invalidate(tenantId);
    deps.logger.info({ tenantId, ...summary }, 'face model switched');
  }

  return {
    /** One step of the switch of one tenant; true while there may be more to do. */
    async runOnce(): Promise<boolean> {
      const target = deps.face.modelId;
      if (deps.face.status().state !== 'ready') return false;
      const tenant = await prisma.tenant.findFirst({
        where: { AND: [{ faceModelId: { not: null } }, { faceModelId: { not: target } }] },
        select: { id: true, faceModelId: true },
        orderBy: { id: 'asc' },
      });
      if (!tenant) return false;
      const from = tenant.faceModelId!;
      const skip = [...failed]
        .filter((k) => k.startsWith(`${tenant.id}/`))
        .map((k) => k.slice(tenant.id.length + 1));
      const pending = await prisma.faceTemplate.findMany({
        where: {
          tenantId: tenant.id,
          modelId: from,
          personId: { notIn: skip },
          person: { faceTemplates: { none: { modelId: target } } },
        },
        select: { personId: true },
        orderBy: { personId: 'asc' },
        take: options.batch ?? DEFAULT_BATCH,
      });
      if (pending.length === 0) {
        await complete(tenant.id, from, target);
        return true;
      }
      for (const { personId } of pending) {
        const made = await reembed(tenant.id, personId, target);
        if (!made) {
          failed.add(`${tenant.id}/${personId}`);
          continue;
        }
        const templateId = newId();
        const inserted = await prisma.faceTemplate
          .createMany({
            data: {
              id: templateId,
              tenantId: tenant.id,
              personId,
              modelId: target,
              embeddingEnc: deps.cipher.encrypt(
                embeddingToBuffer(made.embedding),
                templateContext(tenant.id, personId),
              ),
              quality: made.quality,
              createdAt: deps.clock.now(),
            },
            // A re-enrollment or another process got there first: theirs stands.
            skipDuplicates: true,
          })
          // The person was deleted meanwhile (its templates went with it).
          .catch(() => ({ count: 0 }));
        if (inserted.count === 1) deps.gallery.put(tenant.id, target, personId, templateId, made.embedding);
      }
      return true;
    },
  };
}
