// The durable queue of decisions: each is written (sealed) before the kiosk hears the answer, and
// removed only once the cloud has answered for it (its deleted record purged when the queue empties,
// or within PURGE_EVERY_MS). Re-sending after a crash is safe: the cloud
// deduplicates by the item's client id.
import type { Sealer } from './sealed.js';
import { purgeRemoved, type AgentDatabase } from './store.js';
import type { QueuedItem } from './sync-item.js';

/** What a queued item's seal is bound to, with its client id. */
export const QUEUE_CONTEXT = 'agent-queue';
/**
 * Uploaded items' deleted records are purged when the queue empties, else at most this often: a purge
 * rewrites the collection's indexes (flushed to the disk, on the event loop) like any write here.
 */
const PURGE_EVERY_MS = 30_000;

export function createQueue(db: AgentDatabase, sealer: Sealer, now: () => number = Date.now) {
  let purgedAt = -Infinity;
  // Counted once before the first change, then kept here: the queue is this module's alone, and the
  // storage counts by reading every document.
  let count: Promise<number> | undefined;
  const counted = () => (count ??= db.queue.count().exec());
  const changed = (by: number) => {
    count = counted().then((n) => n + by);
  };
  return {
    async add(item: QueuedItem, at: number) {
      const sealed = sealer.seal(Buffer.from(JSON.stringify(item)), `${QUEUE_CONTEXT}:${item.clientId}`);
      await counted();
      await db.queue.insert({ id: item.clientId, item: sealed, createdAt: at });
      changed(1);
    },

    /** The oldest items, at most `n`. */
    async oldest(n: number): Promise<QueuedItem[]> {
      const docs = await db.queue.find({ sort: [{ createdAt: 'asc' }], limit: n }).exec();
      return docs.map(
        (d) => JSON.parse(sealer.open(d.item, `${QUEUE_CONTEXT}:${d.id}`).toString('utf8')) as QueuedItem,
      );
    },

    async remove(ids: readonly string[]) {
      if (ids.length === 0) return;
      await counted();
      const { success } = await db.queue.bulkRemove([...ids]);
      changed(-success.length);
      // Uploaded: gone from the disk too, not kept as deleted records.
      if ((await counted()) === 0 || now() - purgedAt >= PURGE_EVERY_MS) {
        await purgeRemoved(db.queue);
        purgedAt = now();
      }
    },

    length: () => counted(),
  };
}

export type Queue = ReturnType<typeof createQueue>;
