// The active liveness challenge: a fresh single-use nonce and an action (blink, or turn the head),
// judged over a short sequence of frames from the engine's eye-state and head-pose models. The
// passive anti-spoof score is judged by the caller against the tenant's threshold.
import { randomBytes, randomInt } from 'node:crypto';
import type { LivenessSignals } from '@portico/face-engine';

export type ChallengeAction = 'blink' | 'turn_head';

export interface Challenge {
  nonce: string;
  action: ChallengeAction;
  expiresAt: number;
}

const TTL_MS = 60_000;
/** Yaw spread across the frames that counts as turning the head. */
const TURN_DEGREES = 15;

export function createChallenges(now: () => number) {
  const open = new Map<string, Challenge>();
  return {
    issue(): Challenge {
      for (const [nonce, c] of open) if (c.expiresAt <= now()) open.delete(nonce);
      const challenge: Challenge = {
        nonce: randomBytes(16).toString('base64url'),
        action: randomInt(2) === 0 ? 'blink' : 'turn_head',
        expiresAt: now() + TTL_MS,
      };
      open.set(challenge.nonce, challenge);
      return challenge;
    },
    /** The challenge of a nonce, spent whatever the outcome; null when unknown, used or expired. */
    take(nonce: string): Challenge | null {
      const challenge = open.get(nonce);
      open.delete(nonce);
      return challenge && challenge.expiresAt > now() ? challenge : null;
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
