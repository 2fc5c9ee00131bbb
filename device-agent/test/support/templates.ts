// What the template writer (template-writer.ts) writes, so the test can tell each stored template's
// round from its vector.
import { EMBEDDING_MODEL_ID } from '@portico/face-engine';
import type { Replica as Page } from '@portico/contract';

export const TOKEN = 'evt_templates_0123456789';
export const GUESTS = 600;
export const PAGE = 200;
/** Guests of the first half given new templates each round. */
export const ROTATE = 120;

// A policy as a cloud from before the three answers sends it (only the accept line).
export const writerPolicy = {
  tenantId: 't',
  modelId: EMBEDDING_MODEL_ID,
  matchThreshold: 0.57,
  requireLiveness: false,
  livenessThreshold: 0.5,
  syncCheckinImages: false,
} as Page['policy'];
export const writerEvent: Page['event'] = {
  id: 'e',
  name: 'Gala',
  status: 'open',
  checkinMethods: [],
  capacity: null,
  geofence: null,
};

/** The guests of the first half whose templates change in a round. */
export const rotated = (round: number): number[] =>
  Array.from({ length: ROTATE }, (_, k) => (round * ROTATE + k) % (GUESTS / 2));

/** The last round up to `round` that changed guest `i`'s template (0: the full refresh). */
export function versionAt(i: number, round: number): number {
  for (let r = round; r > 0; r--) if (rotated(r).includes(i)) return r;
  return 0;
}

/** Guest `i`'s template in a round: a unit vector only that pair gives. */
export function templateOf(i: number, version: number): Float32Array {
  let a = (i * 7919 + version * 104729 + 1) >>> 0;
  const v = new Float32Array(512);
  let norm = 0;
  for (let d = 0; d < v.length; d++) {
    a ^= a << 13;
    a ^= a >>> 17;
    a ^= a << 5;
    v[d] = (a >>> 0) / 4294967296 - 0.5;
    norm += v[d]! * v[d]!;
  }
  return v.map((x) => x / Math.sqrt(norm));
}
