// Biometric enrollment, shared by the admin one-call onboarding and the public enroll: the face is
// analysed before any transaction opens (slow, may fail), checked against the tenant's quality level
// and for duplicates, then template + encrypted image + event + audit commit together.
import { embeddingToBuffer, type FaceAnalysis } from '@portico/face-engine';
import type { TenantSettings } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { newId, type Tx } from '../../infra/db/index.js';
import { frameBytes } from '../../infra/face.js';
import type { StoredImage } from '../../infra/image-store.js';
import { getTenantSettings } from '../tenants/service.js';
import { templateContext } from '../faces/gallery.js';
import { emitEvent } from '../outbox/emit.js';

type Deps = Pick<AppDeps, 'db' | 'face' | 'gallery' | 'cipher' | 'config' | 'clock' | 'logger' | 'images'>;

export interface CheckedFace {
  analysis: FaceAnalysis;
  settings: TenantSettings;
  bytes: Buffer;
  contentType: string;
}

export function createEnrollment(deps: Deps) {
  const { images } = deps;

  return {
    /**
     * Analyses the frame and applies the tenant's rules: quality below biometricQualityLevel -> 400
     * `face_quality_too_low` (with `quality` and `required`); a face matching another person of the
     * tenant at or above matchThreshold -> 409 `duplicate_face`, unless allowDuplicateFaces.
     */
    async check(tenantId: string, frame: string, personId: string | null): Promise<CheckedFace> {
      const analysis = await deps.face.analyze(frame);
      const settings = await getTenantSettings(deps.db, tenantId);
      if (analysis.quality < settings.biometricQualityLevel) {
        throw new AppError(
          400,
          'face_quality_too_low',
          `Face quality ${analysis.quality} is below this tenant's level ${settings.biometricQualityLevel}: ` +
            'use a sharp, frontal, well-lit photo with the face large enough',
          { extra: { quality: analysis.quality, required: settings.biometricQualityLevel } },
        );
      }
      if (!settings.allowDuplicateFaces) {
        const hits = await deps.gallery.search(tenantId, analysis.embedding, 2);
        if (hits.some((h) => h.personId !== personId && h.score >= settings.matchThreshold)) {
          throw new AppError(
            409,
            'duplicate_face',
            'This face is already enrolled for another person of this tenant',
          );
        }
      }
      const bytes = frameBytes(frame);
      return {
        analysis,
        settings,
        bytes,
        contentType: analysis.image.format === 'png' ? 'image/png' : 'image/jpeg',
      };
    },

    /**
     * Stores the encrypted image file, then (in the caller's transaction) replaces the person's template
     * and enrollment images and emits `person.enrolled`. Returns what to do after commit / on rollback.
     */
    async store(tenantId: string, personId: string, face: CheckedFace) {
      const imageId = newId();
      const stored: StoredImage = await images.save(tenantId, imageId, face.bytes);
      const templateId = newId();
      const now = deps.clock.now();
      let replacedFiles: string[] = [];
      return {
        templateId,
        async write(tx: Tx) {
          const old = await tx.biometricImage.findMany({
            where: { tenantId, personId, kind: 'enrollment' },
            select: { storageKey: true },
          });
          replacedFiles = old.map((o) => o.storageKey);
          await tx.biometricImage.deleteMany({ where: { tenantId, personId, kind: 'enrollment' } });
          await tx.faceTemplate.deleteMany({ where: { personId } });
          await tx.faceTemplate.create({
            data: {
              id: templateId,
              tenantId,
              personId,
              modelId: face.analysis.modelId,
              embeddingEnc: deps.cipher.encrypt(
                embeddingToBuffer(face.analysis.embedding),
                templateContext(tenantId, personId),
              ),
              quality: face.analysis.quality,
              createdAt: now,
            },
          });
          await tx.biometricImage.create({
            data: {
              id: imageId,
              tenantId,
              personId,
              kind: 'enrollment',
              storageKey: stored.storageKey,
              contentType: face.contentType,
              byteSize: stored.byteSize,
              sha256: stored.sha256,
              createdAt: now,
            },
          });
          await tx.person.update({ where: { id: personId }, data: { enrolledAt: now, updatedAt: now } });
          await emitEvent(tx, {
            tenantId,
            name: 'person.enrolled',
            data: { personId, quality: face.analysis.quality, modelId: face.analysis.modelId },
            at: now,
            settings: face.settings,
          });
        },
        /** After commit: the gallery learns the template, replaced image files are erased. */
        async committed() {
          deps.gallery.put(tenantId, personId, templateId, face.analysis.embedding);
          for (const key of replacedFiles) await images.erase(key).catch(() => undefined);
        },
        /** The transaction failed: the new file must not stay behind. */
        async rolledBack() {
          await images.erase(stored.storageKey).catch(() => undefined);
        },
      };
    },
  };
}
