// Check-in by face: liveness nonce, face pipeline, 1:N search over the tenant's enrolled persons,
// the shared face decision (accept, step-up, refuse, retake, liveness), the frame stored encrypted,
// then the shared recording path (or a step-up attempt, step-up.ts).
import {
  actionPerformed,
  faceDecision,
  isAdmitted,
  probeQuality,
  refreshesTemplate,
  retakeReasons,
} from '@portico/checkin-policy';
import type { IdentifyResult, TenantSettings } from '@portico/contract';
import { cosineSimilarity } from '@portico/face-engine';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { AppError } from '../../http/errors.js';
import type { RequestMeta } from '../../http/request-context.js';
import { newId } from '../../infra/db/index.js';
import { insertRow } from '../../infra/db/statements.js';
import { embeddingOf, frameBytes } from '../../infra/face.js';
import type { StoredImage } from '../../infra/image-store.js';
import { createTemplateRefresh } from '../faces/template-refresh.js';
import { tenantForCaller } from '../tenants/service.js';
import { createEventGuestPersons } from './event-guests.js';
import { SAME_PERSON_MIN_COSINE } from '../onboarding/enrollment.js';
import type { NonceChallenge, NonceService } from './nonces.js';
import { loadEvent, recordCheckin } from './record.js';
import type { EventRow } from './rules.js';
import type { createStepUp } from './step-up.js';

export interface IdentifyInput {
  frame: string;
  /** The active challenge's frames, in order (callers without credentials). */
  frames?: string[] | undefined;
  nonce?: string | undefined;
  eventId?: string | undefined;
  location?: { lat: number; lng: number } | undefined;
  deviceId?: string | undefined;
}

/** An identification that passed the limits, the tenant, the nonce and the event check. */
interface Admitted {
  tenantId: string;
  settings: TenantSettings;
  /** The embedding model serving the tenant (see modules/faces/model-switch.ts). */
  modelId: string;
  event: EventRow | null;
  input: IdentifyInput;
  actor: ActorOf<'public' | 'apiKey'>;
  meta: RequestMeta;
  imageId: string;
  /** The frame being stored. */
  saving: Promise<StoredImage>;
}

export function createIdentify(
  deps: Pick<AppDeps, 'db' | 'clock' | 'outbox' | 'face' | 'gallery' | 'images' | 'cipher' | 'logger'>,
  nonces: NonceService,
  stepUp: ReturnType<typeof createStepUp>,
) {
  const { images } = deps;
  const guestPersons = createEventGuestPersons(deps.db);
  const templates = createTemplateRefresh(deps);

  /** Face, decision and record, for a request already admitted (limits, tenant, nonce, event). */
  async function decideAndRecord(admitted: Admitted): Promise<IdentifyResult> {
    const { tenantId, settings, modelId, input, imageId } = admitted;
    const analysis = await deps.face.probe(input.frame, { liveness: settings.requireLiveness });
    const livenessScore = analysis.liveness?.score ?? null;
    // Quality, then liveness, are judged before any search: a poor photo or a spoof learns nothing
    // about the gallery. A retake records nothing (and the frame is not kept).
    const before = faceDecision(settings, analysis, undefined, livenessScore);
    if (before === 'retake') {
      const reasons = retakeReasons(analysis, settings.probeQualityMin);
      throw new AppError(422, 'face_retake', `The photo is too poor to decide on: ${reasons.join(', ')}`, {
        extra: { reasons, quality: Math.round(probeQuality(analysis) * 1000) / 1000 },
      });
    }
    let best: { personId: string; score: number } | undefined;
    if (before !== 'liveness_failed') {
      // At an event with a guest list, only its guests are candidates (fewer strangers pass).
      const among = admitted.event ? await guestPersons(admitted.event.id) : null;
      [best] = await deps.gallery.search(
        tenantId,
        modelId,
        embeddingOf(analysis, modelId),
        1,
        among ?? undefined,
      );
    }
    // The same decision as the device agent's (@portico/checkin-policy).
    const answer = faceDecision(settings, analysis, best, livenessScore);
    const round = (n: number) => Math.round(n * 10_000) / 10_000;
    const stored = await admitted.saving;
    const contentType = analysis.image.format === 'png' ? 'image/png' : 'image/jpeg';
    if (answer === 'step_up') {
      return stepUp.open({
        tenantId,
        settings,
        candidate: { personId: best!.personId, score: round(best!.score) },
        livenessScore: livenessScore === null ? null : round(livenessScore),
        event: admitted.event,
        deviceLabel: input.deviceId,
        location: input.location,
        image: { id: imageId, contentType, ...stored },
      });
    }
    const verdict =
      answer === 'accept'
        ? 'recognised'
        : answer === 'liveness_failed'
          ? 'liveness_failed'
          : 'not_recognised';
    const personId = answer === 'accept' ? best!.personId : null;
    const result = await recordCheckin(deps, {
      tenantId,
      settings,
      method: 'facial',
      verdict,
      personId,
      // The gallery's search just confirmed the template against the table.
      personKnown: true,
      event: admitted.event,
      deviceId: input.deviceId,
      location: input.location,
      score: best ? round(best.score) : null,
      threshold: verdict === 'liveness_failed' ? null : settings.matchThreshold,
      livenessScore: livenessScore === null ? null : round(livenessScore),
      stepUp: null,
      actor: admitted.actor,
      requestId: admitted.meta.requestId,
      ip: admitted.meta.ip,
      alsoInsert: (checkInId) => [
        insertRow('biometric_images', {
          id: imageId,
          tenant_id: tenantId,
          person_id: personId,
          check_in_id: checkInId,
          kind: 'checkin',
          storage_key: stored.storageKey,
          content_type: contentType,
          byte_size: stored.byteSize,
          sha256: stored.sha256,
        }),
      ],
    });
    // Only a face admitted on its own well above the accept line (never a step-up, which is opened
    // above and completed elsewhere) refreshes the template, when the tenant turned it on.
    if (
      settings.refreshTemplates &&
      personId &&
      refreshesTemplate(settings, answer, best!.score) &&
      isAdmitted(result.outcome)
    ) {
      await templates.refresh({
        tenantId,
        personId,
        modelId,
        checkInId: result.checkInId,
        score: round(best!.score),
        embedding: embeddingOf(analysis, modelId),
      });
    }
    return result;
  }

  /**
   * The active challenge of a caller without credentials, judged as the device agent judges its own
   * (@portico/checkin-policy `actionPerformed`): `frames` in order show the nonce's action, `frame` is one
   * of them, and each shows the same person as `frame` (no live stand-in around someone's photo).
   */
  async function judgeChallenge(asked: NonceChallenge, input: IdentifyInput, modelId: string) {
    if (asked === 'passive') {
      throw new AppError(400, 'invalid_nonce', 'This nonce asks for no active challenge: request a new one');
    }
    const frames = input.frames;
    if (!frames || !frames.includes(input.frame)) {
      throw new AppError(
        400,
        'validation_failed',
        `Send the frames taken during the challenge (${asked}) as \`frames\`, \`frame\` among them`,
      );
    }
    const analyses = await Promise.all(frames.map((f) => deps.face.analyze(f, { liveness: true })));
    const main = embeddingOf(analyses[frames.indexOf(input.frame)]!, modelId);
    const failed = (why: string) => new AppError(422, 'liveness_failed', why);
    if (analyses.some((a) => cosineSimilarity(embeddingOf(a, modelId), main) < SAME_PERSON_MIN_COSINE)) {
      throw failed('The challenge frames do not all show the same person');
    }
    const cues = analyses.flatMap((a) => (a.liveness ? [a.liveness] : []));
    if (cues.length < frames.length || !actionPerformed(asked, cues)) {
      throw failed(`The frames do not show the asked action (${asked}); request a new challenge`);
    }
  }

  return async function identify(
    actor: ActorOf<'public' | 'apiKey'>,
    tenantSlug: string,
    input: IdentifyInput,
    meta: RequestMeta,
  ) {
    const tenant = await tenantForCaller(deps.db, tenantSlug, actor);
    const { settings } = tenant;
    // Anyone holding a photo of an enrolled person could check them in: callers without credentials
    // only where the tenant allows them, before any face work.
    if (actor.kind === 'public' && settings.identifyCallers !== 'anonymous_with_challenge') {
      throw new AppError(
        403,
        'anonymous_identify_not_allowed',
        'This tenant takes identification from its API keys only (tenant setting identifyCallers)',
      );
    }
    // A server holding the tenant's API key may skip the nonce (the contract's quick-start sends none):
    // the nonce guards against replaying a captured frame from a public kiosk; passive liveness still runs.
    if (!input.nonce && actor.kind !== 'apiKey') {
      throw new AppError(400, 'invalid_nonce', 'Send the nonce of a fresh liveness challenge');
    }
    // A wrong event is the caller's mistake: refuse it before the nonce is spent and the face work.
    const event = await loadEvent(deps.db.sql, tenant.id, input.eventId);
    const asked = input.nonce ? await nonces.consume(tenant.id, input.nonce) : null;
    // A caller without credentials shows the nonce's action over several frames (the nonce is spent
    // whatever the answer, so a challenge cannot be tuned against).
    if (actor.kind === 'public') {
      await judgeChallenge(asked!, input, tenant.faceModelId ?? deps.face.modelId);
    }

    // The frame is stored (encrypted) while the face is analysed: it is kept whatever the outcome,
    // and erased again if the check-in is not recorded.
    const imageId = newId();
    const saving = images.save(tenant.id, imageId, frameBytes(input.frame));
    // Awaited below; this only keeps a failure that comes first from counting as unhandled.
    saving.catch(() => undefined);
    try {
      return await decideAndRecord({
        tenantId: tenant.id,
        settings,
        modelId: tenant.faceModelId ?? deps.face.modelId,
        event,
        input,
        actor,
        meta,
        imageId,
        saving,
      });
    } catch (error) {
      await saving.then((s) => images.erase(s.storageKey)).catch(() => undefined);
      throw error;
    }
  };
}
