// Who arrived at an event: the counts the door, Today and integrators read. `arrived` is what the
// event's capacity counts (@portico/checkin-policy: distinct persons or guests admitted, voided
// admissions not counted), `confirmed` what the capacity bounds ahead of the day.
import type { EventArrivals, EventAttendance } from '@portico/contract';
import { Prisma } from '../../generated/prisma/client.js';
import type { Database } from '../../infra/db/index.js';

interface Row {
  id: string;
  name: string;
  status: string;
  capacity: number | null;
  guests: bigint;
  confirmed: bigint;
  arrived: bigint;
}

/** The attendance of the tenant's live events among `eventIds`, by event name. */
export async function attendanceOf(
  db: Pick<Database, 'prisma'>,
  tenantId: string,
  eventIds: readonly string[],
): Promise<EventAttendance[]> {
  if (eventIds.length === 0) return [];
  const rows = await db.prisma.$queryRaw<Row[]>`
    SELECT e.id, e.name, e.status, e.capacity,
           (SELECT COUNT(*) FROM guests g WHERE g.event_id = e.id AND g.deleted_at IS NULL) AS guests,
           (SELECT COUNT(*) FROM guests g
             WHERE g.event_id = e.id AND g.deleted_at IS NULL AND g.status IN ('confirmed', 'checked_in')) AS confirmed,
           (SELECT COUNT(DISTINCT COALESCE(c.person_id, c.guest_id)) FROM check_ins c
             WHERE c.event_id = e.id AND c.outcome IN ('success', 'geofence_alert') AND c.voided_at IS NULL
               AND (c.person_id IS NOT NULL OR c.guest_id IS NOT NULL)) AS arrived
      FROM events e
     WHERE e.tenant_id = ${tenantId} AND e.deleted_at IS NULL AND e.id IN (${Prisma.join([...eventIds])})
     ORDER BY e.name, e.id`;
  return rows.map((r) => ({
    event: { id: r.id, name: r.name, status: r.status },
    arrived: Number(r.arrived),
    confirmed: Number(r.confirmed),
    guests: Number(r.guests),
    capacity: r.capacity,
  }));
}

/** Buckets an arrivals answer holds at most (the latest ones). */
const MAX_BUCKETS = 1000;

/**
 * Arrivals over time: each person or guest counted once, at their first admission that still counts
 * (a voided one is no arrival), in buckets of `minutes` from the first arrival to the last.
 */
export async function arrivalsOf(
  db: Pick<Database, 'prisma'>,
  eventId: string,
  minutes: number,
): Promise<EventArrivals> {
  const width = minutes * 60;
  const rows = await db.prisma.$queryRaw<{ bucket: number; arrived: bigint }[]>`
    SELECT FLOOR(EXTRACT(EPOCH FROM first_at) / ${width}::int)::float8 AS bucket, COUNT(*) AS arrived
      FROM (SELECT MIN(occurred_at) AS first_at FROM check_ins
             WHERE event_id = ${eventId} AND outcome IN ('success', 'geofence_alert') AND voided_at IS NULL
               AND (person_id IS NOT NULL OR guest_id IS NOT NULL)
             GROUP BY COALESCE(person_id, guest_id)) AS firsts
     GROUP BY 1 ORDER BY 1`;
  if (rows.length === 0) return { minutes, buckets: [] };
  const counts = new Map(rows.map((r) => [Number(r.bucket), Number(r.arrived)]));
  const last = Number(rows[rows.length - 1]!.bucket);
  const first = Math.max(Number(rows[0]!.bucket), last - MAX_BUCKETS + 1);
  let total = rows.filter((r) => Number(r.bucket) < first).reduce((n, r) => n + Number(r.arrived), 0);
  const buckets = [];
  for (let b = first; b <= last; b++) {
    const arrived = counts.get(b) ?? 0;
    total += arrived;
    buckets.push({ at: new Date(b * width * 1000).toISOString(), arrived, total });
  }
  return { minutes, buckets };
}
