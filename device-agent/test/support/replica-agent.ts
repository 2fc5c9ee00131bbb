// An agent on its local API serving one event, from a cloud that hands out that event's replica and
// refuses uploads (the decisions stay queued: what leaves the device is not what these tests are about).
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FaceEngine } from '@portico/face-engine';
import type { Replica as Page } from '@portico/contract';
import { startAgent, type Agent } from '../../src/agent.js';
import { loadAgentConfig } from '../../src/config.js';

export async function startReplicaAgent(
  token: string,
  page: Page,
  face: FaceEngine,
): Promise<{ agent: Agent; stop(): Promise<void> }> {
  const cloud = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const replica = req.method === 'GET' && req.url?.startsWith(`/v1/sync/events/${token}/replica`);
      res.writeHead(replica ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify(replica ? page : { code: 'unavailable' }));
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
  });
  const agent = await startAgent(config, { face });
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
