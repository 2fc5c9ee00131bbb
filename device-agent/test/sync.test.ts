// The sync loop on its own, fast: the queue, the replica and the device state are the real ones on a
// temporary folder, but the cloud is a stand-in (a `SyncCloud` answering from memory, as the SDK
// would: data, or an error body with its status, or a rejected fetch when unreachable) and the loop's
// timer is stepped by hand, so the backoff is read from the waits it asks for, not waited out. The
// real cloud is exercised by the journeys in test/test/edge-*.test.ts.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Replica as Page, SyncItem } from '@portico/contract';
import { afterEach, describe, expect, it } from 'vitest';
import { openDeviceState } from '../src/device-state.js';
import { createAgentLog } from '../src/log.js';
import { createQueue } from '../src/queue.js';
import { createReplica } from '../src/replica.js';
import { createSealer, type Sealer } from '../src/sealed.js';
import { openStore, type AgentDatabase } from '../src/store.js';
import { createSync, type CloudAnswer, type Scheduler, type SyncCloud } from '../src/sync.js';
import type { QueuedItem } from '../src/sync-item.js';
import { openTemplateStore } from '../src/templates.js';
import { replicaGuest, replicaPage } from './support/replica-page.js';

const GALA = 'evt_sync_gala_0123456789';
const DRAFT = 'evt_sync_draft_0123456789';
const INTERVAL = 100;
const CEILING = 1000;
const NOW = 1_790_000_000_000;

type Reply = { status: number; body: unknown } | 'unreachable';

/** The cloud's three sync calls, answered from memory; `failing` makes every call fail that way. */
function standInCloud() {
  const cloud = {
    failing: null as Reply | null,
    /** The events the console assigned to the device (`GET /v1/sync/device`). */
    assigned: [] as { token: string; status: 'draft' | 'open' }[],
    /** Client ids the cloud answers `rejected`. */
    rejects: new Set<string>(),
    batches: [] as { items: SyncItem[]; queueLength: number; bytes: number }[],
    /** The events whose replica was asked for, in order. */
    replicaCalls: [] as string[],
    calls: 0,
  };
  function answer<D>(reply: () => Reply): CloudAnswer<D> {
    cloud.calls++;
    const r = cloud.failing ?? reply();
    if (r === 'unreachable') return Promise.reject(new TypeError('fetch failed'));
    const response = new Response(JSON.stringify(r.body), { status: r.status });
    return Promise.resolve(r.status < 400 ? { data: r.body as D, response } : { error: r.body, response });
  }
  const api: SyncCloud = {
    batch: (body) =>
      answer(() => {
        cloud.batches.push({ ...body, bytes: Buffer.byteLength(JSON.stringify(body.items)) });
        const results = body.items.map((i) => ({
          clientId: i.clientId,
          status: cloud.rejects.has(i.clientId) ? ('rejected' as const) : ('accepted' as const),
          checkInId: i.clientId,
          outcome: i.outcome,
          flags: [],
          receivedAt: new Date(NOW).toISOString(),
          code: cloud.rejects.has(i.clientId) ? ('not_found' as const) : null,
          detail: null,
        }));
        return { status: 200, body: { results } };
      }),
    replicaPage: (token) =>
      answer(() => {
        cloud.replicaCalls.push(token);
        const event = cloud.assigned.find((e) => e.token === token);
        if (event?.status === 'draft') return { status: 404, body: { code: 'not_found' } };
        const page: Page = replicaPage([replicaGuest(1, 'Ana Maria', null)]);
        return { status: 200, body: page };
      }),
    device: () =>
      answer(() => ({
        status: 200,
        body: {
          device: { id: 'd1', name: 'Gate A' },
          events: cloud.assigned.map((e, i) => ({
            id: `e${i}`,
            name: `Event ${i}`,
            token: e.token,
            status: e.status,
            startsAt: null,
            endsAt: null,
          })),
        },
      })),
  };
  return { cloud, api };
}

/** The loop's timer, stepped by hand: every wait it asked for, the last one still pending. */
function steppedTimer() {
  const waits: { delayMs: number; job: () => Promise<void>; cancelled: boolean }[] = [];
  const schedule: Scheduler = (delayMs, job) => {
    const wait = { delayMs, job, cancelled: false };
    waits.push(wait);
    return () => {
      wait.cancelled = true;
    };
  };
  const pending = () => waits.filter((w) => !w.cancelled).at(-1);
  return {
    schedule,
    /** The wait before the next exchange. */
    next: () => pending()?.delayMs,
    /** Its time has come: the exchange runs (and asks for the next wait). */
    async elapse() {
      const wait = pending();
      if (!wait) throw new Error('nothing scheduled');
      wait.cancelled = true;
      await wait.job();
    },
  };
}

const decision = (n: number, extra: Partial<QueuedItem> = {}): QueuedItem =>
  ({
    clientId: randomUUID(),
    eventToken: GALA,
    method: 'qr',
    outcome: 'success',
    reason: null,
    guestId: `g${n}`,
    recordedAt: new Date(NOW + n).toISOString(),
    ...extra,
  }) as QueuedItem;

const opened: AgentDatabase[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close()));
});

async function setUp(options: { eventTokens?: string[] | null } = {}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'portico-sync-'));
  const sealer: Sealer = createSealer(randomBytes(32));
  const db = await openStore(dir, sealer);
  opened.push(db);
  const lines: { level: string; module?: string; msg: string }[] = [];
  const log = createAgentLog('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  const replica = createReplica(db, openTemplateStore(dir, sealer), sealer, log.child({ module: 'replica' }));
  const queue = createQueue(db, sealer);
  const device = openDeviceState(dir, sealer);
  const { cloud, api } = standInCloud();
  const timer = steppedTimer();
  const clock = { now: NOW };
  const start = (deviceFile = device) =>
    createSync({
      config: {
        eventTokens: options.eventTokens === undefined ? [GALA] : options.eventTokens,
        syncIntervalMs: INTERVAL,
        maxBackoffMs: CEILING,
      },
      cloud: api,
      queue,
      replica,
      device: deviceFile,
      now: () => clock.now,
      schedule: timer.schedule,
      log: log.child({ module: 'sync' }),
      onChange: () => undefined,
    });
  const sync = start();
  return { dir, sealer, cloud, timer, sync, queue, replica, device, lines, start, clock };
}

describe('the sync loop', () => {
  it('backs off from SYNC_INTERVAL_MS, doubling up to MAX_BACKOFF_MS while the cloud fails, and returns to the interval once it answers', async () => {
    const { cloud, timer, sync } = await setUp();
    cloud.failing = 'unreachable';
    await sync.start();
    const waits = [timer.next()];
    for (let i = 0; i < 5; i++) {
      await timer.elapse();
      waits.push(timer.next());
    }
    expect(waits).toEqual([100, 200, 400, 800, 1000, 1000]);

    cloud.failing = null;
    await timer.elapse();
    expect(sync.state.online).toBe(true);
    expect(timer.next()).toBe(INTERVAL);
    cloud.failing = 'unreachable';
    await timer.elapse();
    expect(timer.next()).toBe(INTERVAL); // the backoff starts over
    await sync.stop();
  });

  it('reports online and lastError as the last exchange showed', async () => {
    const { cloud, timer, sync } = await setUp();
    await sync.start();
    expect(sync.state).toMatchObject({ online: true, lastError: null, unauthorized: null });

    cloud.failing = 'unreachable';
    await timer.elapse();
    expect(sync.state).toMatchObject({ online: false, lastError: 'cloud unreachable: fetch failed' });

    cloud.failing = { status: 503, body: { code: 'unavailable' } };
    await timer.elapse();
    expect(sync.state.online).toBe(false);
    expect(sync.state.lastError).toBe(
      `cloud answered 503 on /v1/sync/events/${GALA}/replica: {"code":"unavailable"}`,
    );
    expect(sync.state.unauthorized).toBeNull();

    cloud.failing = null;
    await timer.elapse();
    expect(sync.state).toMatchObject({ online: true, lastError: null });
    await sync.stop();
  });

  it('a revoked device token (401) sets unauthorized with its reason, logs it once at error level, and clears when the cloud accepts again', async () => {
    const { cloud, timer, sync, lines } = await setUp();
    cloud.failing = { status: 401, body: { code: 'invalid_token' } };
    await sync.start();
    for (let i = 0; i < 4; i++) await timer.elapse();
    expect(sync.state.online).toBe(false);
    expect(sync.state.unauthorized).toMatch(/does not know this device’s token or it was revoked/);
    expect(timer.next()).toBe(CEILING); // retried with the same backoff
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'error',
        module: 'sync',
        msg: expect.stringMatching(/^device not authorised: .*revoked/),
      }),
    ]);

    cloud.failing = null;
    await timer.elapse();
    expect(sync.state).toMatchObject({ online: true, unauthorized: null, lastError: null });
    expect(lines).toHaveLength(1);
    await sync.stop();
  });

  it('a refused internal secret (403 forbidden) is named as such', async () => {
    const { cloud, timer, sync, lines } = await setUp();
    cloud.failing = { status: 403, body: { code: 'forbidden' } };
    await sync.start();
    await timer.elapse();
    expect(sync.state.unauthorized).toMatch(/refused the internal secret/);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['error', expect.stringMatching(/^device not authorised: .*internal secret/)],
    ]);
    await sync.stop();
  });

  it('nudge() uploads a new decision at once when online', async () => {
    const { cloud, timer, sync, queue } = await setUp();
    await sync.start();
    expect(timer.next()).toBe(INTERVAL);
    const item = decision(1);
    await queue.add(item, NOW);
    sync.nudge();
    expect(timer.next()).toBe(0);
    await timer.elapse();
    expect(cloud.batches.map((b) => b.items.map((i) => i.clientId))).toEqual([[item.clientId]]);
    expect(await queue.length()).toBe(0);
    expect(sync.state.uploaded).toBe(1);
    await sync.stop();
  });

  it('nudge() does nothing while offline: the backoff decides', async () => {
    const { cloud, timer, sync, queue } = await setUp();
    cloud.failing = 'unreachable';
    await sync.start();
    await timer.elapse();
    expect(timer.next()).toBe(200);
    const calls = cloud.calls;
    await queue.add(decision(1), NOW);
    sync.nudge();
    expect(timer.next()).toBe(200);
    expect(cloud.calls).toBe(calls);
    expect(await queue.length()).toBe(1);
    await sync.stop();
  });

  it('splits a backlog over 8 MB of JSON into batches under it, each reporting what stays queued', async () => {
    const { cloud, sync, queue } = await setUp();
    // Nine decisions with a frame each: about 9 MB of JSON.
    const items = Array.from({ length: 9 }, (_, n) => decision(n, { frame: 'A'.repeat(1_000_000) }));
    for (const item of items) await queue.add(item, NOW + items.indexOf(item));
    await sync.start();
    expect(cloud.batches.map((b) => b.items.length)).toEqual([8, 1]);
    for (const batch of cloud.batches) expect(batch.bytes).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(cloud.batches.map((b) => b.queueLength)).toEqual([1, 0]);
    expect(cloud.batches.flatMap((b) => b.items.map((i) => i.clientId))).toEqual(
      items.map((i) => i.clientId),
    );
    expect(await queue.length()).toBe(0);
    await sync.stop();
  });

  it('counts the items the cloud rejects and removes them from the queue with the others', async () => {
    const { cloud, sync, queue } = await setUp();
    const items = [decision(1), decision(2), decision(3)];
    for (const [n, item] of items.entries()) await queue.add(item, NOW + n);
    cloud.rejects.add(items[1]!.clientId);
    await sync.start();
    expect(sync.state).toMatchObject({ uploaded: 3, rejected: 1, online: true });
    expect(await queue.length()).toBe(0);
    expect(await queue.oldest(10)).toEqual([]);
    await sync.stop();
  });

  it('does not refresh a draft event assigned to the device, and serves it once published', async () => {
    const { cloud, timer, sync, replica, device } = await setUp({ eventTokens: null });
    cloud.assigned = [
      { token: GALA, status: 'open' },
      { token: DRAFT, status: 'draft' },
    ];
    await sync.start();
    expect(sync.state.online).toBe(true);
    expect(cloud.replicaCalls).toEqual([GALA]);
    expect(replica.all().map((r) => r.token)).toEqual([GALA]);
    expect(device.get().eventTokens).toEqual([GALA]);

    cloud.assigned[1]!.status = 'open';
    await timer.elapse();
    expect(cloud.replicaCalls).toEqual([GALA, GALA, DRAFT]);
    expect(
      replica
        .all()
        .map((r) => r.token)
        .sort(),
    ).toEqual([DRAFT, GALA].sort());
    expect(device.get().eventTokens).toEqual([GALA, DRAFT]);
    await sync.stop();
  });

  it('keeps lastSyncAt in the device state: a new loop starts from it, and a failed exchange leaves it', async () => {
    const { dir, sealer, cloud, timer, sync, start } = await setUp();
    expect(sync.state.lastSyncAt).toBeNull();
    await sync.start();
    expect(sync.state.lastSyncAt).toBe(NOW);
    expect(openDeviceState(dir, sealer).get().lastSyncAt).toBe(NOW);

    cloud.failing = 'unreachable';
    await timer.elapse();
    expect(sync.state.lastSyncAt).toBe(NOW);
    await sync.stop();
    // Restarted: the state read again from the disk.
    expect(start(openDeviceState(dir, sealer)).state.lastSyncAt).toBe(NOW);
  });

  it('writes lastSyncAt to the disk at most once a minute, and when it stops', async () => {
    const { dir, sealer, timer, sync, clock } = await setUp();
    const stored = () => openDeviceState(dir, sealer).get().lastSyncAt;
    await sync.start();
    expect(stored()).toBe(NOW);
    clock.now = NOW + 30_000;
    await timer.elapse();
    expect(sync.state.lastSyncAt).toBe(NOW + 30_000);
    expect(stored()).toBe(NOW);
    clock.now = NOW + 61_000;
    await timer.elapse();
    expect(stored()).toBe(NOW + 61_000);
    clock.now = NOW + 70_000;
    await timer.elapse();
    expect(stored()).toBe(NOW + 61_000);
    await sync.stop();
    expect(stored()).toBe(NOW + 70_000);
  });
});
