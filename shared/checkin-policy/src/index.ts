/**
 * @portico/checkin-policy: the decision of a check-in, pure, shared by the cloud and the device agent
 * so both decide alike: the face verdict (calibrated score against the tenant's threshold, passive
 * liveness), the event's rules (status, methods, capacity), the geofence, and the flags the cloud
 * sets on a fact a device decided offline.
 */

export type Outcome = 'success' | 'denied' | 'liveness_failed' | 'geofence_alert';
export type DenialReason = 'not_recognised' | 'capacity_reached' | 'event_closed' | 'method_not_allowed';
export type Verdict = 'recognised' | 'not_recognised' | 'liveness_failed';
export type Geofence = 'ok' | 'outside' | 'unknown' | 'not_applicable';
/** Where the cloud, re-checking a synced fact, would have decided otherwise (contract `SyncFlag`). */
export type SyncFlag = 'event_closed' | 'capacity_reached' | 'method_not_allowed' | 'already_checked_in';

export interface Decision {
  outcome: Outcome;
  reason: DenialReason | null;
}

export interface FacePolicy {
  matchThreshold: number;
  requireLiveness: boolean;
  livenessThreshold: number;
}

export interface EventRules {
  status: string;
  checkinMethods: readonly string[];
  capacity: number | null;
}

export interface GeofenceRules {
  lat: number | null;
  lng: number | null;
  radiusM: number | null;
}

/** Liveness first (when required), then a calibrated score at or above the threshold. */
export function faceVerdict(
  policy: FacePolicy,
  best: { score: number } | undefined,
  livenessScore: number | null,
): Verdict {
  if (policy.requireLiveness && (livenessScore ?? 0) < policy.livenessThreshold) return 'liveness_failed';
  return best && best.score >= policy.matchThreshold ? 'recognised' : 'not_recognised';
}

const CLOSED = new Set(['closed', 'cancelled']);

/**
 * Why the subject may not enter, or null. `admitted` counts the distinct persons or guests already in;
 * a subject already in (`alreadyIn`) does not take a second place.
 */
export function eventDenial(
  event: EventRules,
  method: string,
  capacity: { admitted: number; alreadyIn: boolean },
): DenialReason | null {
  if (CLOSED.has(event.status)) return 'event_closed';
  if (event.checkinMethods.length > 0 && !event.checkinMethods.includes(method)) return 'method_not_allowed';
  if (event.capacity !== null && !capacity.alreadyIn && capacity.admitted >= event.capacity) {
    return 'capacity_reached';
  }
  return null;
}

/** The outcome of a recognised subject: denied with the rules' reason, else admitted (with a geofence alert). */
export function admission(reason: DenialReason | null, geofence: Geofence): Decision {
  return { outcome: reason ? 'denied' : geofence === 'outside' ? 'geofence_alert' : 'success', reason };
}

export const isAdmitted = (outcome: Outcome) => outcome === 'success' || outcome === 'geofence_alert';

/** Flags of a fact a device decided: the device's admission stands, the cloud says where it disagrees. */
export function syncFlags(
  device: Decision,
  denial: DenialReason | null,
  guestAlreadyCheckedIn: boolean,
): SyncFlag[] {
  if (!isAdmitted(device.outcome)) return [];
  const flags: SyncFlag[] = [];
  if (denial && denial !== 'not_recognised') flags.push(denial);
  if (guestAlreadyCheckedIn) flags.push('already_checked_in');
  return flags;
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

/** An event without its own radius uses the tenant's. */
export function geofenceStatus(
  event: GeofenceRules | null,
  location: { lat: number; lng: number } | undefined,
  tenantRadiusM: number,
): Geofence {
  if (!event || event.lat === null || event.lng === null) return 'not_applicable';
  if (!location) return 'unknown';
  const radius = event.radiusM ?? tenantRadiusM;
  return distanceMetres({ lat: event.lat, lng: event.lng }, location) <= radius ? 'ok' : 'outside';
}
