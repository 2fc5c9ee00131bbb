// Step-up: a face between the tenant's refuse and accept lines is settled by a second factor bound to
// the candidate (their QR or invitation link token, the last digits of their document, their birth
// date, or staff at the door). Identify opens an attempt; one call completes it, within 60 seconds,
// and records the check-in as an accepted face would (admitted with `stepUp: { factor }`), or a
// denial `step_up_failed` when the factor is not the candidate's.
import type { StepUpFactor, StepUpRequest, StepUpRequired, TenantSettings } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { AppError, notFound } from '../../http/errors.js';
import type { RequestMeta } from '../../http/request-context.js';
import { hashToken, safeEqual } from '../../infra/crypto.js';
import { newId } from '../../infra/db/index.js';
import { insertRow, oneStatement } from '../../infra/db/statements.js';
import { Prisma } from '../../generated/prisma/client.js';
import { tenantForCaller } from '../tenants/service.js';
import { firstName, loadEvent, recordCheckin, type RecordedCheckin } from './record.js';
import type { EventRow } from './rules.js';

/** How long an attempt waits for its second factor. */
export const STEP_UP_TTL_MS = 60_000;
/** Spent or expired attempts are kept this long (a late call answers 409/410, not 404), then deleted. */
const KEEP_MS = 24 * 3_600_000;

export type StepUpCaller = ActorOf<'public' | 'apiKey' | 'adminSession' | 'device'>;

type Deps = Pick<AppDeps, 'db' | 'clock' | 'outbox' | 'images'>;

/** What identify knows when the face lands between the lines. */
export interface StepUpOpening {
  tenantId: string;
  settings: TenantSettings;
  candidate: { personId: string; score: number };
  livenessScore: number | null;
  event: EventRow | null;
  deviceLabel: string | undefined;
  location: { lat: number; lng: number } | undefined;
  /** The frame, already stored encrypted: kept as a check-in image that has no check-in yet. */
  image: {
    id: string;
    storageKey: string;
    contentType: string;
    byteSize: number;
    sha256: string;
  };
}

const QR_TTL_MS = (settings: TenantSettings) => settings.qrTokenTtlHours * 3_600_000;

export function createStepUp(deps: Deps) {
  const { prisma } = deps.db;

  /** Stores the attempt and its frame (one statement); the answer names the candidate for credentialed callers. */
  async function open(o: StepUpOpening): Promise<StepUpRequired> {
    const attemptId = newId();
    const expiresAt = new Date(deps.clock.now().getTime() + STEP_UP_TTL_MS);
    await prisma.$executeRaw(
      oneStatement([
        insertRow('biometric_images', {
          id: o.image.id,
          tenant_id: o.tenantId,
          person_id: null,
          check_in_id: null,
          kind: 'checkin',
          storage_key: o.image.storageKey,
          content_type: o.image.contentType,
          byte_size: o.image.byteSize,
          sha256: o.image.sha256,
        }),
        insertRow('step_up_attempts', {
          id: attemptId,
          tenant_id: o.tenantId,
          person_id: o.candidate.personId,
          event_id: o.event?.id ?? null,
          image_id: o.image.id,
          score: o.candidate.score,
          liveness_score: o.livenessScore,
          device_label: o.deviceLabel ?? null,
          latitude: o.location?.lat ?? null,
          longitude: o.location?.lng ?? null,
          expires_at: expiresAt,
        }),
      ]),
    );
    const person = await prisma.person.findUniqueOrThrow({
      where: { id: o.candidate.personId },
      select: { id: true, name: true },
    });
    return {
      outcome: 'step_up_required',
      stepUp: { attemptId, factors: [...o.settings.stepUpFactors], expiresAt: expiresAt.toISOString() },
      eventId: o.event?.id ?? null,
      candidate: { id: person.id, displayName: firstName(person.name) },
      score: o.candidate.score,
      threshold: o.settings.matchThreshold,
      livenessScore: o.livenessScore,
    };
  }

  /** Whether `request`'s factor belongs to the candidate. Secrets are compared in constant time. */
  async function factorHolds(
    tenantId: string,
    settings: TenantSettings,
    attempt: { personId: string; eventId: string | null },
    request: StepUpRequest,
  ): Promise<boolean> {
    switch (request.factor) {
      case 'staff':
        return true;
      case 'qr': {
        const now = deps.clock.now().getTime();
        const [tokens, guests] = await Promise.all([
          prisma.checkinToken.findMany({
            where: {
              tenantId,
              kind: 'qr',
              revokedAt: null,
              identity: { personId: attempt.personId, status: 'active' },
            },
            select: { tokenHash: true, createdAt: true },
          }),
          prisma.guest.findMany({
            where: {
              tenantId,
              personId: attempt.personId,
              deletedAt: null,
              ...(attempt.eventId && { eventId: attempt.eventId }),
            },
            select: { linkToken: true },
          }),
        ]);
        const hash = hashToken(request.token);
        // Every candidate secret is compared (no early exit), so the time says nothing of which matched.
        let ok = false;
        for (const t of tokens) {
          ok = (safeEqual(t.tokenHash, hash) && t.createdAt.getTime() + QR_TTL_MS(settings) > now) || ok;
        }
        for (const g of guests) ok = safeEqual(g.linkToken, request.token) || ok;
        return ok;
      }
      case 'document_last4': {
        const person = await prisma.person.findUnique({
          where: { id: attempt.personId },
          select: { document: true },
        });
        const digits = (person?.document ?? '').replace(/\D/g, '');
        return digits.length >= 4 && safeEqual(digits.slice(-4), request.code);
      }
      case 'birth_date': {
        const person = await prisma.person.findUnique({
          where: { id: attempt.personId },
          select: { birthDate: true },
        });
        const born = person?.birthDate ? person.birthDate.toISOString().slice(0, 10) : null;
        return born !== null && safeEqual(born, request.code);
      }
    }
  }

  /**
   * Completes an attempt once. Unknown or another tenant's: 404; spent: 409 `step_up_used`; expired:
   * 410 `step_up_expired`; a factor the tenant does not take: 400 `step_up_factor_not_allowed`; staff
   * from an anonymous caller: 403. Those leave the attempt as it was; any factor checked spends it.
   */
  async function complete(
    actor: StepUpCaller,
    tenantSlug: string,
    attemptId: string,
    request: StepUpRequest,
    meta: RequestMeta,
  ): Promise<RecordedCheckin> {
    const tenant = await tenantForCaller(deps.db, tenantSlug, actor);
    if (actor.kind !== 'public' && actor.tenantId !== tenant.id) throw notFound('Tenant');
    const { settings } = tenant;
    const attempt = await prisma.stepUpAttempt.findFirst({ where: { id: attemptId, tenantId: tenant.id } });
    if (!attempt) throw notFound('Step-up attempt');
    const now = deps.clock.now();
    if (attempt.usedAt) throw spent();
    if (attempt.expiresAt <= now) throw expired();
    if (!settings.stepUpFactors.includes(request.factor)) {
      throw new AppError(
        400,
        'step_up_factor_not_allowed',
        `This tenant does not take the factor ${request.factor}; it takes ${settings.stepUpFactors.join(', ')}`,
        { extra: { factors: settings.stepUpFactors } },
      );
    }
    if (request.factor === 'staff' && actor.kind === 'public') {
      throw new AppError(
        403,
        'forbidden',
        'A staff confirmation needs staff credentials (API key, admin or device)',
      );
    }
    const event = await loadEvent(deps.db.sql, tenant.id, attempt.eventId ?? undefined);

    // Spent before the factor is judged: one guess per attempt, whatever happens next.
    const claimed = await prisma.stepUpAttempt.updateMany({
      where: { id: attempt.id, usedAt: null, expiresAt: { gt: now } },
      data: { usedAt: now },
    });
    if (claimed.count === 0) {
      const again = await prisma.stepUpAttempt.findUnique({ where: { id: attempt.id } });
      throw again?.usedAt ? spent() : expired();
    }

    const holds = await factorHolds(tenant.id, settings, attempt, request);
    const factor: StepUpFactor = request.factor;
    const personId = holds ? attempt.personId : null;
    return recordCheckin(deps, {
      tenantId: tenant.id,
      settings,
      method: 'facial',
      verdict: holds ? 'recognised' : 'step_up_failed',
      personId,
      event,
      deviceId: attempt.deviceLabel ?? undefined,
      location:
        attempt.latitude !== null && attempt.longitude !== null
          ? { lat: attempt.latitude, lng: attempt.longitude }
          : undefined,
      score: attempt.score,
      threshold: settings.matchThreshold,
      livenessScore: attempt.livenessScore,
      stepUp: { factor },
      actor,
      requestId: meta.requestId,
      ip: meta.ip,
      alsoInsert: (checkInId) =>
        attempt.imageId
          ? [
              Prisma.sql`UPDATE biometric_images SET check_in_id = ${checkInId}, person_id = ${personId}
                          WHERE id = ${attempt.imageId} AND erased_at IS NULL`,
            ]
          : [],
    });
  }

  /**
   * Erases the frames of attempts that expired unused (biometric data is kept only with a check-in) and
   * deletes attempts a day after they expired. Returns whether anything was done.
   */
  async function purgeExpired(): Promise<boolean> {
    const now = deps.clock.now();
    const stale = await prisma.stepUpAttempt.findMany({
      where: { usedAt: null, expiresAt: { lte: now }, image: { is: { erasedAt: null } } },
      select: { image: { select: { id: true, storageKey: true } } },
      take: 100,
    });
    for (const { image } of stale) {
      if (!image) continue;
      await deps.images.erase(image.storageKey);
      await prisma.biometricImage.update({ where: { id: image.id }, data: { erasedAt: now } });
    }
    const { count } = await prisma.stepUpAttempt.deleteMany({
      where: { expiresAt: { lte: new Date(now.getTime() - KEEP_MS) } },
    });
    return stale.length > 0 || count > 0;
  }

  return { open, complete, purgeExpired };
}

const spent = () => new AppError(409, 'step_up_used', 'This step-up was already completed or refused');
const expired = () =>
  new AppError(410, 'step_up_expired', 'This step-up has expired; identify again to start a new one');
