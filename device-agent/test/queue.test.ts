// The queue on disk: sealed, and bounded. RxDB keeps a removed document as a deleted record (content
// included) until a cleanup; the queue purges them when it empties, and at most every 30 s while items
// remain, so the folder stops growing however many decisions pass through it.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createQueue } from '../src/queue.js';
import { createSealer } from '../src/sealed.js';
import { openStore } from '../src/store.js';
import type { QueuedItem } from '../src/sync-item.js';

async function folder(dir: string) {
  const files = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((f) => f.isFile());
  const paths = files.map((f) => path.join(f.parentPath, f.name));
  const sizes = await Promise.all(paths.map(async (p) => (await stat(p)).size));
  return { files: paths.length, bytes: sizes.reduce((a, b) => a + b, 0), paths };
}

const item = (n: number): QueuedItem =>
  ({
    clientId: randomUUID(),
    eventToken: 'tok',
    method: 'qr',
    outcome: 'success',
    reason: null,
    guestId: `guest-${n}`,
    recordedAt: new Date(1_790_000_000_000 + n).toISOString(),
  }) as unknown as QueuedItem;

// Decisions uploaded 50 at a time (an agent online uploads each within a sync interval). CI runs
// 2 x 300 (without the purge the folder would hold 300 more records after the second pass: ~13 ms a
// decision, so 1,000 cost 26 s of every test run); `QUEUE_DECISIONS=10000` gives the figure of
// docs/benchmarks/edge.md.
const DECISIONS = Number(process.env.QUEUE_DECISIONS ?? 300);
const PER_ROUND = 50;

describe('agent queue on disk', () => {
  it('keeps no record of uploaded decisions: the folder stops growing, nothing of them readable', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'portico-queue-'));
    const sealer = createSealer(randomBytes(32));
    const db = await openStore(dir, sealer);
    const queue = createQueue(db, sealer);
    const empty = await folder(dir);
    let n = 0;
    const decide = async (count: number) => {
      for (let round = 0; round < count / PER_ROUND; round++) {
        for (let i = 0; i < PER_ROUND; i++) await queue.add(item(n++), Date.now());
        // As the sync loop does: the oldest batch, then remove what the cloud answered for.
        const batch = await queue.oldest(PER_ROUND);
        expect(batch).toHaveLength(PER_ROUND);
        await queue.remove(batch.map((b) => b.clientId));
      }
      return folder(dir);
    };
    const first = await decide(DECISIONS);
    const second = await decide(DECISIONS);
    console.log(
      `queue folder: ${empty.files} files / ${empty.bytes} bytes empty, ` +
        `${first.files} / ${first.bytes} after ${DECISIONS} decisions uploaded, ` +
        `${second.files} / ${second.bytes} after ${n}`,
    );
    expect(await queue.length()).toBe(0);
    // What remains is RxDB's empty indexes and its last change record (the last batch, sealed).
    expect(second.files).toBe(first.files);
    expect(second.bytes).toBeLessThan(first.bytes + 1024);
    expect(second.bytes).toBeLessThan(empty.bytes + 64 * 1024);
    const contents = await Promise.all(second.paths.map((p) => readFile(p)));
    expect(contents.some((c) => c.includes('guest-'))).toBe(false);
    await db.close();
  }, 300_000);

  it('purges uploaded records when the queue empties, and while items remain at most every 30 s', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'portico-queue-'));
    const sealer = createSealer(randomBytes(32));
    const db = await openStore(dir, sealer);
    let clock = 1_790_000_000_000;
    const queue = createQueue(db, sealer, () => clock);
    /** Deleted records of the queue still on the disk. */
    const deleted = async () => {
      const names = (await readdir(dir)).filter((n) => decodeURIComponent(n).includes('--queue--0-'));
      const docs = await Promise.all(
        names.map(async (n) => JSON.parse(await readFile(path.join(dir, n), 'utf8'))),
      );
      return docs.filter((d: { _deleted?: boolean }) => d._deleted).length;
    };
    const items = Array.from({ length: 5 }, (_, i) => item(i));
    for (const i of items) await queue.add(i, clock);
    await queue.remove([items[0]!.clientId]); // the first purge
    expect(await deleted()).toBe(0);
    clock += 1000;
    await queue.remove([items[1]!.clientId]);
    expect(await deleted()).toBe(1);
    clock += 30_000;
    await queue.remove([items[2]!.clientId]);
    expect(await deleted()).toBe(0);
    clock += 1000;
    await queue.remove([items[3]!.clientId]);
    expect(await deleted()).toBe(1);
    await queue.remove([items[4]!.clientId]); // empty now
    expect(await deleted()).toBe(0);
    expect(await queue.length()).toBe(0);
    await db.close();
  });
});
