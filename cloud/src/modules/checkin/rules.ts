// The admission rules of an event, shared by every check-in method: status, allowed methods,
// capacity and geofence, decided by the shared policy (@portico/checkin-policy, which the device agent
// applies too) over this event's rows.
import type { z } from '@portico/contract';
import type { DenialReason, GeofenceStatus } from '@portico/contract';
import { eventDenial, geofenceStatus as policyGeofence } from '@portico/checkin-policy';
import type { Tx } from '../../infra/db/index.js';

type Reason = z.infer<typeof DenialReason>;
type Geofence = z.infer<typeof GeofenceStatus>;

export interface EventRow {
  id: string;
  status: string;
  checkinMethods: string[];
  capacity: number | null;
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
 * Why the subject (a person, a guest of the event, or both) may not enter `event` by `method`, or null
 * when they may. Capacity counts distinct admitted persons or guests (a guest linked to a person is one),
 * so the same subject checking in twice does not use two places.
 */
export async function denialReason(
  tx: Pick<Tx, '$queryRaw'>,
  event: EventRow,
  subject: { personId: string | null; guestId: string | null },
  method: string,
): Promise<Reason | null> {
  // Only a capacity needs the admissions; the decision itself is the shared policy's.
  if (event.capacity === null) return eventDenial(event, method, { admitted: 0, alreadyIn: false });
  // The caller holds the event row locked, so concurrent check-ins cannot both take the last place.
  const [row] = await tx.$queryRaw<{ admitted: bigint; already: boolean | null }[]>`
    SELECT COUNT(DISTINCT COALESCE(person_id, guest_id)) AS admitted,
           BOOL_OR(person_id = ${subject.personId}::text OR guest_id = ${subject.guestId}::text) AS already
      FROM check_ins
     WHERE event_id = ${event.id} AND outcome IN ('success', 'geofence_alert')
       AND (person_id IS NOT NULL OR guest_id IS NOT NULL)`;
  return eventDenial(event, method, {
    admitted: Number(row?.admitted ?? 0),
    alreadyIn: row?.already === true,
  });
}
