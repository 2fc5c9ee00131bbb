// The passive look first (tenant setting `livenessChallenge`): a face coming into view is decided on
// its first two frames when the passive anti-spoof score settles liveness, and asked for the active
// challenge otherwise. Real photos of ../shared/faces through the real face engine and the agent's
// local API: the bbt crops as they are, Penny's two photos
// scoring 0.99 and 0.998 live, Leonard's 0.76 and 0.90, and the two presentation attacks of `spoof/`
// (a photo of a photo, a photo of a screen) under 0.004.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createFaceEngine, resolveModelDir, type FaceEngine } from '@portico/face-engine';
import type { Replica as Page } from '@portico/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicaAgent } from './support/replica-agent.js';
import { replicaGuest, replicaPage } from './support/replica-page.js';

const workspace = path.resolve(import.meta.dirname, '..', '..');
const FACES = path.resolve(process.env.PORTICO_FACES_DIR ?? path.join(workspace, '..', 'shared', 'faces'));
const HAS_FACES = existsSync(path.join(FACES, 'bbt', 'penny', 'penny3.png'));
const HAS_MODELS = existsSync(path.join(resolveModelDir(), 'fr_feature.onnx'));
const TOKEN = 'evt_passive_0123456789abcdef';
// Liveness is what is tested: the face lines are low enough that these crops are accepted on the face.
const LINES = { matchThreshold: 0.3, stepUpThreshold: 0.3 };

/** A photo of ../shared/faces in base64, as it is (padding the crops on a flat canvas makes the passive
 * model see a reproduction). */
const photo = async (file: string) => (await readFile(path.join(FACES, file))).toString('base64');

describe.skipIf(!HAS_FACES || !HAS_MODELS)('the passive look before the active challenge', () => {
  let engine: FaceEngine;
  let items: Page['items'];
  // One agent at a time (their stores would share a name): the tenant's setting, then `always`.
  let running: Awaited<ReturnType<typeof startReplicaAgent>> | undefined;
  let whenUncertain: string;
  const serve = async (livenessChallenge: 'when_uncertain' | 'always') => {
    await running?.stop();
    // Stopping an agent closes its engine: each gets its own.
    const own = await createFaceEngine({ workers: 1 });
    running = await startReplicaAgent(TOKEN, replicaPage(items, { livenessChallenge, ...LINES }), own);
    return running.agent.url;
  };

  beforeAll(async () => {
    engine = await createFaceEngine({ workers: 1 });
    const enrolled = async (file: string) => (await engine.analyze(await photo(file))).embedding;
    items = [
      replicaGuest(1, 'Penny Teller', await enrolled('bbt/penny/penny1.png')),
      replicaGuest(2, 'Leonard Hofstadter', await enrolled('bbt/leonard/leonard1.png')),
    ];
    whenUncertain = await serve('when_uncertain');
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
    await engine?.close();
  });

  const post = async (url: string, route: string, body: unknown) => {
    const res = await fetch(`${url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  /** A fresh challenge with these frames streamed, then its passive look. */
  async function look(url: string, files: string[]) {
    const { nonce, action } = (await (await fetch(`${url}/challenge`)).json()) as {
      nonce: string;
      action: string;
    };
    for (const file of files) {
      expect((await post(url, `/challenge/${nonce}/frames`, { frame: await photo(file) })).status).toBe(202);
    }
    return { nonce, action, answer: await post(url, `/events/${TOKEN}/identify`, { nonce, passive: true }) };
  }

  it('admits a clearly live face on its first two frames, without the challenge', async () => {
    const { nonce, answer } = await look(whenUncertain, ['bbt/penny/penny3.png', 'bbt/penny/penny5.png']);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ outcome: 'success', guest: { displayName: 'Penny' } });
    expect(answer.body.livenessScore).toBeGreaterThanOrEqual(0.9);
    // The nonce is spent with the decision.
    expect((await post(whenUncertain, `/events/${TOKEN}/identify`, { nonce })).body.code).toBe(
      'invalid_nonce',
    );
  });

  it('fails two presentation attacks at once, without the challenge', async () => {
    const { answer } = await look(whenUncertain, ['spoof/image_F1.jpg', 'spoof/image_F2.jpg']);
    expect(answer.body).toMatchObject({ outcome: 'liveness_failed', guest: null });
  });

  it('asks for the challenge on an uncertain score, naming nobody, and keeps the nonce open', async () => {
    const { nonce, action, answer } = await look(whenUncertain, [
      'bbt/leonard/leonard3.png',
      'bbt/leonard/leonard2.png',
    ]);
    expect(answer).toEqual({ status: 200, body: { outcome: 'challenge_required', nonce, action } });
    // A second look at the same challenge is refused; its frames stay for the action's.
    expect(await post(whenUncertain, `/events/${TOKEN}/identify`, { nonce, passive: true })).toMatchObject({
      status: 409,
      body: { code: 'look_answered' },
    });
    expect(
      (
        await post(whenUncertain, `/challenge/${nonce}/frames`, {
          frame: await photo('bbt/leonard/leonard3.png'),
        })
      ).body,
    ).toEqual({
      received: 3,
    });
    // These frames show no blink and no turn: the challenge, judged as before, fails; the nonce is spent.
    const judged = await post(whenUncertain, `/events/${TOKEN}/identify`, { nonce });
    expect(judged.body).toMatchObject({ outcome: 'liveness_failed' });
    expect((await post(whenUncertain, `/challenge/${nonce}/frames`, { frame: 'x' })).body.code).toBe(
      'invalid_nonce',
    );
  });

  it('asks for the challenge when the two frames are one still picture, however live it scores', async () => {
    const { answer } = await look(whenUncertain, ['bbt/penny/penny5.png', 'bbt/penny/penny5.png']);
    expect(answer.body.outcome).toBe('challenge_required');
  });

  it('refuses a passive look without streamed frames or with frames in the body', async () => {
    const { nonce } = (await (await fetch(`${whenUncertain}/challenge`)).json()) as { nonce: string };
    const frame = await photo('bbt/penny/penny3.png');
    expect(
      await post(whenUncertain, `/events/${TOKEN}/identify`, { nonce, passive: true, frames: [frame] }),
    ).toMatchObject({ status: 400 });
    expect(
      await post(whenUncertain, `/events/${TOKEN}/identify`, { passive: true, frames: [frame] }),
    ).toMatchObject({
      status: 400,
    });
    expect(await post(whenUncertain, `/events/${TOKEN}/identify`, { nonce, passive: true })).toMatchObject({
      status: 400,
      body: { code: 'no_frames' },
    });
  });
  it('asks every face for the challenge when the tenant says always', async () => {
    const { answer } = await look(await serve('always'), ['bbt/penny/penny3.png', 'bbt/penny/penny5.png']);
    expect(answer).toMatchObject({ status: 200, body: { outcome: 'challenge_required' } });
  });
});
