// The active liveness challenge passing on a real person, not only failing on still photos: ordered
// photos of one person from ../shared/eval-faces/att (a 1990s session of 10 photos each, greyscale,
// padded as that folder's README says) sent as the challenge's frames, through the real face engine
// and the agent's local API. Not a video: different photos of one session, in an order that shows
// the action. The same frames shuffled, or one frame repeated, fail.
//
// The passive anti-spoof model scores every photo of this set as a reproduction (0.00-0.04): they are
// scans of prints. The tenant's passive threshold is therefore 0 here, so what decides is the active
// challenge alone.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  createFaceEngine,
  EMBEDDING_MODEL_ID,
  embeddingToBuffer,
  resolveModelDir,
  type FaceEngine,
} from '@portico/face-engine';
import type { Replica as Page } from '@portico/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type Agent } from '../src/agent.js';
import { loadAgentConfig } from '../src/config.js';

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
  let agent: Agent;
  let cloud: Server;

  beforeAll(async () => {
    engine = await createFaceEngine({ workers: 1 });
    // Every subject enrolled from a photo the sequences below do not use.
    const items: Page['items'] = [];
    for (let s = 1; s <= SUBJECTS; s++) {
      const { embedding } = await engine.analyze(await photo(s, 9));
      items.push({
        guestId: `g${s}`,
        name: `Subject-${s} Att`,
        status: 'confirmed',
        checkedInAt: null,
        personId: `p${s}`,
        qrHash: `h${s}`,
        template: { modelId: EMBEDDING_MODEL_ID, embedding: embeddingToBuffer(embedding).toString('base64') },
      });
    }
    const page: Page = {
      event: { id: 'e1', name: 'Gala', status: 'open', checkinMethods: [], capacity: null, geofence: null },
      policy: {
        tenantId: 't1',
        modelId: EMBEDDING_MODEL_ID,
        matchThreshold: 0.57,
        requireLiveness: true,
        livenessThreshold: 0,
        syncCheckinImages: false,
      },
      items,
      removed: [],
      revokedPersons: [],
      nextCursor: null,
      checkpoint: '1.1',
    };
    cloud = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const replica = req.method === 'GET' && req.url?.startsWith(`/v1/sync/events/${TOKEN}/replica`);
        // Uploads are refused: the decisions stay queued, which is not what this test is about.
        res.writeHead(replica ? 200 : 503, { 'content-type': 'application/json' });
        res.end(JSON.stringify(replica ? page : { code: 'unavailable' }));
      });
    });
    await new Promise<void>((resolve) => cloud.listen(0, '127.0.0.1', resolve));
    const config = loadAgentConfig({
      PORTICO_CLOUD_URL: `http://127.0.0.1:${(cloud.address() as AddressInfo).port}`,
      INTERNAL_SECRET: 'x'.repeat(32),
      DEVICE_TOKEN: 'pdt_test',
      EVENT_TOKENS: TOKEN,
      AGENT_DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'portico-liveness-')),
      AGENT_PORT: '0',
      AGENT_DATA_KEY: randomBytes(32).toString('base64'),
      SYNC_INTERVAL_MS: '100',
      MAX_BACKOFF_MS: '200',
    });
    agent = await startAgent(config, { face: engine });
    for (let i = 0; i < 200; i++) {
      const status = (await (await fetch(`${agent.url}/status`)).json()) as {
        events: { templates: number }[];
      };
      if (status.events[0]?.templates === SUBJECTS) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  }, 120_000);
  afterAll(async () => {
    await agent?.stop();
    await new Promise((r) => cloud?.close(r));
  });

  /** A challenge of that action (asked for until one comes), answered with these photos in this order. */
  async function attempt(action: 'blink' | 'turn_head', subject: number, order: number[]) {
    let challenge: { nonce: string; action: string };
    do challenge = (await (await fetch(`${agent.url}/challenge`)).json()) as typeof challenge;
    while (challenge.action !== action);
    const frames = await Promise.all(order.map((k) => photo(subject, k)));
    const res = await fetch(`${agent.url}/events/${TOKEN}/identify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ frames, nonce: challenge.nonce }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { outcome: string; guest: { displayName: string } | null };
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
});
