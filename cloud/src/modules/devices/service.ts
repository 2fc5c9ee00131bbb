// Edge devices of a tenant: a tenant admin registers one and gets its token once; the device sends it
// as `x-device-token` with the platform's `x-internal-secret`, which binds every call to its tenant.
// Revoking a lost device makes its token fail at once.
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { AppError, notFound } from '../../http/errors.js';
import type { RequestMeta } from '../../http/request-context.js';
import { hashToken, randomToken, safeEqual } from '../../infra/crypto.js';
import { newId } from '../../infra/db/index.js';
import { auditActorOf, recordAudit } from '../audit/record.js';

const TOKEN_PREFIX = 'pdt_';
/** `lastSeenAt` is written at most this often per device. */
const SEEN_EVERY_MS = 60_000;

interface DeviceRow {
  id: string;
  name: string;
  createdAt: Date;
  lastSeenAt: Date | null;
  revokedAt: Date | null;
}

const wire = (d: DeviceRow) => ({
  id: d.id,
  name: d.name,
  createdAt: d.createdAt.toISOString(),
  lastSeenAt: d.lastSeenAt?.toISOString() ?? null,
  revokedAt: d.revokedAt?.toISOString() ?? null,
});

const invalidDevice = () => new AppError(401, 'invalid_token', 'Unknown or revoked device token');

export function createDeviceService(deps: Pick<AppDeps, 'db' | 'clock'>) {
  const { prisma } = deps.db;
  return {
    async register(actor: ActorOf<'adminSession'>, name: string, meta: RequestMeta) {
      const id = newId();
      // The id travels inside the token so a device is found by primary key; the rest is the secret.
      const token = `${TOKEN_PREFIX}${id}.${randomToken('')}`;
      const device = await prisma.$transaction(async (tx) => {
        const row = await tx.device.create({
          data: {
            id,
            tenantId: actor.tenantId,
            name,
            secretHash: hashToken(token),
            createdAt: deps.clock.now(),
          },
        });
        await recordAudit(tx, {
          tenantId: actor.tenantId,
          ...auditActorOf(actor),
          action: 'device.registered',
          targetType: 'device',
          targetId: id,
          metadata: { name },
          requestId: meta.requestId,
          ip: meta.ip,
        });
        return row;
      });
      return { ...wire(device), token };
    },

    async list(tenantId: string) {
      const rows = await prisma.device.findMany({ where: { tenantId }, orderBy: { createdAt: 'asc' } });
      return { items: rows.map(wire) };
    },

    async revoke(actor: ActorOf<'adminSession'>, id: string, meta: RequestMeta) {
      return prisma.$transaction(async (tx) => {
        const row = await tx.device.findFirst({ where: { id, tenantId: actor.tenantId } });
        if (!row) throw notFound('Device');
        if (row.revokedAt) return wire(row);
        const revoked = await tx.device.update({ where: { id }, data: { revokedAt: deps.clock.now() } });
        await recordAudit(tx, {
          tenantId: actor.tenantId,
          ...auditActorOf(actor),
          action: 'device.revoked',
          targetType: 'device',
          targetId: id,
          requestId: meta.requestId,
          ip: meta.ip,
        });
        return wire(revoked);
      });
    },

    /** A sync batch arrived: its time, and the queue length the device reported (kept when not sent). */
    async recordSync(actor: ActorOf<'device'>, queueLength: number | undefined) {
      await prisma.device.updateMany({
        where: { id: actor.deviceId, tenantId: actor.tenantId },
        data: { lastSyncAt: deps.clock.now(), ...(queueLength !== undefined && { queueLength }) },
      });
    },

    /** The device and tenant of a token (401 `invalid_token` when unknown, revoked or its tenant is not active). */
    async verify(token: string): Promise<ActorOf<'device'>> {
      const match = /^pdt_([0-9a-f-]{36})\.[A-Za-z0-9_-]{43}$/.exec(token);
      if (!match) throw invalidDevice();
      const row = await prisma.device.findUnique({
        where: { id: match[1]! },
        select: {
          id: true,
          tenantId: true,
          secretHash: true,
          revokedAt: true,
          lastSeenAt: true,
          tenant: { select: { status: true } },
        },
      });
      if (
        !row ||
        !safeEqual(hashToken(token), row.secretHash) ||
        row.revokedAt ||
        row.tenant.status !== 'active'
      ) {
        throw invalidDevice();
      }
      const now = deps.clock.now();
      if (!row.lastSeenAt || now.getTime() - row.lastSeenAt.getTime() > SEEN_EVERY_MS) {
        await prisma.device.update({ where: { id: row.id }, data: { lastSeenAt: now } });
      }
      return { kind: 'device', tenantId: row.tenantId, deviceId: row.id };
    },
  };
}

export type DeviceService = ReturnType<typeof createDeviceService>;
