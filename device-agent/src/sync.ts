// The agent's link to the cloud: flushes the queue to POST /v1/sync/batch and refreshes the replicas
// from the device replica feed. Online and offline are what the last exchange showed: while the cloud
// is unreachable the loop backs off (doubling up to a ceiling), and the backlog drains by itself
// when it answers again. Nobody switches anything.
import {
  SYNC_BATCH_MAX,
  type Replica as ReplicaPage,
  type SyncBatchResult,
  type SyncDevice,
  type SyncItem,
  type z,
} from '@portico/contract';
import { createPortico } from '@portico/sdk';
import type { AgentConfig } from './config.js';
import type { Queue } from './queue.js';
import type { DeviceCredentials, DeviceStateFile } from './device-state.js';
import type { Logger } from './log.js';
import type { Replica } from './replica.js';
import { wireItem } from './sync-item.js';

export interface SyncState {
  online: boolean;
  /**
   * Why the cloud refuses this device's credentials (its internal secret or its token), or null: the
   * cloud is reachable but will not take anything from this device until it is paired or configured again.
   */
  unauthorized: string | null;
  lastSyncAt: number | null;
  lastError: string | null;
  /** Items the cloud refused for good (malformed, unknown event): dropped from the queue, counted here. */
  rejected: number;
  uploaded: number;
}

type Link = Pick<DeviceCredentials, 'cloudUrl' | 'internalSecret' | 'deviceToken'>;

/** One call's answer as the SDK gives it: the data, or the error body, with the response. */
export type CloudAnswer<D> = Promise<{ data?: D; error?: unknown; response: Response }>;

/** The three calls the loop makes: the SDK's in the agent (`sdkCloud`), a stand-in in its fast tests. */
export interface SyncCloud {
  /** `POST /v1/sync/batch` */
  batch(body: { items: SyncItem[]; queueLength: number }): CloudAnswer<z.infer<typeof SyncBatchResult>>;
  /** `GET /v1/sync/events/{token}/replica`: one page. */
  replicaPage(
    token: string,
    query: { limit: number; since?: string; cursor?: string },
  ): CloudAnswer<ReplicaPage>;
  /** `GET /v1/sync/device`: the events the console assigned to this device. */
  device(): CloudAnswer<SyncDevice>;
}

const REQUEST_TIMEOUT_MS = 10_000;
/**
 * `lastSyncAt` reaches the disk at most this often, and when the loop stops: not a file rewritten at
 * every sync of a kiosk's flash. A crash loses at most this much of it (the queue is not affected).
 */
const PERSIST_SYNC_EVERY_MS = 60_000;

/** The cloud through `@portico/sdk`, with this device's credentials (the environment's or the pairing's). */
export function sdkCloud(link: Link): SyncCloud {
  const portico = createPortico({
    baseUrl: link.cloudUrl,
    device: { internalSecret: link.internalSecret, token: link.deviceToken },
    // No retries inside a call: the sync loop is the agent's retry. It backs off while the cloud
    // fails, keeps the queue meanwhile and reports each failure in the status at once.
    retry: { maxRetries: 0, timeoutMs: REQUEST_TIMEOUT_MS },
  });
  return {
    batch: (body) => portico.api.POST('/v1/sync/batch', { body }),
    // The contract's type: the SDK's generated one may lag behind it (fields the replica reads
    // defensively, door.ts faceLines).
    replicaPage: (token, query) =>
      portico.api.GET('/v1/sync/events/{token}/replica', {
        params: { path: { token }, query },
      }) as CloudAnswer<ReplicaPage>,
    device: () => portico.api.GET('/v1/sync/device'),
  };
}

/** The events a device serves of those assigned to it: a draft has no replica yet (404) until published. */
export const servedTokens = (assigned: SyncDevice): string[] =>
  assigned.events.filter((e) => e.status !== 'draft').map((e) => e.token);

/** Runs `job` after `delayMs` and returns its cancel: setTimeout in the agent, stepped by hand in tests. */
export type Scheduler = (delayMs: number, job: () => Promise<void>) => () => void;

const timers: Scheduler = (delayMs, job) => {
  const timer = setTimeout(() => void job(), delayMs);
  return () => clearTimeout(timer);
};

class CloudError extends Error {
  constructor(
    message: string,
    /** Set when the cloud refused the device's credentials (401, 403). */
    readonly unauthorized: string | null = null,
  ) {
    super(message);
  }
}

/** What a refusal of the device's credentials means for whoever fixes it. */
function refusedCredentials(status: number, code: string | undefined): string | null {
  if (status === 403 && code === 'forbidden') {
    return 'the cloud refused the internal secret (INTERNAL_SECRET, or the paired credentials): pair the device again';
  }
  if (status === 401) {
    return 'the cloud does not know this device’s token or it was revoked (DEVICE_TOKEN, or the paired credentials): pair the device again';
  }
  return null;
}

/** Most JSON bytes in one batch: items with frames are sent fewer at a time, under the cloud's body limit. */
const BATCH_BYTES = 8 * 1024 * 1024;

/** The oldest items that fit in one request (at least one). */
function fitting<T>(items: readonly T[]): T[] {
  let bytes = 0;
  const batch: T[] = [];
  for (const item of items) {
    bytes += Buffer.byteLength(JSON.stringify(item));
    if (batch.length > 0 && bytes > BATCH_BYTES) break;
    batch.push(item);
  }
  return batch;
}

export function createSync(deps: {
  config: Pick<AgentConfig, 'eventTokens' | 'syncIntervalMs' | 'maxBackoffMs'>;
  /** The cloud, with this device's credentials (`sdkCloud`). */
  cloud: SyncCloud;
  queue: Queue;
  replica: Replica;
  /** Where the last successful exchange is kept across restarts. */
  device: DeviceStateFile;
  now: () => number;
  /** When the next exchange runs (default: setTimeout). */
  schedule?: Scheduler;
  log: Logger;
  onChange: () => void;
}) {
  const { config, cloud, queue, replica, log } = deps;
  const schedule = deps.schedule ?? timers;
  const state: SyncState = {
    online: false,
    unauthorized: null,
    lastSyncAt: deps.device.get().lastSyncAt ?? null,
    lastError: null,
    rejected: 0,
    uploaded: 0,
  };
  let backoffMs = 0;
  let cancel: (() => void) | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  /** The data of one call; a cloud that cannot be reached or refuses is a CloudError. */
  async function call<D>(what: string, request: CloudAnswer<D>): Promise<D> {
    let result: Awaited<typeof request>;
    try {
      result = await request;
    } catch (error) {
      throw new CloudError(`cloud unreachable: ${(error as Error).message}`);
    }
    if (!result.response.ok) {
      const { status } = result.response;
      const text = typeof result.error === 'string' ? result.error : JSON.stringify(result.error ?? '');
      const code = (result.error as { code?: string } | undefined)?.code;
      throw new CloudError(
        `cloud answered ${status} on ${what}: ${text.slice(0, 200)}`,
        refusedCredentials(status, code),
      );
    }
    return result.data as D;
  }

  async function flush() {
    for (;;) {
      const items = fitting(await queue.oldest(SYNC_BATCH_MAX));
      if (items.length === 0) return;
      // What stays queued besides this batch, for the tenant's admins (the device's last report).
      const queueLength = Math.max(0, (await queue.length()) - items.length);
      const { results } = await call(
        '/v1/sync/batch',
        cloud.batch({ items: items.map(wireItem), queueLength }),
      );
      // Every answered item leaves the queue: accepted and duplicates are in the cloud; a rejected one
      // would be rejected again (the cloud keeps no partial state for it).
      state.rejected += results.filter((r) => r.status === 'rejected').length;
      state.uploaded += results.length;
      await queue.remove(items.map((i) => i.clientId));
      deps.onChange();
    }
  }

  async function refresh(token: string) {
    const since = replica.get(token)?.checkpoint ?? null;
    let cursor: string | null = null;
    do {
      const query = { limit: 2000, ...(cursor ? { cursor } : since && { since }) };
      const page: ReplicaPage = await call(
        `/v1/sync/events/${token}/replica`,
        cloud.replicaPage(token, query),
      );
      cursor = page.nextCursor;
      await replica.apply(token, page, cursor === null, deps.now());
    } while (cursor);
  }

  /** The events to sync: the fixed ones, else those the console assigned to this device now. */
  async function served(): Promise<readonly string[]> {
    if (config.eventTokens) return config.eventTokens;
    const tokens = servedTokens(await call('/v1/sync/device', cloud.device()));
    const held = replica.all().map((r) => r.token);
    if (tokens.length !== held.length || tokens.some((t) => !held.includes(t))) {
      await replica.serve(tokens);
      deps.device.update({ eventTokens: tokens });
    }
    return tokens;
  }

  let persistedSyncAt = state.lastSyncAt ?? -Infinity;
  function persistSyncAt() {
    if (state.lastSyncAt === null || state.lastSyncAt === persistedSyncAt) return;
    deps.device.update({ lastSyncAt: state.lastSyncAt });
    persistedSyncAt = state.lastSyncAt;
  }

  async function tick() {
    try {
      await flush();
      for (const token of await served()) await refresh(token);
      await flush();
      Object.assign(state, { online: true, unauthorized: null, lastSyncAt: deps.now(), lastError: null });
      if (state.lastSyncAt! - persistedSyncAt >= PERSIST_SYNC_EVERY_MS) persistSyncAt();
      backoffMs = 0;
    } catch (error) {
      // Anything but the cloud failing (the disk, a bug) is logged and retried the same way: the door
      // keeps deciding meanwhile.
      if (!(error instanceof CloudError)) log.error({ err: error }, 'sync failed (not the cloud)');
      const unauthorized = error instanceof CloudError ? error.unauthorized : null;
      // Said once when it starts, at error level: it does not heal by waiting, unlike an outage.
      if (unauthorized && unauthorized !== state.unauthorized)
        log.error(`device not authorised: ${unauthorized}`);
      state.unauthorized = unauthorized;
      state.online = false;
      state.lastError =
        error instanceof CloudError ? error.message : `agent error: ${(error as Error).message}`;
      backoffMs = Math.min(config.maxBackoffMs, backoffMs === 0 ? config.syncIntervalMs : backoffMs * 2);
    }
    deps.onChange();
  }

  function next(delayMs: number) {
    if (stopped) return;
    cancel?.();
    cancel = schedule(delayMs, runOnce);
  }

  function runOnce(): Promise<void> {
    running ??= tick().finally(() => {
      running = undefined;
      next(state.online ? config.syncIntervalMs : backoffMs);
    });
    return running;
  }

  return {
    state,
    /** First exchange now, then every interval (or the backoff while offline). */
    start: () => runOnce(),
    /** A new decision is queued: send it at once when online (offline, the backoff decides). */
    nudge() {
      if (state.online && !running) next(0);
    },
    async stop() {
      stopped = true;
      cancel?.();
      await running?.catch(() => undefined);
      persistSyncAt();
    },
  };
}

export type Sync = ReturnType<typeof createSync>;
