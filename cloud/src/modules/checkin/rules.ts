// The admission rules of an event, shared by every check-in method: status, re-entry, allowed methods,
// capacity and geofence, decided by the shared policy (@portico/checkin-policy, which the device agent
// applies too) over this event's rows.
import type { z } from '@portico/contract';
import type { GeofenceStatus } from '@portico/contract';
import {
  eventVerdict,
  geofenceStatus as policyGeofence,
  reentryRule,
  type EventVerdict,
  type Reentry,
} from '@portico/checkin-policy';
import { Prisma } from '../../generated/prisma/client.js';
import type { Statements } from '../../infra/db/index.js';

type Geofence = z.infer<typeof GeofenceStatus>;

export interface EventRow {
  id: string;
  status: string;
  checkinMethods: string[];
  capacity: number | null;
  reentry: Reentry;
  geofenceLat: number | null;
  geofenceLng: number | null;
  geofenceRadiusM: number | null;
}

/** An event without its own radius uses the tenant's `geofenceRadiusMetros`. */
export function geofenceStatus(
  event: EventRow | null,
  location: { lat: number; lng: number } | undefined,
  tenantRadiusM: number,
): Geofence {
  return policyGeofence(
    event && { lat: event.geofenceLat, lng: event.geofenceLng, radiusM: event.geofenceRadiusM },
    location,
    tenantRadiusM,
  );
}

/** The guest row a check-in is for, and the event's verdict for its subject. */
export interface EventState {
  guest: { id: string; checked_in_at: Date | null } | null;
  verdict: EventVerdict;
}

/**
 * Under the event's row lock (the caller's, taken by an earlier statement of its transaction so that this
 * one reads what the previous holder committed), in one statement: the guest row the check-in is for
 * (the given guest, else the person's guest row) and what the event's rules need to decide for the
 * subject (a person, a guest of the event, or both) entering by `method`, then the shared policy's
 * verdict. The subject is already in when admitted to the event before (its guest row says so; else an
 * admitted check-in of the person or the guest). A voided admission counts for nothing
 * (`countsAsAdmission`: no place, no earlier admission). Capacity counts distinct admitted persons or
 * guests (a guest linked to a person is one), so the same subject coming back does not use two places.
 * The admissions are read only when the decision needs them.
 */
export async function eventState(
  tx: Statements,
  event: EventRow,
  subject: { personId: string | null; guestId: string | null },
  method: string,
): Promise<EventState> {
  const { personId, guestId } = subject;
  const which = guestId
    ? Prisma.sql`id = ${guestId}`
    : personId
      ? Prisma.sql`person_id = ${personId}`
      : Prisma.sql`FALSE`;
  const admitted = Prisma.sql`outcome IN ('success', 'geofence_alert') AND voided_at IS NULL`;
  const earlier = Prisma.sql`(person_id = ${personId}::text OR guest_id = g.id)`;
  const admissions =
    event.capacity !== null
      ? Prisma.sql`SELECT COUNT(DISTINCT COALESCE(person_id, guest_id))::int AS admitted, BOOL_OR(${earlier}) AS already
                     FROM check_ins
                    WHERE event_id = ${event.id} AND ${admitted} AND (person_id IS NOT NULL OR guest_id IS NOT NULL)`
      : reentryRule(event, method) === 'allow'
        ? Prisma.sql`SELECT 0 AS admitted, FALSE AS already`
        : // Only for someone not marked in yet: whether they were admitted before.
          Prisma.sql`SELECT 0 AS admitted,
                            CASE WHEN (${personId}::text IS NOT NULL OR g.id IS NOT NULL) AND g.checked_in_at IS NULL
                                 THEN EXISTS (SELECT 1 FROM check_ins WHERE event_id = ${event.id} AND ${admitted} AND ${earlier})
                                 ELSE FALSE END AS already`;
  const [row] = await tx.query<{
    guest_id: string | null;
    checked_in_at: Date | null;
    admitted: number | null;
    already: boolean | null;
  }>(Prisma.sql`
    SELECT g.id AS guest_id, g.checked_in_at, a.admitted, a.already
      FROM (SELECT 1) one
      LEFT JOIN LATERAL (
        SELECT id, checked_in_at FROM guests
         WHERE event_id = ${event.id} AND deleted_at IS NULL AND ${which}
         ORDER BY checked_in_at NULLS LAST, id LIMIT 1
      ) g ON TRUE
      LEFT JOIN LATERAL (${admissions}) a ON TRUE`);
  const guest = row?.guest_id ? { id: row.guest_id, checked_in_at: row.checked_in_at } : null;
  const alreadyIn = Boolean(guest?.checked_in_at) || row?.already === true;
  return {
    guest,
    verdict: eventVerdict(event, method, { admitted: Number(row?.admitted ?? 0), alreadyIn }),
  };
}
