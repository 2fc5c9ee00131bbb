// The active liveness challenge: a fresh single-use nonce and an action (blink, or turn the head),
// judged over a short sequence of frames from the engine's eye-state and head-pose models. The
// passive anti-spoof score is judged by the caller against the tenant's threshold.
import { randomBytes, randomInt } from 'node:crypto';
import type { FaceAnalysis, LivenessSignals } from '@portico/face-engine';

export type ChallengeAction = 'blink' | 'turn_head';

/** A frame the kiosk sent while the person performed the challenge, and its analysis (started at once). */
export interface StreamedFrame {
  frame: string;
  /** Settles when the engine is done; a rejection is handled, and answered by identify. */
  analysis: Promise<FaceAnalysis>;
}

export interface Challenge {
  nonce: string;
  action: ChallengeAction;
  expiresAt: number;
  /** The frames streamed for this challenge, in the order received. */
  frames: StreamedFrame[];
}

const TTL_MS = 60_000;
/** The most frames one challenge takes, streamed or sent at once. */
export const CHALLENGE_MAX_FRAMES = 8;
/** Open challenges held at most: issuing one more drops the oldest (a kiosk needs one at a time). */
export const MAX_OPEN_CHALLENGES = 8;
/** Yaw spread across the frames that counts as turning the head. */
const TURN_DEGREES = 15;

/**
 * The open challenges, in memory. A challenge and its streamed frames (with their analyses) are freed
 * when it is taken, when it expires (a timer, even with no further call), or when it is the oldest of
 * MAX_OPEN_CHALLENGES and another is issued.
 */
export function createChallenges(now: () => number) {
  const open = new Map<string, { challenge: Challenge; timer: NodeJS.Timeout }>();
  const drop = (nonce: string) => {
    clearTimeout(open.get(nonce)?.timer);
    open.delete(nonce);
  };
  const find = (nonce: string): Challenge | null => {
    const entry = open.get(nonce);
    if (entry && entry.challenge.expiresAt > now()) return entry.challenge;
    drop(nonce);
    return null;
  };
  return {
    issue(): Challenge {
      for (const [nonce, { challenge }] of open) if (challenge.expiresAt <= now()) drop(nonce);
      for (const nonce of open.keys()) {
        if (open.size < MAX_OPEN_CHALLENGES) break;
        drop(nonce);
      }
      const challenge: Challenge = {
        nonce: randomBytes(16).toString('base64url'),
        action: randomInt(2) === 0 ? 'blink' : 'turn_head',
        expiresAt: now() + TTL_MS,
        frames: [],
      };
      const timer = setTimeout(() => drop(challenge.nonce), TTL_MS).unref();
      open.set(challenge.nonce, { challenge, timer });
      return challenge;
    },
    /**
     * The open challenge of a nonce, not spent (its frames are streamed into it); null when unknown,
     * used or expired.
     */
    find,
    /** The challenge of a nonce, spent whatever the outcome; null when unknown, used or expired. */
    take(nonce: string): Challenge | null {
      const challenge = find(nonce);
      drop(nonce);
      return challenge;
    },
  };
}

const open = (f: LivenessSignals) => f.eyes.leftOpen && f.eyes.rightOpen;
const closed = (f: LivenessSignals) => !f.eyes.leftOpen && !f.eyes.rightOpen;

/**
 * Whether the frames, in the order they were taken, show the action. A blink: eyes open, later both
 * closed, later open again. A head turn (the kiosk asks "turn your head left, then back"): a frame whose
 * yaw is at least TURN_DEGREES away from an earlier frame's and from a later frame's. The same frames
 * in another order may not show it; the same frame repeated never does.
 */
export function actionPerformed(action: ChallengeAction, frames: readonly LivenessSignals[]): boolean {
  for (let j = 1; j < frames.length - 1; j++) {
    const middle = frames[j]!;
    const before = frames.slice(0, j);
    const after = frames.slice(j + 1);
    if (action === 'blink') {
      if (closed(middle) && before.some(open) && after.some(open)) return true;
    } else {
      const away = (f: LivenessSignals) => Math.abs(f.pose.yaw - middle.pose.yaw) >= TURN_DEGREES;
      if (before.some(away) && after.some(away)) return true;
    }
  }
  return false;
}
