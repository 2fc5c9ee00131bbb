// An agent on its local API serving one event, from a cloud that hands out that event's replica and
// refuses uploads (the decisions stay queued: what leaves the device is not what these tests are
// about), unless `uploads` is given: then it accepts each batch and keeps its items there.
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FaceEngine } from '@portico/face-engine';
import type { Replica as Page, SyncItem } from '@portico/contract';
import { startAgent, type Agent } from '../../src/agent.js';
import { loadAgentConfig } from '../../src/config.js';

export async function startReplicaAgent(
  token: string,
  page: Page,
  face: FaceEngine,
  options: { env?: Record<string, string>; now?: () => number; uploads?: SyncItem[] } = {},
): Promise<{ agent: Agent; stop(): Promise<void> }> {
  const cloud = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const reply = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method === 'GET' && req.url?.startsWith(`/v1/sync/events/${token}/replica`)) {
        return reply(200, page);
      }
      if (req.method === 'POST' && req.url === '/v1/sync/batch' && options.uploads) {
        const { items } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { items: SyncItem[] };
        options.uploads.push(...items);
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
      reply(503, { code: 'unavailable' });
    });
  });
  await new Promise<void>((resolve) => cloud.listen(0, '127.0.0.1', resolve));
  const config = loadAgentConfig({
    PORTICO_CLOUD_URL: `http://127.0.0.1:${(cloud.address() as AddressInfo).port}`,
    INTERNAL_SECRET: 'x'.repeat(32),
    DEVICE_TOKEN: 'pdt_test',
    EVENT_TOKENS: token,
    AGENT_DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'portico-agent-')),
    AGENT_PORT: '0',
    AGENT_DATA_KEY: randomBytes(32).toString('base64'),
    SYNC_INTERVAL_MS: '100',
    MAX_BACKOFF_MS: '200',
    ...options.env,
  });
  const agent = await startAgent(config, { face, ...(options.now && { now: options.now }) });
  for (let i = 0; ; i++) {
    const status = (await (await fetch(`${agent.url}/status`)).json()) as {
      events: { templates: number }[];
    };
    if (status.events[0]?.templates === page.items.length) break;
    if (i === 200) throw new Error('the replica never arrived');
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    agent,
    async stop() {
      await agent.stop();
      await new Promise((r) => cloud.close(r));
    },
  };
}
