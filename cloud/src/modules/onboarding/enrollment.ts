// Biometric enrollment, shared by the admin one-call onboarding and the public enroll: the photos (one
// or several of the same person) are analysed before any transaction opens (slow, may fail), checked
// against the tenant's quality level, against each other and for duplicates, then the template (their
// mean embedding) + encrypted images + event + audit commit together.
import { cosineSimilarity, embeddingToBuffer, meanEmbedding } from '@portico/face-engine';
import type { TenantSettings } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import type { RequestMeta } from '../../http/request-context.js';
import { newId, type Tx } from '../../infra/db/index.js';
import { embeddingOf, frameBytes } from '../../infra/face.js';
import { tenantSettingsOf } from '../tenants/settings.js';
import { templateContext } from '../faces/gallery.js';
import { emitEvent } from '../outbox/emit.js';
import { recordAudit } from '../audit/record.js';

type Deps = Pick<AppDeps, 'db' | 'face' | 'gallery' | 'cipher' | 'config' | 'clock' | 'logger' | 'images'>;

/**
 * Photos of one enrollment whose cosine falls below this are taken for different people: 1 in 2,000
 * same-person pairs of the evaluation sets score lower, while about 98 % of different-person pairs do.
 */
export const SAME_PERSON_MIN_COSINE = 0.25;

/**
 * What a caller without credentials (an enrollment link) hears when the face matches another person: a
 * plain refusal (409 `conflict`, as for a person who cannot be enrolled now), never `duplicate_face`,
 * which would tell that the face is enrolled at the tenant. The tenant's admins see the possible
 * duplicate in the audit log (`person.possible_duplicate`, console "Audit").
 */
const ANONYMOUS_ENROLLMENT_REFUSAL = 'This person cannot be enrolled now; contact the organiser';

/** Who is enrolling, when it is a caller without credentials (the duplicate is answered and queued apart). */
export type AnonymousEnrollment = Pick<RequestMeta, 'ip' | 'requestId'>;

export interface CheckedFace {
  settings: TenantSettings;
  /**
   * The person's templates, each the mean embedding of the photos: one of the service's model, and one
   * of the model still serving the tenant while a model switch runs (see faces/model-switch.ts).
   */
  templates: Array<{ modelId: string; embedding: Float32Array }>;
  /** The lowest quality among the photos (each reached the tenant's level). */
  quality: number;
  /** The service's model (the enrollment's answer names it). */
  modelId: string;
  /** The tenant's model before this enrollment (null: its first one). */
  servingModelId: string | null;
  photos: Array<{ bytes: Buffer; contentType: string }>;
}

export function createEnrollment(deps: Deps) {
  const { images } = deps;

  return {
    /**
     * Analyses the photos (one to MAX_ENROLLMENT_PHOTOS of the same person) and applies the tenant's
     * rules: a photo below biometricQualityLevel -> 400 `face_quality_too_low` (with `quality`,
     * `required` and the photo's index); photos of different people -> 400 `photos_differ`; a
     * template matching another person of the tenant at or above matchThreshold -> 409
     * `duplicate_face`, unless allowDuplicateFaces.
     */
    async check(
      tenantId: string,
      frames: readonly string[],
      personId: string | null,
      anonymous?: AnonymousEnrollment,
    ): Promise<CheckedFace> {
      const analyses = await Promise.all(frames.map((frame) => deps.face.analyze(frame)));
      const tenant = await deps.db.prisma.tenant.findUniqueOrThrow({
        where: { id: tenantId },
        select: { settings: true, faceModelId: true },
      });
      const settings = tenantSettingsOf(tenant.settings);
      const servingModelId = tenant.faceModelId;
      analyses.forEach((analysis, photo) => {
        if (analysis.quality < settings.biometricQualityLevel) {
          const which = frames.length > 1 ? `Photo ${photo + 1}: face` : 'Face';
          throw new AppError(
            400,
            'face_quality_too_low',
            `${which} quality ${analysis.quality} is below this tenant's level ${settings.biometricQualityLevel}: ` +
              'use a sharp, frontal, well-lit photo with the face large enough',
            { extra: { quality: analysis.quality, required: settings.biometricQualityLevel, photo } },
          );
        }
      });
      for (let i = 0; i < analyses.length; i++) {
        for (let j = i + 1; j < analyses.length; j++) {
          if (cosineSimilarity(analyses[i]!.embedding, analyses[j]!.embedding) < SAME_PERSON_MIN_COSINE) {
            throw new AppError(
              400,
              'photos_differ',
              `Photos ${i + 1} and ${j + 1} do not show the same person: enroll one person's photos at a time`,
              { extra: { photos: [i, j] } },
            );
          }
        }
      }
      const templates = [...new Set([deps.face.modelId, servingModelId ?? deps.face.modelId])].map(
        (modelId) => ({
          modelId,
          embedding: meanEmbedding(analyses.map((a) => embeddingOf(a, modelId))),
        }),
      );
      if (!settings.allowDuplicateFaces) {
        const serving = templates.at(-1)!;
        const hits = await deps.gallery.search(tenantId, serving.modelId, serving.embedding, 2);
        const other = hits.find((h) => h.personId !== personId && h.score >= settings.matchThreshold);
        if (other && anonymous) {
          // Queued for the tenant's admins (console: audit log), answered as any other refusal.
          await recordAudit(deps.db.prisma, {
            tenantId,
            actorType: 'public',
            action: 'person.possible_duplicate',
            targetType: 'person',
            targetId: personId ?? undefined,
            metadata: { matchedPersonId: other.personId, score: Math.round(other.score * 10_000) / 10_000 },
            ip: anonymous.ip,
            requestId: anonymous.requestId,
          });
          throw new AppError(409, 'conflict', ANONYMOUS_ENROLLMENT_REFUSAL);
        }
        if (other) {
          throw new AppError(
            409,
            'duplicate_face',
            'This face is already enrolled for another person of this tenant',
          );
        }
      }
      return {
        settings,
        templates,
        quality: Math.min(...analyses.map((a) => a.quality)),
        modelId: deps.face.modelId,
        servingModelId,
        photos: analyses.map((analysis, i) => ({
          bytes: frameBytes(frames[i]!),
          contentType: analysis.image.format === 'png' ? 'image/png' : 'image/jpeg',
        })),
      };
    },

    /**
     * Stores the encrypted image files, then (in the caller's transaction) replaces the person's template
     * and enrollment images and emits `person.enrolled`. Returns what to do after commit / on rollback.
     */
    async store(tenantId: string, personId: string, face: CheckedFace) {
      const saved = await Promise.allSettled(
        face.photos.map(async (photo) => {
          const imageId = newId();
          return { imageId, photo, stored: await images.save(tenantId, imageId, photo.bytes) };
        }),
      );
      const files = saved.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      const failed = saved.find((s) => s.status === 'rejected');
      if (failed) {
        for (const f of files) await images.erase(f.stored.storageKey).catch(() => undefined);
        throw failed.reason;
      }
      const templates = face.templates.map((t) => ({ ...t, id: newId() }));
      const now = deps.clock.now();
      let replacedFiles: string[] = [];
      return {
        async write(tx: Tx) {
          const old = await tx.biometricImage.findMany({
            where: { tenantId, personId, kind: 'enrollment' },
            select: { storageKey: true },
          });
          replacedFiles = old.map((o) => o.storageKey);
          await tx.biometricImage.deleteMany({ where: { tenantId, personId, kind: 'enrollment' } });
          await tx.faceTemplate.deleteMany({ where: { personId } });
          // A new enrollment starts the template afresh (refreshes averaged the old photos).
          await tx.faceTemplateRefresh.deleteMany({ where: { personId } });
          await tx.faceTemplate.createMany({
            data: templates.map((t) => ({
              id: t.id,
              tenantId,
              personId,
              modelId: t.modelId,
              embeddingEnc: deps.cipher.encrypt(
                embeddingToBuffer(t.embedding),
                templateContext(tenantId, personId),
              ),
              quality: face.quality,
              createdAt: now,
            })),
          });
          // The first enrollment fixes the tenant's model.
          if (face.servingModelId === null) {
            await tx.tenant.updateMany({
              where: { id: tenantId, faceModelId: null },
              data: { faceModelId: face.modelId },
            });
          }
          await tx.biometricImage.createMany({
            data: files.map(({ imageId, photo, stored }) => ({
              id: imageId,
              tenantId,
              personId,
              kind: 'enrollment',
              storageKey: stored.storageKey,
              contentType: photo.contentType,
              byteSize: stored.byteSize,
              sha256: stored.sha256,
              createdAt: now,
            })),
          });
          await tx.person.update({ where: { id: personId }, data: { enrolledAt: now, updatedAt: now } });
          await emitEvent(tx, {
            tenantId,
            name: 'person.enrolled',
            data: { personId, quality: face.quality, modelId: face.modelId },
            at: now,
            settings: face.settings,
          });
        },
        /** After commit: the gallery learns the template, replaced image files are erased. */
        async committed() {
          for (const t of templates) deps.gallery.put(tenantId, t.modelId, personId, t.id, t.embedding);
          for (const key of replacedFiles) await images.erase(key).catch(() => undefined);
        },
        /** The transaction failed: the new files must not stay behind. */
        async rolledBack() {
          for (const f of files) await images.erase(f.stored.storageKey).catch(() => undefined);
        },
      };
    },
  };
}
