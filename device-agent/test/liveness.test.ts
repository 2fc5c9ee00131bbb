// The active liveness challenge passing on a real person, not only failing on still photos: ordered
// photos of one person from ../shared/eval-faces/att (a 1990s session of 10 photos each, greyscale,
// padded as that folder's README says) sent as the challenge's frames, through the real face engine
// and the agent's local API. Not a video: different photos of one session, in an order that shows
// the action. The same frames shuffled, or one frame repeated, fail. The same frames streamed one by
// one as they are taken (`POST /challenge/{nonce}/frames`, then identify with the nonce alone) give the
// same decisions, scores included.
//
// The passive anti-spoof model scores every photo of this set as a reproduction (0.00-0.04): they are
// scans of prints. The tenant's passive threshold is therefore 0 here, so what decides is the active
// challenge alone.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createFaceEngine, resolveModelDir, type FaceEngine } from '@portico/face-engine';
import type { Replica as Page } from '@portico/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicaAgent } from './support/replica-agent.js';
import { replicaGuest, replicaPage } from './support/replica-page.js';

const workspace = path.resolve(import.meta.dirname, '..', '..');
const ATT = path.resolve(
  process.env.PORTICO_EVAL_FACES_DIR ?? path.join(workspace, '..', 'shared', 'eval-faces'),
  'att',
);
const HAS_ATT = existsSync(path.join(ATT, 's1', '1.png'));
const HAS_MODELS = existsSync(path.join(resolveModelDir(), 'fr_feature.onnx'));
const TOKEN = 'evt_liveness_0123456789abcdef';
const SUBJECTS = 40;

// sharp is the face engine's dependency: its copy pads the photos.
type Sharp = (input: Buffer) => {
  extend(o: { top: number; bottom: number; left: number; right: number; background: string }): {
    png(): { toBuffer(): Promise<Buffer> };
  };
};
const sharp = createRequire(path.join(workspace, 'shared', 'face-engine', 'package.json'))('sharp') as Sharp;

/** `s<N>/<k>.png` on a grey canvas three times its size, in base64. */
async function photo(subject: number, k: number): Promise<string> {
  const raw = await readFile(path.join(ATT, `s${subject}`, `${k}.png`));
  const padded = await sharp(raw)
    .extend({ top: 112, bottom: 112, left: 92, right: 92, background: '#808080' })
    .png()
    .toBuffer();
  return padded.toString('base64');
}

describe.skipIf(!HAS_ATT || !HAS_MODELS)('active liveness challenge on photos of a real person', () => {
  let engine: FaceEngine;
  let running: Awaited<ReturnType<typeof startReplicaAgent>>;
  const url = () => running.agent.url;

  beforeAll(async () => {
    engine = await createFaceEngine({ workers: 1 });
    // Every subject enrolled from a photo the sequences below do not use.
    const items: Page['items'] = [];
    for (let s = 1; s <= SUBJECTS; s++) {
      const { embedding } = await engine.analyze(await photo(s, 9));
      items.push(replicaGuest(s, `Subject-${s} Att`, embedding));
    }
    // Active liveness is judged here; the passive score of these old photos is not.
    const page = replicaPage(items, { livenessThreshold: 0 });
    running = await startReplicaAgent(TOKEN, page, engine);
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
  });

  /** A fresh challenge of that action (asked for until one comes). */
  async function challengeOf(action: 'blink' | 'turn_head') {
    let challenge: { nonce: string; action: string };
    do challenge = (await (await fetch(`${url()}/challenge`)).json()) as typeof challenge;
    while (challenge.action !== action);
    return challenge.nonce;
  }
  const post = async (route: string, body: unknown) => {
    const res = await fetch(`${url()}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  /**
   * A challenge of that action answered with these frames in this order: all sent at once with
   * identify, or streamed one by one as a kiosk takes them and identify then given the nonce alone.
   */
  async function answer(action: 'blink' | 'turn_head', frames: string[], how: 'at once' | 'streamed') {
    const nonce = await challengeOf(action);
    if (how === 'at once') return post(`/events/${TOKEN}/identify`, { frames, nonce });
    for (const [i, frame] of frames.entries()) {
      expect(await post(`/challenge/${nonce}/frames`, { frame })).toEqual({
        status: 202,
        body: { received: i + 1 },
      });
    }
    return post(`/events/${TOKEN}/identify`, { nonce });
  }

  async function attempt(
    action: 'blink' | 'turn_head',
    subject: number,
    order: number[],
    how: 'at once' | 'streamed' = 'at once',
  ) {
    const res = await answer(action, await Promise.all(order.map((k) => photo(subject, k))), how);
    expect(res.status).toBe(200);
    return res.body as { outcome: string; guest: { displayName: string } | null };
  }

  // s1: facing the camera (1, yaw -3), turned (2 and 5, yaw -18 and -21), facing again (7, yaw 0).
  it('passes a head turn shown by one person turning and coming back, and admits them', async () => {
    const answer = await attempt('turn_head', 1, [1, 2, 5, 7]);
    expect(answer).toMatchObject({ outcome: 'success', guest: { displayName: 'Subject-1' } });
  }, 60_000);

  it('fails the same head-turn frames turned first and never coming back, and one frame repeated', async () => {
    expect((await attempt('turn_head', 1, [5, 2, 1, 7])).outcome).toBe('liveness_failed');
    expect((await attempt('turn_head', 1, [7, 7, 7, 7])).outcome).toBe('liveness_failed');
  }, 60_000);

  // s8: eyes open (1), closed (7), open again (2).
  it('passes a blink shown by one person with eyes open, closed, then open, and admits them', async () => {
    const answer = await attempt('blink', 8, [1, 7, 2]);
    expect(answer).toMatchObject({ outcome: 'success', guest: { displayName: 'Subject-8' } });
  }, 60_000);

  it('fails the same blink frames closed first, and an open-eyed frame repeated', async () => {
    expect((await attempt('blink', 8, [7, 1, 2])).outcome).toBe('liveness_failed');
    expect((await attempt('blink', 8, [1, 1, 1])).outcome).toBe('liveness_failed');
  }, 60_000);

  it('gives the same decisions and scores to the same frames streamed one by one as to them sent at once', async () => {
    const cases = [
      { action: 'turn_head', subject: 1, order: [1, 2, 5, 7], outcome: 'success' },
      { action: 'turn_head', subject: 1, order: [5, 2, 1, 7], outcome: 'liveness_failed' },
      { action: 'blink', subject: 8, order: [1, 7, 2], outcome: 'success' },
      { action: 'blink', subject: 8, order: [7, 1, 2], outcome: 'liveness_failed' },
    ] as const;
    const decision = ({
      outcome,
      reason,
      guest,
      score,
      threshold,
      livenessScore,
    }: Record<string, unknown>) => ({ outcome, reason, guest, score, threshold, livenessScore });
    for (const c of cases) {
      const atOnce = await attempt(c.action, c.subject, [...c.order]);
      const streamed = await attempt(c.action, c.subject, [...c.order], 'streamed');
      // The streamed frames are judged in the order taken: the same photos turned first fail.
      expect(streamed.outcome, `${c.action} ${c.order.join(',')}`).toBe(c.outcome);
      expect(decision(streamed)).toEqual(decision(atOnce));
    }
  }, 120_000);

  it('answers a streamed frame that is not an image at identify, as when it is sent at once', async () => {
    const frames = [await photo(1, 1), Buffer.from('not an image').toString('base64')];
    const atOnce = await answer('turn_head', frames, 'at once');
    expect(atOnce).toMatchObject({ status: 422, body: { code: expect.any(String) } });
    const streamed = await answer('turn_head', frames, 'streamed');
    // The same problem but for its request id, which is each answer's own.
    const withoutId = (a: typeof atOnce) => ({ ...a, body: { ...a.body, requestId: undefined } });
    expect(withoutId(streamed)).toEqual(withoutId(atOnce));
  }, 60_000);
});
