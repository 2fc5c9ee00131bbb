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

/** Whether the frames show the action: eyes closed in one frame and open in another, or a turn. */
export function actionPerformed(action: ChallengeAction, frames: readonly LivenessSignals[]): boolean {
  if (action === 'blink') {
    const closed = frames.some((f) => !f.eyes.leftOpen && !f.eyes.rightOpen);
    const opened = frames.some((f) => f.eyes.leftOpen && f.eyes.rightOpen);
    return closed && opened;
  }
  const yaws = frames.map((f) => f.pose.yaw);
  return yaws.length > 1 && Math.max(...yaws) - Math.min(...yaws) >= TURN_DEGREES;
}
