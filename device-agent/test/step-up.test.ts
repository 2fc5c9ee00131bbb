// The three answers at the door, through the real face engine and the agent's local API: a face
// between the refuse and the accept line answers `step_up_required` (no name), completed once within
// 60 s by the candidate's own invitation QR code or by staff; another guest's QR code is a denial
// `step_up_failed`; a used, expired or unknown step-up is 409, 410, 404. A picture too poor to judge
// (a real photo darkened, or shrunk to a tiny face) is 422 `face_retake` with what to fix, nothing
// queued. The replica's lines are set around a genuine probe's score so that it falls between them.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createFaceEngine, EMBEDDING_MODEL_ID, type FaceEngine } from '@portico/face-engine';
import type { SyncItem } from '@portico/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_LABELLED, HAS_MODELS, LABELLED_DIR } from '@portico/test-support/faces';
import { hashPin } from '../src/pin.js';
import { startReplicaAgent } from './support/replica-agent.js';
import { replicaGuest, replicaPage } from './support/replica-page.js';

const TOKEN = 'evt_stepup_0123456789abcdef';
const STAFF_PIN = '482913';
const workspace = path.resolve(import.meta.dirname, '..', '..');
type Sharp = (input: Buffer) => {
  linear(a: number, b: number): ReturnType<Sharp>;
  resize(width: number): ReturnType<Sharp>;
  extend(o: {
    top: number;
    bottom: number;
    left: number;
    right: number;
    background: string;
  }): ReturnType<Sharp>;
  jpeg(): ReturnType<Sharp>;
  toBuffer(): Promise<Buffer>;
};
const sharp = createRequire(path.join(workspace, 'shared', 'face-engine', 'package.json'))('sharp') as Sharp;
const photo = (rel: string) => readFile(path.join(LABELLED_DIR, rel));
/** The invitation link tokens of the two guests; the replica holds their SHA-256. */
const LINK = { leonard: 'lnk_leonard_0123456789abcdef', raj: 'lnk_raj_0123456789abcdef0123' };
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The fields of the agent's answers these tests read (DoorAnswer, StepUpRequired, problems, status). */
type Answer = Record<string, unknown> & {
  outcome?: string;
  code?: string;
  checkInId: string;
  attemptId: string;
  expiresAt: string;
  reasons: string[];
  token: string;
  queueLength: number;
};

describe.skipIf(!HAS_MODELS || !HAS_LABELLED)('step-up and retake at the door (real face engine)', () => {
  let engine: FaceEngine;
  let running: Awaited<ReturnType<typeof startReplicaAgent>>;
  const uploads: SyncItem[] = [];
  let clockOffsetMs = 0;
  let leonard: string;

  beforeAll(async () => {
    engine = await createFaceEngine({ workers: 1 });
    const enrolled = await engine.probe((await photo('bbt/leonard/leonard1.png')).toString('base64'));
    const raj = await engine.probe((await photo('bbt/raj/raj1.png')).toString('base64'));
    leonard = (await photo('bbt/leonard/leonard2.png')).toString('base64');
    const page = replicaPage(
      [
        {
          ...replicaGuest(1, 'Leonard Hofstadter', enrolled.embeddings[EMBEDDING_MODEL_ID]!),
          qrHash: sha256(LINK.leonard),
        },
        {
          ...replicaGuest(2, 'Rajesh Koothrappali', raj.embeddings[EMBEDDING_MODEL_ID]!),
          qrHash: sha256(LINK.raj),
        },
      ],
      // Lines around a genuine probe's score: Leonard's second photo is neither refused nor accepted.
      { requireLiveness: false, matchThreshold: 0.995, stepUpThreshold: 0.05, probeQualityMin: 0.4 } as never,
    );
    running = await startReplicaAgent(TOKEN, page, engine, {
      env: { STAFF_PIN_HASH: hashPin(STAFF_PIN), STAFF_PIN_ATTEMPTS: '5' },
      now: () => Date.now() + clockOffsetMs,
      uploads,
    });
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
  });

  const call = async (
    method: string,
    route: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const res = await fetch(`${running.agent.url}${route}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Answer };
  };
  const identify = (frame: string) => call('POST', `/events/${TOKEN}/identify`, { frames: [frame] });
  const uploaded = async (checkInId: string) => {
    for (let i = 0; i < 200 && !uploads.some((u) => u.clientId === checkInId); i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    return uploads.find((u) => u.clientId === checkInId) as
      (SyncItem & { stepUpFactor?: string }) | undefined;
  };
  const queueLength = async () => (await call('GET', '/status')).body.queueLength;

  async function stepUp() {
    const answer = await identify(leonard);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.outcome).toBe('step_up_required');
    return answer.body;
  }

  it('answers a face between the lines with step_up_required: factors and expiry, never the candidate', async () => {
    const before = uploads.length;
    const answer = await identify(leonard);
    expect(answer.body).toEqual({
      outcome: 'step_up_required',
      attemptId: expect.any(String),
      factors: ['qr', 'staff'],
      expiresAt: expect.any(String),
    });
    const ttl = Date.parse(answer.body.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(JSON.stringify(answer.body)).not.toMatch(/Leonard|Hofstadter|g1/);
    // Nothing is queued until the step-up is completed.
    await new Promise((r) => setTimeout(r, 300));
    expect(uploads.length).toBe(before);
    expect(await queueLength()).toBe(0);
  });

  it("admits with the candidate's own invitation QR code, queued with stepUpFactor qr; a second use is 409", async () => {
    const { attemptId } = await stepUp();
    const done = await call('POST', `/step-up/${attemptId}`, {
      factor: 'qr',
      code: `https://portico.example.com/c/${LINK.leonard}`,
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({ outcome: 'success', reason: null, guest: { displayName: 'Leonard' } });
    const item = await uploaded(done.body.checkInId);
    expect(item).toMatchObject({ method: 'facial', outcome: 'success', guestId: 'g1', stepUpFactor: 'qr' });
    expect(item!.score).toBeGreaterThan(0.05);

    const again = await call('POST', `/step-up/${attemptId}`, { factor: 'qr', code: LINK.leonard });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('step_up_used');
  });

  it("refuses another guest's QR code: a denial step_up_failed is queued, with no name shown", async () => {
    const { attemptId } = await stepUp();
    const done = await call('POST', `/step-up/${attemptId}`, { factor: 'qr', code: LINK.raj });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ outcome: 'denied', reason: 'step_up_failed', guest: null });
    const item = await uploaded(done.body.checkInId);
    expect(item).toMatchObject({
      method: 'facial',
      outcome: 'denied',
      reason: 'step_up_failed',
      stepUpFactor: 'qr',
    });
  });

  it('completes with staff: a wrong PIN is 401 and leaves it open, the right PIN admits with stepUpFactor staff', async () => {
    const { attemptId } = await stepUp();
    const wrong = await call('POST', `/step-up/${attemptId}`, { factor: 'staff', pin: '000000' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('wrong_pin');
    const done = await call('POST', `/step-up/${attemptId}`, { factor: 'staff', pin: STAFF_PIN });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.outcome).toBe('success');
    expect(await uploaded(done.body.checkInId)).toMatchObject({ outcome: 'success', stepUpFactor: 'staff' });
  });

  it('lets a staff session see the candidate to check a document, and staff saying no is step_up_failed', async () => {
    const { attemptId } = await stepUp();
    expect((await call('GET', `/step-up/${attemptId}`)).status).toBe(401);
    const session = await call('POST', '/staff/session', { pin: STAFF_PIN });
    const headers = { 'x-staff-session': session.body.token };
    const candidate = await call('GET', `/step-up/${attemptId}`, undefined, headers);
    expect(candidate.body).toMatchObject({ name: 'Leonard Hofstadter' });
    const no = await call('POST', `/step-up/${attemptId}`, { factor: 'staff', confirmed: false }, headers);
    expect(no.body).toMatchObject({ outcome: 'denied', reason: 'step_up_failed' });
    expect(await uploaded(no.body.checkInId)).toMatchObject({
      reason: 'step_up_failed',
      stepUpFactor: 'staff',
    });
  });

  it('answers an expired step-up 410 and an unknown one 404, queuing nothing', async () => {
    const { attemptId } = await stepUp();
    const queued = uploads.length;
    clockOffsetMs = 61_000;
    try {
      const late = await call('POST', `/step-up/${attemptId}`, { factor: 'qr', code: LINK.leonard });
      expect(late.status).toBe(410);
      expect(late.body.code).toBe('step_up_expired');
    } finally {
      clockOffsetMs = 0;
    }
    const unknown = await call('POST', '/step-up/nope', { factor: 'qr', code: LINK.leonard });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('unknown_attempt');
    await new Promise((r) => setTimeout(r, 200));
    expect(uploads.length).toBe(queued);
  });

  it('answers a picture too poor to judge with 422 face_retake and what to fix (reasons, as the cloud), nothing queued', async () => {
    const bytes = await photo('bbt/leonard/leonard2.png');
    const dark = await sharp(bytes).linear(0.1, 0).jpeg().toBuffer();
    const tiny = await sharp(await sharp(bytes).resize(40).toBuffer())
      .extend({ top: 200, bottom: 200, left: 300, right: 300, background: '#8a8a8a' })
      .jpeg()
      .toBuffer();
    const queued = uploads.length;
    const darkAnswer = await identify(dark.toString('base64'));
    expect(darkAnswer.status).toBe(422);
    expect(darkAnswer.body).toMatchObject({
      type: 'https://portico.dev/problems/face_retake',
      title: 'Unprocessable Entity',
      status: 422,
      code: 'face_retake',
      reasons: ['more_light'],
      quality: expect.any(Number),
      requestId: expect.stringMatching(/^req_/),
    });
    expect(darkAnswer.body).not.toHaveProperty('details');
    const tinyAnswer = await identify(tiny.toString('base64'));
    expect(tinyAnswer.status).toBe(422);
    expect(tinyAnswer.body.code).toBe('face_retake');
    expect(tinyAnswer.body.reasons[0]).toBe('move_closer');
    await new Promise((r) => setTimeout(r, 200));
    expect(uploads.length).toBe(queued);
    expect(await queueLength()).toBe(0);
  });
});
