// Check-in by QR token and by hand, and the liveness challenge. Face identification is in identify.ts.
import QRCode from 'qrcode';
import type { CheckinResult, QrCheckinResult, TenantSettings } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { AppError, notFound } from '../../http/errors.js';
import { createRateLimiter } from '../../http/rate-limit.js';
import { hashToken, randomToken } from '../../infra/crypto.js';
import { newId } from '../../infra/db/index.js';
import { auditActorOf, recordAudit } from '../audit/record.js';
import type { RequestMeta } from '../../http/request-context.js';
import { getTenantSettings } from '../tenants/service.js';
import { tenantSettingsOf } from '../tenants/settings.js';
import { createCheckinLimits } from './limits.js';
import { activeQrCode } from './qr-code.js';
import { firstName, loadEvent, recordCheckin } from './record.js';
import type { EventRow } from './rules.js';

type Deps = Pick<AppDeps, 'db' | 'clock' | 'outbox' | 'cipher' | 'config'>;

const qrContext = (tenantId: string, identityId: string) => `qr-token:${tenantId}:${identityId}`;

/** A QR token's lifetime is the tenant's current policy, so a shorter one reaches tokens already issued. */
const qrExpiry = (createdAt: Date, settings: TenantSettings) =>
  new Date(createdAt.getTime() + settings.qrTokenTtlHours * 3_600_000);

const ADMITTED = ['success', 'geofence_alert'];

export function createCheckinService(deps: Deps) {
  const { prisma } = deps.db;
  const limiter = createRateLimiter(deps.db, deps.clock);
  const limits = createCheckinLimits(deps);

  /** The identity's latest admission by QR (to this event, or with none) since `since`, as answered then. */
  async function earlierAdmission(
    tenantId: string,
    identityId: string,
    event: EventRow | null,
    since: Date,
  ): Promise<QrCheckinResult | null> {
    const row = await prisma.checkIn.findFirst({
      where: {
        tenantId,
        identityId,
        method: 'qr',
        eventId: event?.id ?? null,
        outcome: { in: ADMITTED },
        voidedAt: null,
        occurredAt: { gt: since },
      },
      orderBy: { occurredAt: 'desc' },
      include: { person: { select: { id: true, name: true } } },
    });
    if (!row) return null;
    return {
      checkInId: row.id,
      outcome: row.outcome as QrCheckinResult['outcome'],
      reason: null,
      method: 'qr',
      person: row.person ? { id: row.person.id, displayName: firstName(row.person.name) } : null,
      eventId: row.eventId,
      score: null,
      threshold: null,
      livenessScore: null,
      geofenceStatus: row.geofenceStatus as QrCheckinResult['geofenceStatus'],
      occurredAt: row.occurredAt.toISOString(),
      stepUp: null,
      alreadyCheckedIn: true,
    };
  }

  async function identityOf(tenantId: string, identityId: string) {
    const identity = await prisma.identity.findFirst({ where: { id: identityId, tenantId } });
    if (!identity) throw notFound('Identity');
    return identity;
  }

  async function qrTokenView(
    tenantId: string,
    identityId: string,
    token: string,
    createdAt: Date,
    settings: TenantSettings,
  ) {
    const url = `${deps.config.publicUrl}/v1/public/checkin/qr/${token}`;
    return {
      identityId,
      token,
      url,
      qrCode: await QRCode.toDataURL(url, { errorCorrectionLevel: 'M', margin: 2, width: 320 }),
      createdAt: createdAt.toISOString(),
      expiresAt: qrExpiry(createdAt, settings).toISOString(),
    };
  }

  return {
    /**
     * The identity's active QR token, created on first use and again once it has expired (rotation).
     * Stored hashed (lookup) and encrypted (read back).
     */
    async qrToken(actor: ActorOf<'adminSession' | 'apiKey'>, identityId: string, ctx: RequestMeta) {
      const identity = await identityOf(actor.tenantId, identityId);
      if (identity.status !== 'active') throw notFound('Identity');
      const settings = await getTenantSettings(deps.db, actor.tenantId);
      const existing = await prisma.checkinToken.findFirst({
        where: { tenantId: actor.tenantId, identityId, kind: 'qr', revokedAt: null, tokenEnc: { not: null } },
        orderBy: { createdAt: 'desc' },
      });
      const createdAt = deps.clock.now();
      if (existing?.tokenEnc && qrExpiry(existing.createdAt, settings) > createdAt) {
        const token = deps.cipher.decryptString(existing.tokenEnc, qrContext(actor.tenantId, identityId));
        return {
          status: 200,
          view: await qrTokenView(actor.tenantId, identityId, token, existing.createdAt, settings),
        };
      }
      const token = randomToken('qr_', 24);
      await prisma.$transaction(async (tx) => {
        // An expired token can no longer be shown; a scan of it still answers `qr_token_expired`.
        await tx.checkinToken.updateMany({
          where: {
            tenantId: actor.tenantId,
            identityId,
            kind: 'qr',
            revokedAt: null,
            tokenEnc: { not: null },
          },
          data: { tokenEnc: null },
        });
        await tx.checkinToken.create({
          data: {
            id: newId(),
            tenantId: actor.tenantId,
            identityId,
            kind: 'qr',
            tokenHash: hashToken(token),
            tokenEnc: deps.cipher.encryptString(token, qrContext(actor.tenantId, identityId)),
            createdAt,
          },
        });
        await recordAudit(tx, {
          tenantId: actor.tenantId,
          ...auditActorOf(actor),
          action: 'qr_token.created',
          targetType: 'identity',
          targetId: identityId,
          requestId: ctx.requestId,
          ip: ctx.ip,
        });
      });
      return {
        status: 201,
        view: await qrTokenView(actor.tenantId, identityId, token, createdAt, settings),
      };
    },

    async revokeQrToken(actor: ActorOf<'adminSession' | 'apiKey'>, identityId: string, ctx: RequestMeta) {
      await identityOf(actor.tenantId, identityId);
      await prisma.$transaction(async (tx) => {
        const { count } = await tx.checkinToken.updateMany({
          where: { tenantId: actor.tenantId, identityId, kind: 'qr', revokedAt: null },
          data: { revokedAt: deps.clock.now(), tokenEnc: null },
        });
        if (count === 0) throw notFound('QR token');
        await recordAudit(tx, {
          tenantId: actor.tenantId,
          ...auditActorOf(actor),
          action: 'qr_token.revoked',
          targetType: 'identity',
          targetId: identityId,
          requestId: ctx.requestId,
          ip: ctx.ip,
        });
      });
    },

    /**
     * A scanned QR code. Unknown and revoked tokens are 404; an expired one is 410 `qr_token_expired` (its
     * holder had it legitimately and needs a new one). The same identity admitted by QR again within the
     * tenant's `qrRepeatWindowMinutes` (same event, or none) records nothing and answers that admission.
     */
    async checkinByQr(
      actor: ActorOf<'public' | 'apiKey' | 'adminSession' | 'device'>,
      token: string,
      query: {
        eventId?: string | undefined;
        lat?: number | undefined;
        lng?: number | undefined;
        deviceId?: string | undefined;
      },
      ctx: RequestMeta,
    ): Promise<QrCheckinResult> {
      const now = deps.clock.now();
      // A code that resolves to nothing counts against the caller's unknown tokens (guessing); a known
      // one is limited per code and per event, not per address (a venue's guests share one).
      const row = await limits.lookup(actor, ctx.ip, async () => {
        const found = await activeQrCode(prisma, token);
        // Another tenant's code counts as unknown for a caller of a tenant.
        const otherTenant =
          found && 'tenantId' in actor && actor.tenantId && actor.tenantId !== found.tenantId;
        return otherTenant ? null : found;
      });
      if (!row) throw notFound('QR token');
      // The event asked for keys the event's counter before it is looked up: an unknown one is a 404
      // below, and the code's own limit bounds a caller trying many.
      await limits.token(
        'qr',
        row.id,
        query.eventId ? { eventId: query.eventId } : { tenantId: row.tenantId },
      );
      const settings = tenantSettingsOf(row.tenant.settings);
      if (qrExpiry(row.createdAt, settings) <= now) {
        throw new AppError(410, 'qr_token_expired', 'This QR code has expired; ask for a new one');
      }
      const event = await loadEvent(deps.db.sql, row.tenantId, query.eventId);

      // One admission per identity and event within the window, across processes: the first scan takes
      // the window's only slot (one atomic upsert); a refused scan gives it back, so a person turned away
      // (event not open yet, full) can try again.
      const windowMs = settings.qrRepeatWindowMinutes * 60_000;
      const slot = `checkin:qr:admitted:${row.identityId}:${event?.id ?? 'none'}`;
      if (windowMs > 0 && !(await limiter.consume(slot, { limit: 1, windowMs })).allowed) {
        const earlier = await earlierAdmission(
          row.tenantId,
          row.identityId,
          event,
          new Date(now.getTime() - windowMs),
        );
        if (earlier) return earlier;
        throw new AppError(409, 'conflict', 'This QR code is being checked in right now; try again');
      }
      let result: CheckinResult;
      try {
        result = await recordCheckin(deps, {
          tenantId: row.tenantId,
          settings,
          method: 'qr',
          verdict: 'recognised',
          personId: row.identity.personId,
          identityId: row.identityId,
          event,
          deviceId: query.deviceId,
          location:
            query.lat !== undefined && query.lng !== undefined
              ? { lat: query.lat, lng: query.lng }
              : undefined,
          actor,
          requestId: ctx.requestId,
          ip: ctx.ip,
        });
      } catch (error) {
        if (windowMs > 0) await limiter.reset(slot);
        throw error;
      }
      if (windowMs > 0 && !ADMITTED.includes(result.outcome)) await limiter.reset(slot);
      return { ...result, alreadyCheckedIn: false };
    },

    /**
     * Staff at the door: a person, or a guest of the event (with or without a person: a walk-in, a guest
     * who never enrolled), checked in under the event's rules.
     */
    async manual(
      actor: ActorOf<'adminSession'>,
      body: {
        personId?: string | undefined;
        guestId?: string | undefined;
        eventId?: string | undefined;
        deviceId?: string | undefined;
      },
      ctx: RequestMeta,
    ) {
      const event = await loadEvent(deps.db.sql, actor.tenantId, body.eventId);
      const guest =
        body.guestId && event
          ? await prisma.guest.findFirst({
              where: { id: body.guestId, eventId: event.id, tenantId: actor.tenantId, deletedAt: null },
              select: { id: true, personId: true },
            })
          : null;
      if (body.guestId && !guest) throw notFound('Guest');
      return recordCheckin(deps, {
        tenantId: actor.tenantId,
        method: 'manual',
        verdict: 'recognised',
        personId: guest ? guest.personId : (body.personId ?? null),
        ...(guest && { guest: { id: guest.id, once: false } }),
        event,
        deviceId: body.deviceId,
        actor,
        requestId: ctx.requestId,
        ip: ctx.ip,
      });
    },
  };
}
