// What happens at the door: a face or a QR code in, a decision out, decided from the replica alone
// (online or not) and written to the durable queue before it is answered.
import { createHash } from 'node:crypto';
import { isFaceEngineError, type FaceEngine, type FaceProbe } from '@portico/face-engine';
import { SYNC_FRAME_MAX_BYTES, type SyncItem } from '@portico/contract';
import {
  admission,
  eventDenial,
  faceVerdict,
  geofenceStatus,
  isAdmitted,
  type Decision,
} from '@portico/checkin-policy';
import { uuidv7 } from './ids.js';
import { actionPerformed, CHALLENGE_MAX_FRAMES, createChallenges } from './liveness.js';
import type { Queue } from './queue.js';
import type { EventReplica, Replica } from './replica.js';

export class DoorError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds until a retry can succeed (sent as `Retry-After`). */
    readonly retryAfterS?: number,
  ) {
    super(message);
  }
}

export interface DoorAnswer {
  checkInId: string;
  outcome: Decision['outcome'];
  reason: Decision['reason'];
  guest: { displayName: string } | null;
  score: number | null;
  threshold: number | null;
  livenessScore: number | null;
  recordedAt: string;
}

/** Candidates searched beyond the best, so calibration can reorder close ones. */
const SEARCH_K = 3;
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

  /** The event's rules for a guest on the replica: the cloud's decision (@portico/checkin-policy). */
  const eventDecision = (
    replica: EventReplica & { event: NonNullable<EventReplica['event']> },
    method: SyncItem['method'],
    guest: { checkedIn: boolean },
  ): Decision => {
    let admitted = 0;
    for (const g of replica.guests.values()) if (g.checkedIn) admitted++;
    const denial = eventDenial(replica.event, method, { admitted, alreadyIn: guest.checkedIn });
    // The unit reports no location: a geofenced event is `unknown`, which admits, as in the cloud.
    return admission(denial, geofenceStatus(replica.event.geofence, undefined, 0));
  };

  async function record(
    replica: EventReplica & { event: NonNullable<EventReplica['event']> },
    method: SyncItem['method'],
    decision: Decision,
    guestId: string | null,
    scores: { score: number | null; threshold: number | null; livenessScore: number | null },
    frame?: string,
  ): Promise<DoorAnswer> {
    const at = deps.now();
    const guest = guestId ? replica.guests.get(guestId) : undefined;
    const item: SyncItem = {
      clientId: uuidv7(at),
      eventId: replica.event.id,
      ...(guest && { guestId: guest.guestId }),
      ...(guest?.personId && { personId: guest.personId }),
      method,
      outcome: decision.outcome,
      reason: decision.reason,
      recordedAt: new Date(at).toISOString(),
      score: scores.score,
      livenessScore: scores.livenessScore,
      ...(frame !== undefined && { frame }),
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
      guest: guest && decision.outcome !== 'denied' ? { displayName: firstName(guest.name) } : null,
      ...scores,
      recordedAt: item.recordedAt,
    };
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
     */
    async identify(token: string, input: { frames?: string[] | undefined; nonce?: string | undefined }) {
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
      const streamed = input.frames ? null : taken!.frames;
      const frames = streamed ? streamed.map((f) => f.frame) : input.frames!;
      if (frames.length === 0) {
        throw new DoorError(400, 'no_frames', 'No frames were streamed for this nonce');
      }
      // The challenge whose action is judged: only when the tenant requires liveness.
      const challenge = policy.requireLiveness ? taken : null;
      const face = deps.face;
      let main: FaceProbe;
      let mainFrame = frames[0]!;
      let active = true;
      try {
        if (challenge) {
          const analyses = await Promise.all(
            streamed
              ? streamed.map((f) => f.analysis)
              : frames.map((f) => face.analyze(f, { liveness: true })),
          );
          // The most frontal frame is matched and judged for passive liveness.
          const frontal = analyses.reduce(
            (best, a, i) => (Math.abs(a.pose.yaw) < Math.abs(analyses[best]!.pose.yaw) ? i : best),
            0,
          );
          main = analyses[frontal]!;
          mainFrame = frames[frontal]!;
          active = actionPerformed(
            challenge.action,
            analyses.flatMap((a) => (a.liveness ? [a.liveness] : [])),
          );
        } else {
          main = await (streamed ? streamed[0]!.analysis : face.probe(frames[0]!));
        }
      } catch (error) {
        if (isFaceEngineError(error)) throw new DoorError(422, error.code, error.message);
        throw error;
      }
      // Without liveness required, a streamed frame's passive score is not the decision's.
      const livenessScore = challenge && main.liveness ? round(main.liveness.score) : null;
      const embedding = main.embeddings[policy.modelId];
      if (!embedding)
        throw new DoorError(503, 'engine_unavailable', `The engine cannot compute ${policy.modelId}`);
      const hits = replica.index.calibrate(embedding, replica.index.search(embedding, SEARCH_K));
      const best = hits[0];
      const verdict = active ? faceVerdict(policy, best, livenessScore) : 'liveness_failed';
      const guest = verdict === 'recognised' ? replica.guests.get(best!.id) : undefined;
      const decision: Decision =
        verdict === 'liveness_failed'
          ? { outcome: 'liveness_failed', reason: null }
          : guest
            ? eventDecision(replica, 'facial', guest)
            : { outcome: 'denied', reason: 'not_recognised' };
      return record(
        replica,
        'facial',
        decision,
        guest?.guestId ?? null,
        {
          score: best ? round(best.score) : null,
          threshold: verdict === 'liveness_failed' ? null : policy.matchThreshold,
          livenessScore,
        },
        uploadedFrame(policy, mainFrame),
      );
    },

    /** By the QR code of an invitation (its link token, or the whole link), checked against the replica. */
    async qr(token: string, code: string) {
      const replica = replicaOf(token);
      const linkToken = code.trim().split('/').pop() ?? '';
      const guestId = replica.byQr.get(createHash('sha256').update(linkToken).digest('hex'));
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
