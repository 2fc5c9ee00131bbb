// Who arrived at an event: the counts the door, Today and integrators read. `arrived` is what the
// event's capacity counts (@portico/checkin-policy: distinct persons or guests admitted, voided
// admissions not counted), `confirmed` what the capacity bounds ahead of the day.
import type { EventAttendance } from '@portico/contract';
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
