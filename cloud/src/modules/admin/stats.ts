// The console's "Today": check-ins of a day (in a time zone) or a period counted per event, method and
// outcome, who arrived per event (open ones and those with check-ins), and the tenant's edge devices with their last contact, last sync and reported queue length.
import { CheckinMethod, CheckinOutcome, type AdminStats, type AdminStatsQuery } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { invalidFields } from '../../http/errors.js';
import { attendanceOf } from '../guests/attendance.js';

const ADMITTED = new Set(['success', 'geofence_alert']);

/** Milliseconds `timeZone` is ahead of UTC at `at`. */
function offsetMs(at: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(at));
  const part = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  const wall = Date.UTC(
    part('year'),
    part('month') - 1,
    part('day'),
    part('hour'),
    part('minute'),
    part('second'),
  );
  return wall - (at - (at % 1000));
}

/** The instant local midnight of the UTC calendar date `y-m-d` falls on in `timeZone`. */
function midnight(y: number, m: number, d: number, timeZone: string): number {
  const wall = Date.UTC(y, m, d);
  // Twice: the offset at the guess may differ from the offset at midnight across a DST change.
  const guess = wall - offsetMs(wall, timeZone);
  return wall - offsetMs(guess, timeZone);
}

/** The day containing `now` in `timeZone`, as [start, end) instants. */
export function dayIn(now: Date, timeZone: string): { from: Date; to: Date } {
  const local = new Date(now.getTime() + offsetMs(now.getTime(), timeZone));
  const [y, m, d] = [local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate()];
  return { from: new Date(midnight(y, m, d, timeZone)), to: new Date(midnight(y, m, d + 1, timeZone)) };
}

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

function periodOf(query: AdminStatsQuery, now: Date) {
  if (query.from !== undefined || query.to !== undefined) {
    if (query.tz !== undefined || query.from === undefined || query.to === undefined) {
      throw invalidFields([
        { path: 'query', message: 'send `tz` (a day), or both `from` and `to` (a period)' },
      ]);
    }
    const from = new Date(query.from);
    const to = new Date(query.to);
    if (to <= from) throw invalidFields([{ path: 'query.to', message: 'must be after `from`' }]);
    return { from, to, timeZone: null };
  }
  const timeZone = query.tz ?? 'UTC';
  if (!isTimeZone(timeZone)) throw invalidFields([{ path: 'query.tz', message: 'not an IANA time zone' }]);
  return { ...dayIn(now, timeZone), timeZone };
}

const zeroes = <K extends string>(keys: readonly K[]) =>
  Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

export function createAdminStats(deps: Pick<AppDeps, 'db' | 'clock'>) {
  const { prisma } = deps.db;
  return async function stats(tenantId: string, query: AdminStatsQuery): Promise<AdminStats> {
    const { from, to, timeZone } = periodOf(query, deps.clock.now());
    const [groups, voided, devices] = await Promise.all([
      prisma.checkIn.groupBy({
        by: ['eventId', 'method', 'outcome'],
        where: { tenantId, occurredAt: { gte: from, lt: to } },
        _count: { _all: true },
      }),
      // Voided admissions stay in the totals (they happened) but admitted nobody.
      prisma.checkIn.groupBy({
        by: ['eventId'],
        where: {
          tenantId,
          occurredAt: { gte: from, lt: to },
          outcome: { in: [...ADMITTED] },
          voidedAt: { not: null },
        },
        _count: { _all: true },
      }),
      prisma.device.findMany({ where: { tenantId }, orderBy: { createdAt: 'asc' } }),
    ]);
    const byMethod = zeroes(CheckinMethod.options);
    const byOutcome = zeroes(CheckinOutcome.options);
    const perEvent = new Map<string | null, { total: number; admitted: number }>();
    let total = 0;
    for (const g of groups) {
      const n = g._count._all;
      total += n;
      if (g.method in byMethod) byMethod[g.method as keyof typeof byMethod] += n;
      if (g.outcome in byOutcome) byOutcome[g.outcome as keyof typeof byOutcome] += n;
      const entry = perEvent.get(g.eventId) ?? { total: 0, admitted: 0 };
      entry.total += n;
      if (ADMITTED.has(g.outcome)) entry.admitted += n;
      perEvent.set(g.eventId, entry);
    }
    for (const v of voided) {
      const entry = perEvent.get(v.eventId);
      if (entry) entry.admitted -= v._count._all;
    }
    const eventIds = [...perEvent.keys()].filter((id): id is string => id !== null);
    const events = await prisma.event.findMany({
      where: { tenantId, id: { in: eventIds } },
      select: { id: true, name: true },
    });
    const names = new Map(events.map((e) => [e.id, e.name]));
    const open = await prisma.event.findMany({
      where: { tenantId, status: 'open', deletedAt: null },
      select: { id: true },
    });
    const attendance = await attendanceOf(deps.db, tenantId, [
      ...new Set([...eventIds, ...open.map((e) => e.id)]),
    ]);
    return {
      from: from.toISOString(),
      to: to.toISOString(),
      timeZone,
      total,
      byEvent: [...perEvent]
        .map(([id, counts]) => ({ event: id === null ? null : { id, name: names.get(id) ?? '' }, ...counts }))
        .sort((a, b) => b.total - a.total),
      byMethod,
      byOutcome,
      attendance,
      devices: devices.map((d) => ({
        id: d.id,
        name: d.name,
        lastSeenAt: d.lastSeenAt?.toISOString() ?? null,
        lastSyncAt: d.lastSyncAt?.toISOString() ?? null,
        queueLength: d.queueLength,
        revokedAt: d.revokedAt?.toISOString() ?? null,
      })),
    };
  };
}
