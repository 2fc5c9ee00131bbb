// What the kiosk shows for an answer of the agent (a check-in by face, QR code or step-up): the next
// screen. The answers' schemas are the agent's (`@portico/contract`, agent.ts).
import type { AgentChallengeRequired, AgentStepUpRequired, DoorAnswer } from '@portico/contract';
import type { AgentReply } from './agent-client.js';
import { failure, kiosk, type Arrival, type RetakeReason, type Screen } from './core.js';

/** After this many retakes in a row, a poor picture is "no face" rather than another retake. */
const MAX_RETAKES = 3;

export type IdentifyReply = AgentReply<
  Partial<DoorAnswer | AgentStepUpRequired | AgentChallengeRequired> & { reasons?: RetakeReason[] }
>;

/** A guest's first name as a greeting shows it. */
export function capitalised(displayName: string | undefined): string {
  const first = (displayName ?? '').trim().split(/\s+/)[0] ?? '';
  return first.charAt(0).toUpperCase() + first.slice(1);
}

const result = (look: string, title: string, sub: string, retry: boolean, arrival?: Arrival): Screen => ({
  kind: 'result',
  look,
  title,
  sub,
  retry,
  ...(arrival && { arrival }),
});

/**
 * The screen after an answer. `method`: how the guest came (a face, their QR code, a step-up's second
 * factor); `arrival`: the face flow's person, carried to the result (the time per person) or back to
 * the camera after a retake.
 */
export function screenAfter(
  { status, body: a }: IdentifyReply,
  method: 'face' | 'qr' | 'step-up',
  arrival?: Arrival,
): Screen {
  const { t } = kiosk;
  if (status === 422 && a.code === 'face_retake' && arrival && arrival.retakes < MAX_RETAKES) {
    return {
      kind: 'camera',
      arrival: { ...arrival, retakes: arrival.retakes + 1 },
      retake: a.reasons ?? [],
    };
  }
  if (status === 422) return result('no-face', t.noFace, '', true, arrival);
  if (method === 'step-up' && (status === 404 || status === 409 || status === 410)) {
    return failure(t.stepUpExpired);
  }
  if (status === 403 && a.code === 'device_not_authorised') return failure(t.unauthorised);
  if (status !== 200) return failure();
  if (a.outcome === 'challenge_required' && arrival && a.nonce && a.action) {
    return { kind: 'challenge', arrival: { ...arrival, challenged: true }, nonce: a.nonce, action: a.action };
  }
  if (a.outcome === 'step_up_required') return { kind: 'step-up', stepUp: a as AgentStepUpRequired };
  const answer = a as Partial<DoorAnswer>;
  const name = capitalised(answer.guest?.displayName);
  switch (answer.outcome) {
    case 'success':
      return result('welcome', t.welcome(name), t.welcomeSub, false, arrival);
    case 'liveness_failed':
      return result('liveness-failed', t.livenessFailed, t.livenessFailedSub, true, arrival);
    case 'geofence_alert':
      return result('geofence', t.geofence, t.geofenceSub, false, arrival);
    case 'denied':
      break;
    default:
      return failure();
  }
  switch (answer.reason) {
    case 'event_closed':
      return result('closed', t.closed, t.closedSub, false, arrival);
    case 'already_checked_in':
      return result('already-in', t.alreadyInTitle(name), t.alreadyInSub, false, arrival);
    case 'capacity_reached':
      return result('full', t.full, t.fullSub, false, arrival);
    case 'method_not_allowed':
      return result('closed', t.methodNotAllowed, t.unavailableSub, false, arrival);
    case 'step_up_failed':
      return result('step-up-failed', t.stepUpFailed, t.stepUpFailedSub, false, arrival);
    default:
      return method === 'qr'
        ? result('not-recognised', t.qrUnknown, t.qrUnknownSub, false)
        : result('not-recognised', t.notRecognised, t.notRecognisedSub, true, arrival);
  }
}
