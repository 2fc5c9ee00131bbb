// The active liveness challenge: a fresh single-use nonce and an action (blink, or turn the head),
// judged over a short sequence of frames from the engine's eye-state and head-pose models. The
// passive anti-spoof score is judged by the caller against the tenant's threshold.
import { randomBytes, randomInt } from 'node:crypto';
import type { ChallengeAction } from '@portico/checkin-policy';
import type { FaceAnalysis } from '@portico/face-engine';

// The judging rule is shared with the cloud's challenge for anonymous web callers.
export { actionPerformed, type ChallengeAction } from '@portico/checkin-policy';

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
  /** Its passive look was answered `challenge_required`: the action's frames follow. */
  looked: boolean;
}

const TTL_MS = 60_000;
/**
 * The most frames one challenge takes, streamed or sent at once: the kiosk's passive look (2) and the
 * action (7), and one to spare.
 */
export const CHALLENGE_MAX_FRAMES = 10;
/** Open challenges held at most: issuing one more drops the oldest (a kiosk needs one at a time). */
export const MAX_OPEN_CHALLENGES = 8;

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
        looked: false,
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
