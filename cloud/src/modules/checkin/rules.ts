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
import type { Tx } from '../../infra/db/index.js';

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

/**
 * The event's verdict for the subject (a person, a guest of the event, or both) entering by `method`: why
 * not, or null, and the flags of its admission. The subject is already in when admitted to the event
 * before (`checkedIn`: its guest row says so; else an admitted check-in of the person or the guest).
 * A voided admission counts for nothing (`countsAsAdmission`: no place, no earlier admission).
 * Capacity counts distinct admitted persons or guests (a guest linked to a person is one), so the same
 * subject coming back does not use two places.
 */
export async function eventRules(
  tx: Pick<Tx, '$queryRaw'>,
  event: EventRow,
  subject: { personId: string | null; guestId: string | null; checkedIn: boolean },
  method: string,
): Promise<EventVerdict> {
  const verdict = (admitted: number, alreadyIn: boolean) =>
    eventVerdict(event, method, { admitted, alreadyIn: subject.checkedIn || alreadyIn });
  const someone = subject.personId !== null || subject.guestId !== null;
  // The decision is the shared policy's; the admissions are read only when it needs them. The caller
  // holds the event row locked, so concurrent check-ins cannot both take the last place.
  if (event.capacity === null) {
    if (!someone || subject.checkedIn || reentryRule(event, method) === 'allow') return verdict(0, false);
    const [row] = await tx.$queryRaw<{ already: boolean }[]>`
      SELECT EXISTS (
        SELECT 1 FROM check_ins
         WHERE event_id = ${event.id} AND outcome IN ('success', 'geofence_alert') AND voided_at IS NULL
           AND (person_id = ${subject.personId}::text OR guest_id = ${subject.guestId}::text)
      ) AS already`;
    return verdict(0, row?.already === true);
  }
  const [row] = await tx.$queryRaw<{ admitted: bigint; already: boolean | null }[]>`
    SELECT COUNT(DISTINCT COALESCE(person_id, guest_id)) AS admitted,
           BOOL_OR(person_id = ${subject.personId}::text OR guest_id = ${subject.guestId}::text) AS already
      FROM check_ins
     WHERE event_id = ${event.id} AND outcome IN ('success', 'geofence_alert') AND voided_at IS NULL
       AND (person_id IS NOT NULL OR guest_id IS NOT NULL)`;
  return verdict(Number(row?.admitted ?? 0), row?.already === true);
}
