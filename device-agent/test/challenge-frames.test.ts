// A challenge's frames streamed to the agent as the kiosk takes them (`POST /challenge/{nonce}/frames`),
// then identify with the nonce alone: the rules around it, on the local API, with a stand-in engine
// whose frames say what they show (eyes open or closed), so that which frames were judged, and in
// which order, shows in the decision. The same frames through the real engine: liveness.test.ts.
import { EMBEDDING_MODEL_ID, FaceEngineError, type FaceEngine } from '@portico/face-engine';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CHALLENGE_MAX_FRAMES, createChallenges, MAX_OPEN_CHALLENGES } from '../src/liveness.js';
import { startReplicaAgent } from './support/replica-agent.js';
import { replicaGuest, replicaPage } from './support/replica-page.js';

const TOKEN = 'evt_stream_0123456789abcdef';
const vector = new Float32Array(512).map((_, i) => Math.sin(i));
const page = replicaPage([replicaGuest(1, 'Ana Maria', vector)]);

/**
 * A frame showing the enrolled guest facing the camera with eyes open or closed, and its passive
 * liveness score; anything else is not an image.
 */
const shows = (eyes: 'open' | 'closed', score = 0.9) =>
  Buffer.from(`eyes:${eyes}:${score}`).toString('base64');
const OPEN = shows('open');
const CLOSED = shows('closed');
const NOT_AN_IMAGE = Buffer.from('not an image').toString('base64');

describe('challenge frames streamed to the agent', () => {
  /** The frames the engine has analysed, in the order it took them (one at a time, like its worker). */
  const analysed: string[] = [];
  let worker = Promise.resolve();
  const face = {
    analyze: (frame: string) => {
      const done = worker.then(async () => {
        await new Promise((r) => setTimeout(r, 20));
        analysed.push(frame);
        const shown = Buffer.from(frame, 'base64').toString();
        if (!shown.startsWith('eyes:')) throw new FaceEngineError('unsupported_image', 'Not a JPEG or PNG');
        const [, eyes, score] = shown.split(':');
        const open = eyes === 'open';
        const pose = { yaw: 0, pitch: 0, roll: 0 };
        return {
          embeddings: { [EMBEDDING_MODEL_ID]: vector },
          // A clear picture: these frames are about order and liveness, never retaken.
          quality: 1,
          qualityFactors: { detector: 1, size: 1, sharpness: 1, exposure: 1, pose: 1 },
          pose,
          liveness: { score: Number(score), eyes: { leftOpen: open, rightOpen: open }, pose },
        };
      });
      worker = done.then(
        () => undefined,
        () => undefined,
      );
      return done;
    },
    close: async () => undefined,
  } as unknown as FaceEngine;
  let running: Awaited<ReturnType<typeof startReplicaAgent>>;
  const url = () => running.agent.url;

  beforeAll(async () => {
    running = await startReplicaAgent(TOKEN, page, face);
  });
  afterAll(() => running.stop());

  const call = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${url()}${route}`, {
      method,
      ...(body !== undefined && {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  /** A fresh blink challenge's nonce (asked for until one comes). */
  const blinkChallenge = async (): Promise<string> => {
    for (;;) {
      const c = (await call('GET', '/challenge')).body as { nonce: string; action: string };
      if (c.action === 'blink') return c.nonce;
    }
  };
  const stream = (nonce: string, frame: string) => call('POST', `/challenge/${nonce}/frames`, { frame });
  const identify = (body: { nonce?: string; frames?: string[] }) =>
    call('POST', `/events/${TOKEN}/identify`, body);

  it('analyses each frame as it arrives and decides on them in the order received, after the last one', async () => {
    const nonce = await blinkChallenge();
    const before = analysed.length;
    const frames = [shows('open', 0.91), shows('closed', 0.92), shows('open', 0.93)];
    expect(await stream(nonce, frames[0]!)).toEqual({ status: 202, body: { received: 1 } });
    expect(await stream(nonce, frames[1]!)).toEqual({ status: 202, body: { received: 2 } });
    await vi.waitFor(() => expect(analysed.length).toBe(before + 2));
    // The last frame's analysis is still under way when identify asks: identify waits for it (the
    // blink needs that last open frame).
    expect(await stream(nonce, frames[2]!)).toEqual({ status: 202, body: { received: 3 } });
    const answer = await identify({ nonce });
    // All equally frontal: the first taken is matched and gives the passive score.
    expect(answer).toMatchObject({
      status: 200,
      body: { outcome: 'success', guest: { displayName: 'Ana' }, livenessScore: 0.91 },
    });
    expect(analysed.slice(before)).toEqual(frames);

    // The same frames in another order do not show a blink.
    const shuffled = await blinkChallenge();
    for (const frame of [CLOSED, OPEN, OPEN]) expect((await stream(shuffled, frame)).status).toBe(202);
    expect((await identify({ nonce: shuffled })).body.outcome).toBe('liveness_failed');
  });

  it('spends the nonce with its frames: a second identify and a later frame are refused', async () => {
    const nonce = await blinkChallenge();
    for (const frame of [OPEN, CLOSED, OPEN]) await stream(nonce, frame);
    expect((await identify({ nonce })).body.outcome).toBe('success');
    expect(await identify({ nonce })).toMatchObject({ status: 400, body: { code: 'invalid_nonce' } });
    expect(await stream(nonce, OPEN)).toMatchObject({ status: 400, body: { code: 'invalid_nonce' } });
  });

  it("never judges a challenge on another challenge's frames", async () => {
    const first = await blinkChallenge();
    const second = await blinkChallenge();
    await stream(first, OPEN);
    await stream(second, OPEN);
    await stream(first, CLOSED);
    await stream(first, OPEN);
    // The second has one frame of its own: no blink, however many the first has.
    expect((await identify({ nonce: second })).body.outcome).toBe('liveness_failed');
    expect((await identify({ nonce: first })).body.outcome).toBe('success');
  });

  it(`takes at most ${CHALLENGE_MAX_FRAMES} frames a challenge`, async () => {
    const nonce = await blinkChallenge();
    const frames = [OPEN, CLOSED, ...Array<string>(CHALLENGE_MAX_FRAMES - 2).fill(OPEN)];
    for (const frame of frames) expect((await stream(nonce, frame)).status).toBe(202);
    expect(await stream(nonce, OPEN)).toMatchObject({ status: 409, body: { code: 'too_many_frames' } });
    expect((await identify({ nonce })).body.outcome).toBe('success');
  });

  it('refuses frames and identify for a nonce it never issued', async () => {
    expect(await stream('never-issued', OPEN)).toMatchObject({
      status: 400,
      body: { code: 'invalid_nonce' },
    });
    expect(await identify({ nonce: 'never-issued' })).toMatchObject({
      status: 400,
      body: { code: 'invalid_nonce' },
    });
    expect(await identify({})).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
  });

  it('refuses identify with the nonce alone when no frame was streamed, and spends the nonce', async () => {
    const nonce = await blinkChallenge();
    expect(await identify({ nonce })).toMatchObject({ status: 400, body: { code: 'no_frames' } });
    expect(await stream(nonce, OPEN)).toMatchObject({ status: 400, body: { code: 'invalid_nonce' } });
  });

  it('refuses frames sent with a nonce that has streamed frames as ambiguous, and spends the nonce', async () => {
    const nonce = await blinkChallenge();
    await stream(nonce, OPEN);
    expect(await identify({ nonce, frames: [OPEN, CLOSED, OPEN] })).toMatchObject({
      status: 400,
      body: { code: 'ambiguous_frames' },
    });
    expect(await identify({ nonce })).toMatchObject({ status: 400, body: { code: 'invalid_nonce' } });
  });

  it('still decides on frames sent at once with a fresh nonce', async () => {
    const nonce = await blinkChallenge();
    expect((await identify({ nonce, frames: [OPEN, CLOSED, OPEN] })).body.outcome).toBe('success');
    expect(await identify({ nonce, frames: [OPEN, CLOSED, OPEN] })).toMatchObject({
      status: 400,
      body: { code: 'invalid_nonce' },
    });
  });

  it('accepts a frame that is not an image and answers it at identify with the engine code, as sent at once', async () => {
    const nonce = await blinkChallenge();
    for (const frame of [OPEN, NOT_AN_IMAGE, OPEN]) expect((await stream(nonce, frame)).status).toBe(202);
    const streamed = await identify({ nonce });
    expect(streamed).toMatchObject({ status: 422, body: { code: 'unsupported_image' } });
    const atOnce = await identify({ nonce: await blinkChallenge(), frames: [OPEN, NOT_AN_IMAGE, OPEN] });
    // The same problem but for its request id, which is each answer's own.
    expect({ ...atOnce, body: { ...atOnce.body, requestId: 'id' } }).toEqual({
      ...streamed,
      body: { ...streamed.body, requestId: 'id' },
    });
    expect(atOnce.body.requestId).not.toBe(streamed.body.requestId);
  });

  it(`holds at most ${MAX_OPEN_CHALLENGES} open challenges: one more drops the oldest and its frames`, async () => {
    const oldest = await blinkChallenge();
    await stream(oldest, OPEN);
    for (let i = 0; i < MAX_OPEN_CHALLENGES; i++) await call('GET', '/challenge');
    expect(await stream(oldest, OPEN)).toMatchObject({ status: 400, body: { code: 'invalid_nonce' } });
  });

  it('documents the route in its OpenAPI document', async () => {
    const doc = (await call('GET', '/docs-json')).body as {
      paths: Record<string, { post?: { responses: Record<string, unknown> } }>;
    };
    expect(Object.keys(doc.paths['/challenge/{nonce}/frames']?.post?.responses ?? {})).toContain('202');
  });
});

describe('the challenge store', () => {
  afterEach(() => vi.useRealTimers());

  it('frees an abandoned challenge and its frames when it expires, with no further call', () => {
    vi.useFakeTimers();
    // The store's clock stands still: only the expiry timer can have dropped the challenge.
    const challenges = createChallenges(() => 1_000);
    const { nonce, frames } = challenges.issue();
    frames.push({ frame: OPEN, analysis: new Promise(() => undefined) });
    vi.advanceTimersByTime(59_000);
    expect(challenges.find(nonce)?.frames).toHaveLength(1);
    vi.advanceTimersByTime(1_000);
    expect(challenges.find(nonce)).toBeNull();
  });

  it('refuses a challenge past its expiry by its clock', () => {
    let now = 1_000;
    const challenges = createChallenges(() => now);
    const { nonce } = challenges.issue();
    now += 60_000;
    expect(challenges.take(nonce)).toBeNull();
  });
});
