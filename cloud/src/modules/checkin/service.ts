// Check-in by QR token and by hand, and the liveness challenge. Face identification is in identify.ts.
import QRCode from 'qrcode';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { notFound } from '../../http/errors.js';
import { hashToken, randomToken } from '../../infra/crypto.js';
import { newId } from '../../infra/db/index.js';
import { auditActorOf, recordAudit } from '../audit/record.js';
import type { RequestMeta } from '../../http/request-context.js';
import { tenantSettingsOf } from '../tenants/settings.js';
import { loadEvent, recordCheckin } from './record.js';

type Deps = Pick<AppDeps, 'db' | 'clock' | 'outbox' | 'cipher' | 'config'>;

const qrContext = (tenantId: string, identityId: string) => `qr-token:${tenantId}:${identityId}`;

export function createCheckinService(deps: Deps) {
  const { prisma } = deps.db;

  async function identityOf(tenantId: string, identityId: string) {
    const identity = await prisma.identity.findFirst({ where: { id: identityId, tenantId } });
    if (!identity) throw notFound('Identity');
    return identity;
  }

  async function qrTokenView(tenantId: string, identityId: string, token: string, createdAt: Date) {
    const url = `${deps.config.publicUrl}/v1/public/checkin/qr/${token}`;
    return {
      identityId,
      token,
      url,
      qrCode: await QRCode.toDataURL(url, { errorCorrectionLevel: 'M', margin: 2, width: 320 }),
      createdAt: createdAt.toISOString(),
    };
  }

  return {
    /** The identity's active QR token, created on first use. Stored hashed (lookup) and encrypted (read back). */
    async qrToken(actor: ActorOf<'adminSession' | 'apiKey'>, identityId: string, ctx: RequestMeta) {
      const identity = await identityOf(actor.tenantId, identityId);
      if (identity.status !== 'active') throw notFound('Identity');
      const existing = await prisma.checkinToken.findFirst({
        where: { tenantId: actor.tenantId, identityId, kind: 'qr', revokedAt: null, tokenEnc: { not: null } },
        orderBy: { createdAt: 'desc' },
      });
      if (existing?.tokenEnc) {
        const token = deps.cipher.decryptString(existing.tokenEnc, qrContext(actor.tenantId, identityId));
        return {
          status: 200,
          view: await qrTokenView(actor.tenantId, identityId, token, existing.createdAt),
        };
      }
      const token = randomToken('qr_', 24);
      const createdAt = deps.clock.now();
      await prisma.$transaction(async (tx) => {
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
      return { status: 201, view: await qrTokenView(actor.tenantId, identityId, token, createdAt) };
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

    /** A scanned QR code: unknown, revoked and expired tokens are all 404 (nothing to tell them apart). */
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
    ) {
      const now = deps.clock.now();
      const row = await prisma.checkinToken.findUnique({
        where: { tokenHash: hashToken(token) },
        include: {
          identity: { select: { personId: true, status: true } },
          tenant: { select: { status: true, settings: true } },
        },
      });
      // A suspended tenant's codes count as unknown, like its slug on the other public routes.
      if (
        !row ||
        row.kind !== 'qr' ||
        row.revokedAt ||
        (row.expiresAt && row.expiresAt <= now) ||
        row.identity.status !== 'active' ||
        row.tenant.status !== 'active'
      ) {
        throw notFound('QR token');
      }
      if ('tenantId' in actor && actor.tenantId && actor.tenantId !== row.tenantId)
        throw notFound('QR token');
      return recordCheckin(deps, {
        tenantId: row.tenantId,
        settings: tenantSettingsOf(row.tenant.settings),
        method: 'qr',
        verdict: 'recognised',
        personId: row.identity.personId,
        identityId: row.identityId,
        event: await loadEvent(deps.db, row.tenantId, query.eventId),
        deviceId: query.deviceId,
        location:
          query.lat !== undefined && query.lng !== undefined ? { lat: query.lat, lng: query.lng } : undefined,
        actor,
        requestId: ctx.requestId,
        ip: ctx.ip,
      });
    },

    async manual(
      actor: ActorOf<'adminSession'>,
      body: { personId: string; eventId?: string | undefined; deviceId?: string | undefined },
      ctx: RequestMeta,
    ) {
      return recordCheckin(deps, {
        tenantId: actor.tenantId,
        method: 'manual',
        verdict: 'recognised',
        personId: body.personId,
        event: await loadEvent(deps.db, actor.tenantId, body.eventId),
        deviceId: body.deviceId,
        actor,
        requestId: ctx.requestId,
        ip: ctx.ip,
      });
    },
  };
}
