// Check-in frames leave the device only when the tenant keeps them: the replica's policy says so, the
// agent then queues the decision's frame sealed with the item and uploads it in the sync item.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EMBEDDING_MODEL_ID, type FaceEngine } from '@portico/face-engine';
import type { SyncItem } from '@portico/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type Agent } from '../src/agent.js';
import { loadAgentConfig } from '../src/config.js';
import { replicaGuest, replicaPage } from './support/replica-page.js';

const TOKEN = 'evt_frames_0123456789abcdef';
const vector = new Float32Array(512).map((_, i) => Math.sin(i));

/** A cloud that serves one event's replica and keeps the batches it receives. */
function fakeCloud() {
  const state = {
    syncCheckinImages: false,
    accepting: true,
    items: [] as SyncItem[],
    /** Each accepted batch: its items' ids and the queue length the device reported with it. */
    batches: [] as { ids: string[]; queueLength: number | undefined }[],
  };
  const page = () =>
    replicaPage([replicaGuest(1, 'Ana Maria', vector)], {
      requireLiveness: false,
      syncCheckinImages: state.syncCheckinImages,
    });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      if (req.method === 'GET' && req.url?.startsWith(`/v1/sync/events/${TOKEN}/replica`)) {
        return reply(200, page());
      }
      if (req.method === 'POST' && req.url === '/v1/sync/batch') {
        if (!state.accepting) return reply(503, { code: 'unavailable' });
        const { items, queueLength } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          items: SyncItem[];
          queueLength?: number;
        };
        state.items.push(...items);
        state.batches.push({ ids: items.map((i) => i.clientId), queueLength });
        return reply(200, {
          results: items.map((i) => ({
            clientId: i.clientId,
            status: 'accepted',
            checkInId: i.clientId,
            outcome: i.outcome,
            flags: [],
            receivedAt: new Date().toISOString(),
            code: null,
            detail: null,
          })),
        });
      }
      reply(404, {});
    });
  });
  return { state, server };
}

async function until(check: () => boolean | Promise<boolean>, what: string) {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('check-in frames in sync items', () => {
  const cloud = fakeCloud();
  let agent: Agent;
  let dataDir: string;
  // Recognises everyone as the enrolled guest: this test is about what leaves the device.
  const face = {
    probe: async () => ({
      embeddings: { [EMBEDDING_MODEL_ID]: vector },
      liveness: null,
      quality: 1,
      qualityFactors: { detector: 1, size: 1, sharpness: 1, exposure: 1, pose: 1 },
    }),
    close: async () => undefined,
  } as unknown as FaceEngine;

  beforeAll(async () => {
    await new Promise<void>((resolve) => cloud.server.listen(0, '127.0.0.1', resolve));
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'portico-frames-'));
    const config = loadAgentConfig({
      PORTICO_CLOUD_URL: `http://127.0.0.1:${(cloud.server.address() as AddressInfo).port}`,
      INTERNAL_SECRET: 'x'.repeat(32),
      DEVICE_TOKEN: 'pdt_test',
      EVENT_TOKENS: TOKEN,
      AGENT_DATA_DIR: dataDir,
      AGENT_PORT: '0',
      AGENT_DATA_KEY: randomBytes(32).toString('base64'),
      SYNC_INTERVAL_MS: '50',
      MAX_BACKOFF_MS: '100',
    });
    agent = await startAgent(config, { face });
  });
  afterAll(async () => {
    await agent.stop();
    await new Promise((r) => cloud.server.close(r));
  });

  const status = async () =>
    (await (await fetch(`${agent.url}/status`)).json()) as {
      queueLength: number;
      events: { guests: number }[];
    };
  const identify = async (frame: string) => {
    const res = await fetch(`${agent.url}/events/${TOKEN}/identify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ frames: [frame] }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { checkInId: string; outcome: string };
  };
  const jpeg = () =>
    Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(2048), Buffer.from([0xff, 0xd9])]);

  it('keeps the frame on the device while the replica says the tenant does not keep images', async () => {
    await until(async () => (await status()).events[0]?.guests === 1, 'the replica');
    const answer = await identify(jpeg().toString('base64'));
    expect(answer.outcome).toBe('success');
    await until(() => cloud.state.items.some((i) => i.clientId === answer.checkInId), 'the upload');
    const sent = cloud.state.items.find((i) => i.clientId === answer.checkInId)!;
    expect(sent).not.toHaveProperty('frame');
  });

  it('queues the frame sealed and sends it in the sync item once the replica says the tenant keeps images', async () => {
    cloud.state.accepting = false;
    cloud.state.syncCheckinImages = true;
    // The policy arrives with the next refresh, however the batch upload fares.
    await new Promise((r) => setTimeout(r, 300));
    const bytes = jpeg();
    const frame = `data:image/jpeg;base64,${bytes.toString('base64')}`;
    const answer = await identify(frame);
    await until(async () => (await status()).queueLength === 1, 'the queued item');
    // At rest the frame is sealed: neither its bytes nor its base64 are in any file of the agent.
    const needle = bytes.subarray(4, 68);
    const files = (await readdir(dataDir, { recursive: true, withFileTypes: true })).filter((f) =>
      f.isFile(),
    );
    for (const file of files) {
      const content = await readFile(path.join(file.parentPath, file.name));
      expect(content.includes(needle)).toBe(false);
      expect(content.includes(Buffer.from(needle.toString('base64').slice(0, 40)))).toBe(false);
    }

    cloud.state.accepting = true;
    await until(() => cloud.state.items.some((i) => i.clientId === answer.checkInId), 'the upload');
    const sent = cloud.state.items.find((i) => i.clientId === answer.checkInId)!;
    expect(sent.frame).toBe(bytes.toString('base64'));
    expect((await status()).queueLength).toBe(0);
  });

  it('reports with each batch how many decisions stay queued besides it', async () => {
    cloud.state.accepting = false;
    // Frames of 900 KB: a batch stays under 8 MB of JSON, so seven decisions take two batches.
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const bytes = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(900 * 1024)]);
      ids.push((await identify(bytes.toString('base64'))).checkInId);
    }
    await until(async () => (await status()).queueLength === 7, 'the queued items');
    const before = cloud.state.batches.length;
    cloud.state.accepting = true;
    await until(async () => (await status()).queueLength === 0, 'the upload');
    const batches = cloud.state.batches.slice(before);
    expect(batches.flatMap((b) => b.ids)).toEqual(ids);
    expect(batches.length).toBeGreaterThan(1);
    expect(batches.map((b) => b.queueLength)).toEqual(
      batches.map((_, n) => batches.slice(n + 1).reduce((sum, b) => sum + b.ids.length, 0)),
    );
  });
});
