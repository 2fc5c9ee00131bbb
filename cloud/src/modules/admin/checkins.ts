// Check-ins as tenant admins read them: a filtered, paged list (newest first), the same as CSV, one
// check-in by id (for the live stream) and its captured frame, decrypted on demand and audited.
import {
  Id,
  SYNC_FLAGS,
  Timestamp,
  z,
  type AdminCheckin,
  type AdminCheckinFilters,
  type AdminCheckinFlag,
  type AdminCheckinQuery,
  type StepUpFactor,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { Prisma } from '../../generated/prisma/client.js';
import type { ActorOf } from '../../http/actor.js';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { notFound } from '../../http/errors.js';
import type { RequestMeta } from '../../http/request-context.js';
import { likeLiteral } from '../../infra/db/like.js';
import { auditActorOf, recordAudit } from '../audit/record.js';

type Filters = z.infer<typeof AdminCheckinFilters>;

const CheckinCursor = z.tuple([Timestamp, Id]);

const INCLUDE = {
  event: { select: { id: true, name: true } },
  person: { select: { id: true, name: true } },
  guest: { select: { id: true, name: true } },
  biometricImages: { where: { erasedAt: null }, select: { id: true }, take: 1 },
} as const satisfies Prisma.CheckInInclude;

type Row = Prisma.CheckInGetPayload<{ include: typeof INCLUDE }>;

const syncFlags = new Set<string>(SYNC_FLAGS);

/** Decided by a device cut off from the cloud (an upload whose agent did not say counts as offline). */
const decidedOffline = (row: Pick<Row, 'source' | 'decidedOffline'>) =>
  row.source === 'sync' && row.decidedOffline !== false;

function flagsOf(
  row: Pick<Row, 'source' | 'decidedOffline' | 'lateUpload' | 'conflict'>,
): AdminCheckinFlag[] {
  const conflicts = (row.conflict ?? '').split(',').filter((f) => syncFlags.has(f)) as AdminCheckinFlag[];
  return [
    ...(decidedOffline(row) ? (['offline'] as const) : []),
    ...(row.lateUpload ? (['late'] as const) : []),
    ...(conflicts.length > 0 ? (['conflict'] as const) : []),
    ...conflicts,
  ];
}

function toWire(row: Row): AdminCheckin {
  return {
    id: row.id,
    recordedAt: row.occurredAt.toISOString(),
    receivedAt: row.receivedAt.toISOString(),
    method: row.method as AdminCheckin['method'],
    outcome: row.outcome as AdminCheckin['outcome'],
    stepUp: row.stepUpFactor ? { factor: row.stepUpFactor as StepUpFactor } : null,
    score: row.score,
    livenessScore: row.livenessScore,
    geofenceStatus: (row.geofenceStatus as AdminCheckin['geofenceStatus']) ?? null,
    flags: flagsOf(row),
    offline: decidedOffline(row),
    event: row.event,
    person: row.person,
    guestId: row.guestId,
    guest: row.guest,
    voided: row.voidedAt
      ? { at: row.voidedAt.toISOString(), reason: row.voidReason ?? '', by: row.voidedBy }
      : null,
    deviceId: row.deviceId,
    hasImage: row.biometricImages.length > 0,
  };
}

function flagWhere(flag: AdminCheckinFlag): Prisma.CheckInWhereInput {
  switch (flag) {
    case 'offline':
      return { source: 'sync', OR: [{ decidedOffline: true }, { decidedOffline: null }] };
    case 'late':
      return { lateUpload: true };
    case 'conflict':
      return { conflict: { not: null } };
    default:
      // The stored list is comma-separated and no flag's name is inside another's.
      return { conflict: { contains: likeLiteral(flag) } };
  }
}

function whereOf(tenantId: string, f: Filters): Prisma.CheckInWhereInput[] {
  const and: Prisma.CheckInWhereInput[] = [{ tenantId }];
  if (f.eventId) and.push({ eventId: f.eventId });
  if (f.personId) and.push({ personId: f.personId });
  if (f.guestId) and.push({ guestId: f.guestId });
  if (f.method) and.push({ method: f.method });
  if (f.outcome) and.push({ outcome: f.outcome });
  if (f.flag) and.push(flagWhere(f.flag));
  if (f.from) and.push({ occurredAt: { gte: new Date(f.from) } });
  if (f.to) and.push({ occurredAt: { lt: new Date(f.to) } });
  return and;
}

/** Rows of a CSV export are read this many at a time: a large export never sits in memory whole. */
const EXPORT_PAGE = 500;

const CSV_COLUMNS = [
  'id',
  'recordedAt',
  'receivedAt',
  'method',
  'outcome',
  'score',
  'livenessScore',
  'geofenceStatus',
  'flags',
  'offline',
  'eventId',
  'eventName',
  'personId',
  'personName',
  'guestId',
  'deviceId',
  'hasImage',
  'guestName',
  'voidedAt',
  'voidReason',
] as const;

/**
 * One CSV cell: quoted when it holds a separator, quote or line break; a cell a spreadsheet would run
 * as a formula (starting with = + - @, tab or carriage return) gets a leading apostrophe.
 */
export function csvCell(value: unknown): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function csvLine(c: AdminCheckin): string {
  const cells: Record<(typeof CSV_COLUMNS)[number], unknown> = {
    ...c,
    flags: c.flags.join(';'),
    eventId: c.event?.id,
    eventName: c.event?.name,
    personId: c.person?.id,
    personName: c.person?.name,
    guestName: c.guest?.name,
    voidedAt: c.voided?.at,
    voidReason: c.voided?.reason,
  };
  return `${CSV_COLUMNS.map((k) => csvCell(cells[k])).join(',')}\r\n`;
}

export function createAdminCheckins(deps: Pick<AppDeps, 'db' | 'images'>) {
  const { prisma } = deps.db;

  async function page(tenantId: string, filters: Filters, limit: number, cursor: string | undefined) {
    const and = whereOf(tenantId, filters);
    if (cursor) {
      const [at, id] = decodeCursor(cursor, CheckinCursor);
      const occurredAt = new Date(at);
      and.push({ OR: [{ occurredAt: { lt: occurredAt } }, { occurredAt, id: { lt: id } }] });
    }
    const rows = await prisma.checkIn.findMany({
      where: { AND: and },
      orderBy: [{ occurredAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      include: INCLUDE,
    });
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return {
      items: items.map(toWire),
      nextCursor: rows.length > limit && last ? encodeCursor([last.occurredAt.toISOString(), last.id]) : null,
    };
  }

  return {
    list: (tenantId: string, query: AdminCheckinQuery) => page(tenantId, query, query.limit, query.cursor),

    /** The export, line by line (header first), read a page at a time. */
    async *csv(tenantId: string, filters: Filters): AsyncGenerator<string> {
      yield `${CSV_COLUMNS.join(',')}\r\n`;
      let cursor: string | undefined;
      do {
        const next = await page(tenantId, filters, EXPORT_PAGE, cursor);
        yield next.items.map(csvLine).join('');
        cursor = next.nextCursor ?? undefined;
      } while (cursor);
    },

    /** Check-ins of the tenant by id, in the order asked (unknown ids are left out). */
    async byIds(tenantId: string, ids: readonly string[]): Promise<AdminCheckin[]> {
      const rows = await prisma.checkIn.findMany({
        where: { tenantId, id: { in: [...ids] } },
        include: INCLUDE,
      });
      const byId = new Map(rows.map((r) => [r.id, toWire(r)]));
      return ids.flatMap((id) => byId.get(id) ?? []);
    },

    /** Check-ins received after the one named (for a stream that resumes), oldest first, at most `limit`. */
    async receivedAfter(tenantId: string, checkInId: string, limit: number): Promise<AdminCheckin[]> {
      const from = await prisma.checkIn.findFirst({
        where: { id: checkInId, tenantId },
        select: { id: true, receivedAt: true },
      });
      if (!from) return [];
      const rows = await prisma.checkIn.findMany({
        where: {
          tenantId,
          OR: [{ receivedAt: { gt: from.receivedAt } }, { receivedAt: from.receivedAt, id: { gt: from.id } }],
        },
        orderBy: [{ receivedAt: 'asc' }, { id: 'asc' }],
        take: limit,
        include: INCLUDE,
      });
      return rows.map(toWire);
    },

    /** The check-in's stored frame, decrypted; every view is audited (who, which check-in). */
    async image(actor: ActorOf<'adminSession'>, checkInId: string, meta: RequestMeta) {
      const image = await prisma.biometricImage.findFirst({
        where: { tenantId: actor.tenantId, checkInId, kind: 'checkin', erasedAt: null },
        orderBy: { createdAt: 'desc' },
      });
      if (!image) throw notFound('Check-in image');
      const bytes = await deps.images.read(image.tenantId, image.id, image.storageKey);
      await recordAudit(prisma, {
        tenantId: actor.tenantId,
        ...auditActorOf(actor),
        action: 'checkin.image_viewed',
        targetType: 'check_in',
        targetId: checkInId,
        metadata: { imageId: image.id },
        ip: meta.ip,
        requestId: meta.requestId,
      });
      return { bytes, contentType: image.contentType };
    },

    async auditExport(actor: ActorOf<'adminSession'>, filters: Filters, meta: RequestMeta) {
      await recordAudit(prisma, {
        tenantId: actor.tenantId,
        ...auditActorOf(actor),
        action: 'checkin.exported',
        metadata: { filters: JSON.parse(JSON.stringify(filters)) as Prisma.InputJsonObject },
        ip: meta.ip,
        requestId: meta.requestId,
      });
    },
  };
}

export type AdminCheckins = ReturnType<typeof createAdminCheckins>;
