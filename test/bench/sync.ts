// Edge benchmark, cloud and queue: ingest of 10,000 synced check-ins (one per guest, admitted, through
// the one recording path) by POST /v1/sync/batch, on PGlite or on TEST_DATABASE_URL's PostgreSQL; then
// 10,000 decisions queued by an agent while the cloud is away, and how long the backlog takes to drain
// once it returns.
import { randomUUID } from 'node:crypto';
import { adminOf } from '@portico/test-support/identity';
import { startAgent } from '../../device-agent/src/agent.js';
import { loadAgentConfig } from '../../device-agent/src/config.js';
import { agentEnv, startCloud, until } from '../support/edge.js';

const N = Number(process.env.BENCH_ITEMS ?? 10_000);
const backend = process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'PGlite';

const cloud = await startCloud();
const admin = await adminOf(cloud.app);
const api = (method: string, path: string, body?: unknown) =>
  cloud.app.request(method, path, { headers: admin.headers, ...(body !== undefined && { body }) });

async function eventWithGuests(name: string, count: number) {
  const event = (await api('POST', '/v1/events', { name })).body;
  await api('PATCH', `/v1/events/${event.id}/status`, { status: 'open' });
  const form = new FormData();
  const csv = `name\n${Array.from({ length: count }, (_, i) => `Guest ${i}`).join('\n')}\n`;
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'guests.csv');
  const res = await fetch(`${cloud.app.url}/v1/events/${event.id}/guests/import`, {
    method: 'POST',
    headers: admin.headers,
    body: form,
  });
  if (res.status !== 200) throw new Error(`import: ${res.status} ${await res.text()}`);
  const guests = await cloud.app.deps.db.prisma.guest.findMany({
    where: { eventId: event.id },
    select: { id: true },
  });
  return { event, guests };
}

// 1. Ingest.
{
  const { event, guests } = await eventWithGuests('Ingest', N);
  const device = (await api('POST', '/v1/devices', { name: 'Bench' })).body;
  const headers = {
    'x-internal-secret': 'edge-journey-internal-secret-0123456789',
    'x-device-token': device.token,
  };
  const items = guests.map((g) => ({
    clientId: randomUUID(),
    eventId: event.id,
    guestId: g.id,
    method: 'qr',
    outcome: 'success',
    recordedAt: new Date(Date.now() - 60_000).toISOString(),
  }));
  const t0 = performance.now();
  for (let i = 0; i < items.length; i += 500) {
    const res = await cloud.app.request('POST', '/v1/sync/batch', {
      headers,
      body: { items: items.slice(i, i + 500) },
    });
    if (res.status !== 200) throw new Error(`sync: ${res.status} ${res.text}`);
  }
  const s = (performance.now() - t0) / 1000;
  const rows = await cloud.app.deps.db.prisma.checkIn.count({ where: { eventId: event.id } });
  console.log(
    `[edge bench] sync ingest on ${backend}: ${rows} items in ${s.toFixed(1)} s, ${(rows / s).toFixed(0)} items/s (target 10,000 <= 5 s on PostgreSQL)`,
  );
}

// 2. Queue and drain.
{
  const { event } = await eventWithGuests('Drain', 10);
  const device = (await api('POST', '/v1/devices', { name: 'Queue' })).body;
  const env = await agentEnv(cloud.url, device.token, [event.publicToken], { AGENT_PORT: '0' });
  const agent = await startAgent(loadAgentConfig(env));
  const status = async () =>
    (await (await fetch(`${agent.url}/status`)).json()) as {
      online: boolean;
      queueLength: number;
      events: { refreshedAt: string | null }[];
    };
  await until(async () => (await status()).events[0]!.refreshedAt !== null, 30_000, 'replica');
  await cloud.down();
  await until(async () => !(await status()).online, 10_000, 'offline');
  const t0 = performance.now();
  const times: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    await fetch(`${agent.url}/events/${event.publicToken}/qr`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: `stranger-${i}` }),
    });
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(
    `[edge bench] ${N} decisions queued offline in ${((performance.now() - t0) / 1000).toFixed(1)} s ` +
      `(each written to disk before its answer: p50 ${times[N >> 1]!.toFixed(1)} ms, p99 ${times[Math.floor(N * 0.99)]!.toFixed(1)} ms)`,
  );
  await cloud.up();
  const t1 = performance.now();
  // A poll can meet a kept-alive socket the agent has just closed (ECONNRESET on a loaded machine): it
  // counts as not drained yet; a dead agent still ends in the timeout.
  await until(async () => (await status().catch(() => null))?.queueLength === 0, 600_000, 'drain');
  const drained = (performance.now() - t1) / 1000;
  const rows = await cloud.app.deps.db.prisma.checkIn.count({ where: { eventId: event.id } });
  console.log(
    `[edge bench] backlog of ${N} drained ${drained.toFixed(1)} s after the cloud returned (${rows} rows; target <= 30 s)`,
  );
  await agent.stop();
}
await cloud.close();
