// What happens at the door: a face or a QR code in, a decision out, decided from the replica alone
// (online or not) and written to the durable queue before it is answered, saying whether the cloud
// was reachable at the time.
import { createHash, randomBytes } from 'node:crypto';
import {
  identify,
  isFaceEngineError,
  type FaceAnalysis,
  type FaceEngine,
  type FaceProbe,
} from '@portico/face-engine';
import {
  AGENT_STEP_UP_TTL_MS,
  SYNC_FRAME_MAX_BYTES,
  type AgentChallengeRequired as ChallengeRequired,
  type SyncItem,
} from '@portico/contract';
import {
  admission,
  eventVerdict,
  FACE_LINE_DEFAULTS,
  faceDecision,
  geofenceStatus,
  isAdmitted,
  passiveLiveness,
  probeQuality,
  retakeReasons,
  type Decision,
  type FacePolicy,
  type LivenessChallengeMode,
} from '@portico/checkin-policy';
import { uuidv7 } from './ids.js';
import { actionPerformed, CHALLENGE_MAX_FRAMES, createChallenges, type Challenge } from './liveness.js';
import type { Queue } from './queue.js';
import type { EventReplica, Replica } from './replica.js';
import type { StepUpFactor, QueuedItem } from './sync-item.js';

export class DoorError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds until a retry can succeed (sent as `Retry-After`). */
    readonly retryAfterS?: number,
    /** Sent at the problem's top level (a retake's `reasons` and `quality`, as the cloud answers them). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** A decision as the door records it: the policy's, or a failed step-up. */
type DoorDecision = { outcome: Decision['outcome']; reason: QueuedItem['reason'] };

export interface DoorAnswer {
  checkInId: string;
  outcome: Decision['outcome'];
  reason: QueuedItem['reason'];
  guest: { displayName: string } | null;
  score: number | null;
  threshold: number | null;
  livenessScore: number | null;
  recordedAt: string;
}

/** Between the two lines: the person proves with a second factor bound to the candidate. */
export interface StepUpRequired {
  outcome: 'step_up_required';
  attemptId: string;
  /** The factors this device checks offline; never who the candidate is. */
  factors: StepUpFactor[];
  expiresAt: string;
}

/** How a step-up is completed: the candidate's invitation QR code, or staff (PIN, or their session). */
export type StepUpProof =
  | { factor: 'qr'; code: string }
  | { factor: 'staff'; pin?: string | undefined; confirmed?: boolean | undefined };

/** How long a step-up waits for its second factor. */
export const STEP_UP_TTL_MS = AGENT_STEP_UP_TTL_MS;
/** Open step-ups held at most (a kiosk has one at a time): one more drops the oldest. */
const MAX_OPEN_STEP_UPS = 16;
const OFFLINE_FACTORS: readonly StepUpFactor[] = ['qr', 'staff'];

/**
 * The face lines of a replica's policy. A cloud from before the three answers sends only
 * `matchThreshold`: the refuse line, the quality floor and the factors then take their defaults; one
 * from before `livenessChallenge` sends none, read as `always` (what its doors did).
 */
function faceLines(
  policy: NonNullable<EventReplica['policy']>,
): FacePolicy & { stepUpFactors: StepUpFactor[]; livenessChallenge: LivenessChallengeMode } {
  const p = policy as typeof policy &
    Partial<{ stepUpThreshold: number; probeQualityMin: number; stepUpFactors: string[] }>;
  return {
    matchThreshold: p.matchThreshold,
    stepUpThreshold: p.stepUpThreshold ?? FACE_LINE_DEFAULTS.stepUpThreshold,
    probeQualityMin: p.probeQualityMin ?? FACE_LINE_DEFAULTS.probeQualityMin,
    requireLiveness: p.requireLiveness,
    livenessThreshold: p.livenessThreshold,
    livenessChallenge: p.livenessChallenge ?? 'always',
    stepUpFactors: (p.stepUpFactors ?? OFFLINE_FACTORS).filter((f): f is StepUpFactor =>
      OFFLINE_FACTORS.includes(f as StepUpFactor),
    ),
  };
}

const qrHashOf = (code: string) =>
  createHash('sha256')
    .update(code.trim().split('/').pop() ?? '')
    .digest('hex');

const round = (n: number) => Math.round(n * 10_000) / 10_000;
const firstName = (name: string) => name.trim().split(/\s+/)[0] ?? '';
const DATA_URL = /^data:image\/[a-z+]+;base64,/i;

/**
 * The frame to upload with a face decision, when the tenant keeps check-in images (the replica's
 * policy says so): base64 without a data-URL prefix, none over the cloud's limit. Otherwise none: the
 * frame never leaves the device. It waits in the queue sealed with the rest of the item.
 */
function uploadedFrame(policy: { syncCheckinImages: boolean }, frame: string): string | undefined {
  if (!policy.syncCheckinImages) return undefined;
  const base64 = frame.trim().replace(DATA_URL, '').replace(/\s+/g, '');
  return Buffer.byteLength(base64, 'base64') <= SYNC_FRAME_MAX_BYTES ? base64 : undefined;
}

export function createDoor(deps: {
  replica: Replica;
  queue: Queue;
  face: FaceEngine | null;
  maxReplicaAgeMs: number;
  now: () => number;
  /**
   * Whether the cloud answered the sync loop's last exchange: a decision taken while it did not is
   * uploaded as `decidedOffline` (the cloud's webhook says `offline` only for those).
   */
  online: () => boolean;
  /** Called after each decision is queued (the sync loop sends it when online). */
  decided: () => void;
}) {
  const challenges = createChallenges(deps.now);

  function replicaOf(token: string): EventReplica & {
    event: NonNullable<EventReplica['event']>;
    policy: NonNullable<EventReplica['policy']>;
  } {
    const replica = deps.replica.get(token);
    if (!replica) throw new DoorError(404, 'unknown_event', 'This device does not serve that event');
    if (!replica.event || !replica.policy) {
      throw new DoorError(
        503,
        'replica_empty',
        'The event has not been replicated yet: connect to the cloud once',
      );
    }
    return replica as never;
  }

  /**
   * The event's rules for a guest on the replica: the cloud's decision (@portico/checkin-policy), the
   * event's re-entry rule included (a guest checked in, here or as the replica says, is returning).
   * A flag the rule sets (`flag`) is the cloud's to record when the decision arrives.
   */
  const eventDecision = (
    replica: EventReplica & { event: NonNullable<EventReplica['event']> },
    method: SyncItem['method'],
    guest: { checkedIn: boolean },
  ): Decision => {
    let admitted = 0;
    for (const g of replica.guests.values()) if (g.checkedIn) admitted++;
    const { denial } = eventVerdict(replica.event, method, { admitted, alreadyIn: guest.checkedIn });
    // The unit reports no location: a geofenced event is `unknown`, which admits, as in the cloud.
    return admission(denial, geofenceStatus(replica.event.geofence, undefined, 0));
  };

  async function record(
    replica: EventReplica & { event: NonNullable<EventReplica['event']> },
    method: SyncItem['method'],
    decision: DoorDecision,
    guestId: string | null,
    scores: { score: number | null; threshold: number | null; livenessScore: number | null },
    frame?: string,
    stepUpFactor?: StepUpFactor,
  ): Promise<DoorAnswer> {
    const at = deps.now();
    const guest = guestId ? replica.guests.get(guestId) : undefined;
    const item: QueuedItem = {
      clientId: uuidv7(at),
      eventId: replica.event.id,
      ...(guest && { guestId: guest.guestId }),
      ...(guest?.personId && { personId: guest.personId }),
      method,
      outcome: decision.outcome,
      reason: decision.reason,
      recordedAt: new Date(at).toISOString(),
      decidedOffline: !deps.online(),
      score: scores.score,
      livenessScore: scores.livenessScore,
      ...(frame !== undefined && { frame }),
      ...(stepUpFactor && { stepUpFactor }),
    };
    // Durable before anyone hears the answer.
    await deps.queue.add(item, at);
    if (guest && isAdmitted(decision.outcome)) {
      await deps.replica.markCheckedIn(replica.token, guest.guestId, item.recordedAt);
    }
    deps.decided();
    return {
      checkInId: item.clientId,
      outcome: decision.outcome,
      reason: decision.reason,
      // A denial names nobody, but for a guest already in (re-entry `refuse`): the kiosk says so by name.
      guest:
        guest && (decision.outcome !== 'denied' || decision.reason === 'already_checked_in')
          ? { displayName: firstName(guest.name) }
          : null,
      ...scores,
      recordedAt: item.recordedAt,
    };
  }

  /** Step-ups waiting for their second factor, by attempt id (in memory: a restart forgets them). */
  const stepUps = new Map<
    string,
    {
      token: string;
      guestId: string;
      expiresAt: number;
      used: boolean;
      factors: StepUpFactor[];
      scores: { score: number | null; threshold: number | null; livenessScore: number | null };
      frame: string | undefined;
    }
  >();
  function openStepUp(entry: Parameters<(typeof stepUps)['set']>[1]): StepUpRequired {
    for (const [id, s] of stepUps) if (s.expiresAt + STEP_UP_TTL_MS <= deps.now()) stepUps.delete(id);
    for (const id of stepUps.keys()) {
      if (stepUps.size < MAX_OPEN_STEP_UPS) break;
      stepUps.delete(id);
    }
    const attemptId = randomBytes(16).toString('base64url');
    stepUps.set(attemptId, entry);
    return {
      outcome: 'step_up_required',
      attemptId,
      factors: entry.factors,
      expiresAt: new Date(entry.expiresAt).toISOString(),
    };
  }

  /**
   * The face decision on a challenge's frames (streamed ones carry their analysis, under way) or on
   * frames sent at once. With liveness required, `challenge`'s action is judged on the frames, or, on a
   * passive look, the passive score alone settles liveness or asks for the challenge.
   */
  async function decideFace(
    replica: ReturnType<typeof replicaOf>,
    frames: readonly { frame: string; analysis?: Promise<FaceAnalysis> }[],
    challenge: Challenge | null,
    passive: boolean,
  ): Promise<DoorAnswer | StepUpRequired | ChallengeRequired> {
    const { policy, token } = replica;
    if (frames.length === 0) {
      throw new DoorError(400, 'no_frames', 'No frames were streamed for this nonce');
    }
    const lines = faceLines(policy);
    // The challenge whose action (or passive look) is judged: only when the tenant requires liveness.
    const judged = policy.requireLiveness ? challenge : null;
    const face = deps.face!;
    let main: FaceProbe;
    let mainFrame = frames[0]!.frame;
    let live = true;
    let challengeNeeded = false;
    try {
      if (judged) {
        const analyses = await Promise.all(
          frames.map((f) => f.analysis ?? face.analyze(f.frame, { liveness: true })),
        );
        // The most frontal frame is matched and judged for passive liveness.
        const frontal = analyses.reduce(
          (best, a, i) => (Math.abs(a.pose.yaw) < Math.abs(analyses[best]!.pose.yaw) ? i : best),
          0,
        );
        main = analyses[frontal]!;
        mainFrame = frames[frontal]!.frame;
        if (passive) {
          const look = passiveLiveness(
            lines,
            analyses.map((a, i) => ({ score: a.liveness?.score ?? 0, picture: frames[i]!.frame })),
          );
          live = look !== 'spoof';
          challengeNeeded = look === 'challenge';
        } else {
          live = actionPerformed(
            judged.action,
            analyses.flatMap((a) => (a.liveness ? [a.liveness] : [])),
          );
        }
      } else {
        main = await (frames[0]!.analysis ?? face.probe(mainFrame));
      }
    } catch (error) {
      if (isFaceEngineError(error)) throw new DoorError(422, error.code, error.message);
      throw error;
    }
    // A picture good enough to judge, its liveness not settled by the look: the action decides. Nothing
    // is searched yet, so the answer says nothing of whom the face resembles.
    if (challengeNeeded && judged && probeQuality(main) >= lines.probeQualityMin) {
      return { outcome: 'challenge_required', nonce: judged.nonce, action: judged.action };
    }
    // Without liveness required, a streamed frame's passive score is not the decision's.
    const livenessScore = judged && main.liveness ? round(main.liveness.score) : null;
    const embedding = main.embeddings[policy.modelId];
    if (!embedding)
      throw new DoorError(503, 'engine_unavailable', `The engine cannot compute ${policy.modelId}`);
    // The cloud's and the evaluation's search: the same candidates, so the same calibrated scores.
    const hits = identify(replica.index, embedding);
    const best = hits[0];
    let answer = faceDecision(lines, main, best, livenessScore);
    // The challenge's action is judged after the frame's quality: a poor frame is retaken first.
    if (!live && answer !== 'retake') answer = 'liveness_failed';
    if (answer === 'retake') {
      const reasons = retakeReasons(main, lines.probeQualityMin);
      const quality = round(probeQuality(main));
      throw new DoorError(
        422,
        'face_retake',
        `The picture is too poor to decide on (quality ${quality}): ${reasons.join(', ')}`,
        undefined,
        { reasons, quality },
      );
    }
    const candidate = best ? replica.guests.get(best.id) : undefined;
    const scores = {
      score: best ? round(best.score) : null,
      threshold: answer === 'liveness_failed' ? null : policy.matchThreshold,
      livenessScore,
    };
    const frame = uploadedFrame(policy, mainFrame);
    // Between the lines, with a factor this device can check: the person proves who they are.
    if (answer === 'step_up' && candidate && lines.stepUpFactors.length > 0) {
      return openStepUp({
        token,
        guestId: candidate.guestId,
        expiresAt: deps.now() + STEP_UP_TTL_MS,
        used: false,
        factors: lines.stepUpFactors,
        scores,
        frame,
      });
    }
    const guest = answer === 'accept' ? candidate : undefined;
    const decision: Decision =
      answer === 'liveness_failed'
        ? { outcome: 'liveness_failed', reason: null }
        : guest
          ? eventDecision(replica, 'facial', guest)
          : { outcome: 'denied', reason: 'not_recognised' };
    return record(replica, 'facial', decision, guest?.guestId ?? null, scores, frame);
  }

  const invalidNonce = () =>
    new DoorError(400, 'invalid_nonce', 'Send the nonce of a fresh challenge (GET /challenge)');

  return {
    challenge: () => challenges.issue(),

    /**
     * One frame of a challenge in progress, sent as soon as it is taken: kept with the challenge, in the
     * order received, and analysed at once, so that identify after the last frame waits for that one
     * alone. An engine error (not an image, no face) is kept and answered by identify, as for frames
     * sent at once.
     */
    streamFrame(nonce: string, frame: string): { received: number } {
      if (!deps.face)
        throw new DoorError(503, 'engine_unavailable', 'This device runs without a face engine');
      const challenge = challenges.find(nonce);
      if (!challenge) throw invalidNonce();
      if (challenge.frames.length >= CHALLENGE_MAX_FRAMES) {
        throw new DoorError(
          409,
          'too_many_frames',
          `This challenge already has its ${CHALLENGE_MAX_FRAMES} frames: identify with its nonce`,
        );
      }
      const analysis = deps.face.analyze(frame, { liveness: true });
      analysis.catch(() => undefined);
      challenge.frames.push({ frame, analysis });
      return { received: challenge.frames.length };
    },

    /**
     * By face. With the tenant requiring liveness: the nonce of a fresh challenge and a few frames that
     * show its action, plus the passive score; without, one frame is enough (the first). The frames come
     * in the body, or (no `frames`) are those streamed for the nonce, which is then required whatever
     * the policy. Either way the nonce is spent, with its streamed frames.
     *
     * `passive`: the first look at a face coming into view (frames streamed for the nonce). Decided on
     * at once when the passive score settles liveness (`passiveLiveness`, the tenant's
     * `livenessChallenge`); otherwise answered `challenge_required` with the nonce kept open, its
     * frames kept, for the action's frames to follow and identify to be called again without `passive`.
     */
    async identify(
      token: string,
      input: { frames?: string[] | undefined; nonce?: string | undefined; passive?: boolean | undefined },
    ): Promise<DoorAnswer | StepUpRequired | ChallengeRequired> {
      const passive = input.passive === true;
      const replica = replicaOf(token);
      const { policy } = replica;
      const age = deps.now() - replica.refreshedAt;
      if (age > deps.maxReplicaAgeMs) {
        throw new DoorError(
          409,
          'replica_too_old',
          `Face admission is stopped: the guest list was last refreshed ${Math.round(age / 60_000)} min ago ` +
            `(maximum ${Math.round(deps.maxReplicaAgeMs / 60_000)} min), so revoked biometrics could still pass. Use QR codes until the cloud is reachable.`,
        );
      }
      // Checked before the engine: the replica's age is the kiosk's problem, whatever its hardware.
      if (!deps.face)
        throw new DoorError(503, 'engine_unavailable', 'This device runs without a face engine');
      if (passive) {
        const open = input.frames || input.nonce === undefined ? null : challenges.find(input.nonce);
        if (!open) throw invalidNonce();
        if (open.looked) {
          throw new DoorError(
            409,
            'look_answered',
            'This challenge has had its passive look: stream the action and identify without `passive`',
          );
        }
        // Kept open only when the answer asks for the challenge; spent by any other answer or error.
        try {
          const answer = await decideFace(replica, open.frames, open, true);
          if (answer.outcome === 'challenge_required') open.looked = true;
          else challenges.take(open.nonce);
          return answer;
        } catch (error) {
          challenges.take(open.nonce);
          throw error;
        }
      }
      // The nonce is spent whatever the outcome, with the frames streamed for it.
      const taken = input.nonce === undefined ? null : challenges.take(input.nonce);
      if (input.frames && taken?.frames.length) {
        throw new DoorError(
          400,
          'ambiguous_frames',
          'Frames were streamed for this nonce: identify with the nonce alone, or use a fresh challenge',
        );
      }
      if ((!input.frames || policy.requireLiveness) && !taken) throw invalidNonce();
      return decideFace(replica, input.frames?.map((frame) => ({ frame })) ?? taken!.frames, taken, false);
    },

    /**
     * Completes a step-up, once, within STEP_UP_TTL_MS: the candidate's own invitation QR code, or staff
     * (`confirmStaff` throws unless the PIN or the staff session is right; a wrong PIN leaves the
     * attempt open, counted towards the staff lock-out). The right factor admits under the event's
     * rules, as an accepted face would, recorded with `stepUpFactor`; another guest's QR code, or staff
     * saying no, is a denial `step_up_failed`. Unknown 404, expired 410, used 409.
     */
    async completeStepUp(attemptId: string, proof: StepUpProof, confirmStaff: () => void) {
      const attempt = stepUps.get(attemptId);
      if (!attempt) throw new DoorError(404, 'unknown_attempt', 'No such step-up on this device');
      if (attempt.used) throw new DoorError(409, 'step_up_used', 'This step-up has already been completed');
      if (attempt.expiresAt <= deps.now()) {
        throw new DoorError(410, 'step_up_expired', 'This step-up has expired: check in again');
      }
      if (!attempt.factors.includes(proof.factor)) {
        throw new DoorError(400, 'factor_not_allowed', `This step-up takes ${attempt.factors.join(' or ')}`);
      }
      if (proof.factor === 'staff') confirmStaff();
      attempt.used = true;
      const replica = replicaOf(attempt.token);
      const guest = replica.guests.get(attempt.guestId);
      const proven =
        guest !== undefined &&
        (proof.factor === 'qr' ? qrHashOf(proof.code) === guest.qrHash : proof.confirmed !== false);
      const decision: DoorDecision = proven
        ? eventDecision(replica, 'facial', guest)
        : { outcome: 'denied', reason: 'step_up_failed' };
      return record(
        replica,
        'facial',
        decision,
        attempt.guestId,
        attempt.scores,
        attempt.frame,
        proof.factor,
      );
    },

    /** The candidate of an open step-up, for staff to check against a document (staff session only). */
    stepUpCandidate(attemptId: string): { name: string; expiresAt: string } {
      const attempt = stepUps.get(attemptId);
      if (!attempt) throw new DoorError(404, 'unknown_attempt', 'No such step-up on this device');
      if (attempt.used) throw new DoorError(409, 'step_up_used', 'This step-up has already been completed');
      if (attempt.expiresAt <= deps.now()) {
        throw new DoorError(410, 'step_up_expired', 'This step-up has expired: check in again');
      }
      const guest = deps.replica.get(attempt.token)?.guests.get(attempt.guestId);
      if (!guest) throw new DoorError(404, 'unknown_guest', "No such guest on this event's list");
      return { name: guest.name, expiresAt: new Date(attempt.expiresAt).toISOString() };
    },

    /** By the QR code of an invitation (its link token, or the whole link), checked against the replica. */
    async qr(token: string, code: string) {
      const replica = replicaOf(token);
      const guestId = replica.byQr.get(qrHashOf(code));
      const guest = guestId ? replica.guests.get(guestId) : undefined;
      const decision: Decision = guest
        ? eventDecision(replica, 'qr', guest)
        : { outcome: 'denied', reason: 'not_recognised' };
      return record(replica, 'qr', decision, guest?.guestId ?? null, {
        score: null,
        threshold: null,
        livenessScore: null,
      });
    },

    /**
     * By hand, by staff (the staff session is checked by the caller): a guest of the replica, under the
     * event's rules for the `manual` method, queued and synced like any other decision.
     */
    async manual(token: string, guestId: string) {
      const replica = replicaOf(token);
      const guest = replica.guests.get(guestId);
      if (!guest) throw new DoorError(404, 'unknown_guest', "No such guest on this event's list");
      return record(replica, 'manual', eventDecision(replica, 'manual', guest), guest.guestId, {
        score: null,
        threshold: null,
        livenessScore: null,
      });
    },
  };
}

export type Door = ReturnType<typeof createDoor>;
