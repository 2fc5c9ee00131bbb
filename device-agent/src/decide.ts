// The agent's decision at the door, pure: the face verdict against the tenant's policy, then the
// event's rules, with the same reasons the cloud uses (modules/checkin/rules.ts), so the cloud's
// re-check of a synced item flags only what changed while the device was offline.
import type { Replica } from '@portico/contract';

export type Outcome = 'success' | 'denied' | 'liveness_failed' | 'geofence_alert';
export type Reason = 'not_recognised' | 'capacity_reached' | 'event_closed' | 'method_not_allowed';

export interface Decision {
  outcome: Outcome;
  reason: Reason | null;
}

const CLOSED = new Set(['closed', 'cancelled']);

/** Recognised by face: the calibrated score at or above the tenant's threshold (the cloud's rule). */
export function faceVerdict(
  policy: Replica['policy'],
  best: { score: number } | undefined,
  livenessScore: number | null,
): 'recognised' | 'not_recognised' | 'liveness_failed' {
  if (policy.requireLiveness && (livenessScore ?? 0) < policy.livenessThreshold) return 'liveness_failed';
  return best && best.score >= policy.matchThreshold ? 'recognised' : 'not_recognised';
}

/** The event's rules for a recognised guest; `admitted` counts distinct guests already in. */
export function eventDecision(
  event: Replica['event'],
  method: 'facial' | 'qr',
  guest: { checkedIn: boolean },
  admitted: number,
): Decision {
  if (CLOSED.has(event.status)) return { outcome: 'denied', reason: 'event_closed' };
  if (event.checkinMethods.length > 0 && !event.checkinMethods.includes(method)) {
    return { outcome: 'denied', reason: 'method_not_allowed' };
  }
  if (event.capacity !== null && !guest.checkedIn && admitted >= event.capacity) {
    return { outcome: 'denied', reason: 'capacity_reached' };
  }
  return { outcome: 'success', reason: null };
}
