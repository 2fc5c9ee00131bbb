// The admission rules of an event, shared by every check-in method: status, allowed methods,
// capacity and geofence.
import type { z } from '@portico/contract';
import type { DenialReason, GeofenceStatus } from '@portico/contract';
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

const EARTH_RADIUS_M = 6_371_008.8;

/** Great-circle distance in metres (haversine). */
export function distanceMetres(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const rad = (d: number) => (d * Math.PI) / 180;
  const dLat = rad(b.lat - a.lat);
  const dLng = rad(b.lng - a.lng);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** An event without its own radius uses the tenant's `geofenceRadiusMetros`. */
export function geofenceStatus(
  event: EventRow | null,
  location: { lat: number; lng: number } | undefined,
  tenantRadiusM: number,
): Geofence {
  if (!event || event.geofenceLat === null || event.geofenceLng === null) return 'not_applicable';
  if (!location) return 'unknown';
  const radius = event.geofenceRadiusM ?? tenantRadiusM;
  return distanceMetres({ lat: event.geofenceLat, lng: event.geofenceLng }, location) <= radius
    ? 'ok'
    : 'outside';
}

const CLOSED = new Set(['closed', 'cancelled']);

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
  if (CLOSED.has(event.status)) return 'event_closed';
  if (event.checkinMethods.length > 0 && !event.checkinMethods.includes(method)) return 'method_not_allowed';
  if (event.capacity !== null) {
    // The caller holds the event row locked, so concurrent check-ins cannot both take the last place.
    const [row] = await tx.$queryRaw<{ admitted: bigint; already: boolean | null }[]>`
      SELECT COUNT(DISTINCT COALESCE(person_id, guest_id)) AS admitted,
             BOOL_OR(person_id = ${subject.personId}::text OR guest_id = ${subject.guestId}::text) AS already
        FROM check_ins
       WHERE event_id = ${event.id} AND outcome IN ('success', 'geofence_alert')
         AND (person_id IS NOT NULL OR guest_id IS NOT NULL)`;
    if (!row?.already && Number(row?.admitted ?? 0) >= event.capacity) return 'capacity_reached';
  }
  return null;
}
