// Edge devices of a tenant: a tenant admin registers one and gets its token once; the device sends it
// as `x-device-token` with the platform's `x-internal-secret`, which binds every call to its tenant.
// Revoking a lost device makes its token fail at once. Each device serves the events assigned to it
// (`GET /v1/sync/device`); pairing by a short code is in pairing.ts.
import { DEVICE_ONLINE_WINDOW_MS, type Device, type EventStatus, type SyncDevice } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { Prisma } from '../../generated/prisma/client.js';
import type { ActorOf } from '../../http/actor.js';
import { AppError, notFound } from '../../http/errors.js';
import type { RequestMeta } from '../../http/request-context.js';
import { hashToken, randomToken, safeEqual } from '../../infra/crypto.js';
import { newId, type Tx } from '../../infra/db/index.js';
import { auditActorOf, recordAudit } from '../audit/record.js';

const TOKEN_PREFIX = 'pdt_';
/** `lastSeenAt` is written at most this often per device. */
const SEEN_EVERY_MS = 60_000;

/** What a device row is read with to be answered: the events it serves that still exist. */
export const DEVICE_WIRE_INCLUDE = {
  events: { where: { event: { deletedAt: null } }, select: { eventId: true }, orderBy: { eventId: 'asc' } },
} as const satisfies Prisma.DeviceInclude;

type DeviceRow = Prisma.DeviceGetPayload<{ include: typeof DEVICE_WIRE_INCLUDE }>;

/** A device as the API answers it; `online` as of `now` (see `DEVICE_ONLINE_WINDOW_MS`). */
export const deviceWire = (d: DeviceRow, now: Date): Device => ({
  id: d.id,
  name: d.name,
  createdAt: d.createdAt.toISOString(),
  lastSeenAt: d.lastSeenAt?.toISOString() ?? null,
  revokedAt: d.revokedAt?.toISOString() ?? null,
  eventIds: d.events.map((e) => e.eventId),
  lastSyncAt: d.lastSyncAt?.toISOString() ?? null,
  queueLength: d.queueLength,
  online:
    !d.revokedAt &&
    d.lastSeenAt !== null &&
    now.getTime() - d.lastSeenAt.getTime() <= DEVICE_ONLINE_WINDOW_MS,
});

/**
 * The distinct events named by `eventIds`, all of `tenantId` and not deleted: else 404 `not_found`
 * naming the first that is not (another tenant's event is not told apart from none).
 */
export async function assignableEvents(
  tx: Pick<Tx, 'event'>,
  tenantId: string,
  eventIds: readonly string[],
): Promise<string[]> {
  const ids = [...new Set(eventIds)];
  if (ids.length === 0) return [];
  const found = await tx.event.findMany({
    where: { id: { in: ids }, tenantId, deletedAt: null },
    select: { id: true },
  });
  const known = new Set(found.map((e) => e.id));
  const missing = ids.find((id) => !known.has(id));
  if (missing !== undefined) throw new AppError(404, 'not_found', `Event ${missing} not found`);
  return ids;
}

/** A new device's id and token: the id travels inside the token so a device is found by primary key. */
/** A device id and its token: the id travels inside the token so a device is found by primary key. */
export function newDeviceToken(): { id: string; token: string } {
  const id = newId();
  return { id, token: `${TOKEN_PREFIX}${id}.${randomToken('')}` };
}

/**
 * A new device of the tenant and its token, answered once (only the token's hash is stored).
 */
export async function insertDevice(
  tx: Pick<Tx, 'device'>,
  device: { tenantId: string; name: string; createdAt: Date; eventIds?: readonly string[] },
): Promise<{ row: DeviceRow; token: string }> {
  const { id, token } = newDeviceToken();
  const row = await tx.device.create({
    data: {
      id,
      tenantId: device.tenantId,
      name: device.name,
      secretHash: hashToken(token),
      createdAt: device.createdAt,
      events: { create: (device.eventIds ?? []).map((eventId) => ({ eventId })) },
    },
    include: DEVICE_WIRE_INCLUDE,
  });
  return { row, token };
}

const invalidDevice = () => new AppError(401, 'invalid_token', 'Unknown or revoked device token');

async function ownDevice(tx: Pick<Tx, 'device'>, tenantId: string, id: string) {
  const row = await tx.device.findFirst({ where: { id, tenantId }, include: DEVICE_WIRE_INCLUDE });
  if (!row) throw notFound('Device');
  return row;
}

export function createDeviceService(deps: Pick<AppDeps, 'db' | 'clock'>) {
  const { prisma } = deps.db;
  return {
    async register(actor: ActorOf<'adminSession'>, name: string, meta: RequestMeta) {
      const { device, token } = await prisma.$transaction(async (tx) => {
        const { row, token } = await insertDevice(tx, {
          tenantId: actor.tenantId,
          name,
          createdAt: deps.clock.now(),
        });
        await recordAudit(tx, {
          tenantId: actor.tenantId,
          ...auditActorOf(actor),
          action: 'device.registered',
          targetType: 'device',
          targetId: row.id,
          metadata: { name },
          requestId: meta.requestId,
          ip: meta.ip,
        });
        return { device: row, token };
      });
      return { ...deviceWire(device, deps.clock.now()), token };
    },

    async list(tenantId: string) {
      const rows = await prisma.device.findMany({
        where: { tenantId },
        orderBy: { createdAt: 'asc' },
        include: DEVICE_WIRE_INCLUDE,
      });
      const now = deps.clock.now();
      return { items: rows.map((d) => deviceWire(d, now)) };
    },

    async revoke(actor: ActorOf<'adminSession'>, id: string, meta: RequestMeta) {
      return prisma.$transaction(async (tx) => {
        const row = await ownDevice(tx, actor.tenantId, id);
        if (row.revokedAt) return deviceWire(row, deps.clock.now());
        const revoked = await tx.device.update({
          where: { id },
          data: { revokedAt: deps.clock.now() },
          include: DEVICE_WIRE_INCLUDE,
        });
        await recordAudit(tx, {
          tenantId: actor.tenantId,
          ...auditActorOf(actor),
          action: 'device.revoked',
          targetType: 'device',
          targetId: id,
          requestId: meta.requestId,
          ip: meta.ip,
        });
        return deviceWire(revoked, deps.clock.now());
      });
    },

    async rename(actor: ActorOf<'adminSession'>, id: string, name: string, meta: RequestMeta) {
      return prisma.$transaction(async (tx) => {
        const row = await ownDevice(tx, actor.tenantId, id);
        const renamed = await tx.device.update({
          where: { id },
          data: { name },
          include: DEVICE_WIRE_INCLUDE,
        });
        await recordAudit(tx, {
          tenantId: actor.tenantId,
          ...auditActorOf(actor),
          action: 'device.renamed',
          targetType: 'device',
          targetId: id,
          metadata: { from: row.name, to: name },
          requestId: meta.requestId,
          ip: meta.ip,
        });
        return deviceWire(renamed, deps.clock.now());
      });
    },

    /** Replaces the events the device serves (a revoked device keeps its list: it syncs nothing anyway). */
    async setEvents(actor: ActorOf<'adminSession'>, id: string, eventIds: string[], meta: RequestMeta) {
      return prisma.$transaction(async (tx) => {
        await ownDevice(tx, actor.tenantId, id);
        const ids = await assignableEvents(tx, actor.tenantId, eventIds);
        await tx.deviceEvent.deleteMany({ where: { deviceId: id } });
        if (ids.length > 0) {
          await tx.deviceEvent.createMany({ data: ids.map((eventId) => ({ deviceId: id, eventId })) });
        }
        await recordAudit(tx, {
          tenantId: actor.tenantId,
          ...auditActorOf(actor),
          action: 'device.events_set',
          targetType: 'device',
          targetId: id,
          metadata: { eventIds: ids },
          requestId: meta.requestId,
          ip: meta.ip,
        });
        const row = await tx.device.findUniqueOrThrow({ where: { id }, include: DEVICE_WIRE_INCLUDE });
        return deviceWire(row, deps.clock.now());
      });
    },

    /** What a device syncs: itself and the events assigned to it that are not deleted. */
    async assignment(actor: ActorOf<'device'>): Promise<SyncDevice> {
      const row = await prisma.device.findUniqueOrThrow({
        where: { id: actor.deviceId },
        select: {
          id: true,
          name: true,
          events: {
            where: { event: { deletedAt: null, tenantId: actor.tenantId } },
            select: { event: true },
          },
        },
      });
      const events = row.events
        .map(({ event }) => ({
          id: event.id,
          name: event.name,
          token: event.publicToken,
          status: event.status as EventStatus,
          startsAt: event.startsAt?.toISOString() ?? null,
          endsAt: event.endsAt?.toISOString() ?? null,
        }))
        .sort((x, y) => (x.startsAt ?? '~').localeCompare(y.startsAt ?? '~') || x.id.localeCompare(y.id));
      return { device: { id: row.id, name: row.name }, events };
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
