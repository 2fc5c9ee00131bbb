// Template refresh (tenant setting refreshTemplates, off by default): a check-in admitted on the face
// alone well above the accept line (@portico/checkin-policy `refreshesTemplate`) makes the person's
// template the mean of their enrollment photos' embeddings and their last TEMPLATE_REFRESH.keep such
// check-ins, the rule the face engine's evaluation measures (`runRefresh`). The enrollment photos are
// analysed once, at a person's first refresh, and their embeddings' sum kept (kind `enrollment`) so
// later refreshes re-average without the face engine. Every row is encrypted like a template, never
// logged, and erased with the person's templates (persons service), by a re-enrollment and by a model
// switch; the new template is a new face_templates row, so other API processes pick it up as they pick
// up a re-enrollment (faces/gallery.ts).
import { TEMPLATE_REFRESH } from '@portico/checkin-policy';
import { embeddingFromBuffer, embeddingToBuffer, meanEmbedding } from '@portico/face-engine';
import type { AppDeps } from '../../deps.js';
import { newId } from '../../infra/db/index.js';
import { embeddingOf } from '../../infra/face.js';
import { recordAudit } from '../audit/record.js';
import { templateContext } from './gallery.js';

export interface RefreshInput {
  tenantId: string;
  personId: string;
  /** The model serving the tenant, which made `embedding`. */
  modelId: string;
  checkInId: string;
  score: number;
  /** The check-in's embedding. */
  embedding: Float32Array;
}

type Deps = Pick<AppDeps, 'db' | 'face' | 'images' | 'cipher' | 'clock' | 'gallery' | 'logger'>;

export function createTemplateRefresh(deps: Deps) {
  const { prisma } = deps.db;

  /** The unnormalised sum of the person's enrollment photos' embeddings, or null without photos. */
  async function enrollmentSum(tenantId: string, personId: string, modelId: string) {
    const photos = await prisma.biometricImage.findMany({
      where: { tenantId, personId, kind: 'enrollment', erasedAt: null },
      select: { id: true, storageKey: true },
    });
    if (photos.length === 0) return null;
    const embeddings = await Promise.all(
      photos.map(async (p) => {
        const frame = (await deps.images.read(tenantId, p.id, p.storageKey)).toString('base64');
        return embeddingOf(await deps.face.analyze(frame), modelId);
      }),
    );
    const sum = new Float32Array(embeddings[0]!.length);
    for (const e of embeddings) for (let i = 0; i < sum.length; i++) sum[i]! += e[i]!;
    return sum;
  }

  /**
   * Refreshes the person's template from this check-in; true when it did. Never throws: a refresh that
   * cannot happen (no enrollment photo, the person re-enrolled or erased meanwhile) leaves the template
   * as it was and the check-in stands.
   */
  async function refresh(input: RefreshInput): Promise<boolean> {
    const { tenantId, personId, modelId } = input;
    const context = templateContext(tenantId, personId);
    const seal = (e: Float32Array) => deps.cipher.encrypt(embeddingToBuffer(e), context);
    const open = (b: Uint8Array) => embeddingFromBuffer(deps.cipher.decrypt(Buffer.from(b), context));
    try {
      const current = await prisma.faceTemplate.findUnique({
        where: { personId_modelId: { personId, modelId } },
        select: { id: true, quality: true },
      });
      if (!current) return false;
      const base = await prisma.faceTemplateRefresh.findFirst({
        where: { tenantId, personId, modelId, kind: 'enrollment' },
        select: { embeddingEnc: true },
      });
      const newBase = base ? null : await enrollmentSum(tenantId, personId, modelId);
      if (!base && !newBase) return false;
      const now = deps.clock.now();
      const templateId = newId();
      const template = await prisma.$transaction(async (tx) => {
        // A re-enrollment, an erasure or another refresh since the read above: theirs stands.
        const still = await tx.faceTemplate.deleteMany({ where: { id: current.id } });
        if (still.count === 0) return null;
        if (newBase) {
          await tx.faceTemplateRefresh.create({
            data: {
              id: newId(),
              tenantId,
              personId,
              modelId,
              kind: 'enrollment',
              embeddingEnc: seal(newBase),
              createdAt: now,
            },
          });
        }
        await tx.faceTemplateRefresh.create({
          data: {
            id: newId(),
            tenantId,
            personId,
            modelId,
            kind: 'checkin',
            checkInId: input.checkInId,
            score: input.score,
            embeddingEnc: seal(input.embedding),
            createdAt: now,
          },
        });
        const checkins = await tx.faceTemplateRefresh.findMany({
          where: { tenantId, personId, modelId, kind: 'checkin' },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          select: { id: true, embeddingEnc: true },
        });
        const kept = checkins.slice(0, TEMPLATE_REFRESH.keep);
        const dropped = checkins.slice(TEMPLATE_REFRESH.keep).map((r) => r.id);
        if (dropped.length > 0) await tx.faceTemplateRefresh.deleteMany({ where: { id: { in: dropped } } });
        const sum = newBase ?? open(base!.embeddingEnc);
        // The mean of enrollment photos and kept check-ins, L2-normalised (a sum normalises alike).
        const embedding = meanEmbedding([sum, ...kept.map((r) => open(r.embeddingEnc))]);
        await tx.faceTemplate.create({
          data: {
            id: templateId,
            tenantId,
            personId,
            modelId,
            embeddingEnc: seal(embedding),
            quality: current.quality,
            createdAt: now,
          },
        });
        await recordAudit(tx, {
          tenantId,
          actorType: 'system',
          action: 'face_template.refreshed',
          targetType: 'person',
          targetId: personId,
          metadata: { checkInId: input.checkInId, score: input.score, modelId, checkInsKept: kept.length },
        });
        return embedding;
      });
      if (!template) return false;
      deps.gallery.put(tenantId, modelId, personId, templateId, template);
      return true;
    } catch (err) {
      deps.logger.warn(
        { err: { code: (err as { code?: string }).code }, tenantId, personId, checkInId: input.checkInId },
        'face template not refreshed',
      );
      return false;
    }
  }

  return { refresh };
}
