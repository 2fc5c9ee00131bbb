// The template store on disk: one snapshot and a journal per event, both sealed. Durable through a
// SIGKILL at any moment (mid-append, mid-compaction), a journal cut short by a crash loses only its
// last batch, and a journal left from before a snapshot is ignored.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, readdir, stat, truncate } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { cosineSimilarity, EMBEDDING_DIMENSIONS } from '@portico/face-engine';
import { describe, expect, it } from 'vitest';
import { createReplica } from '../src/replica.js';
import { createSealer } from '../src/sealed.js';
import { openStore } from '../src/store.js';
import { openTemplateStore, type TemplateSink } from '../src/templates.js';
import { GUESTS, TOKEN, templateOf, versionAt } from './support/templates.js';

const vector = (seed: number) => templateOf(seed, 99);

/** What a read gives: id -> vector. */
function readAll(dir: string, key: Buffer): Map<string, Float32Array> {
  const held = new Map<string, Float32Array>();
  const sink: TemplateSink = {
    put: (id, v) => held.set(id, Float32Array.from(v)),
    remove: (id) => held.delete(id),
    clear: () => held.clear(),
  };
  openTemplateStore(dir, createSealer(key)).read('tok', sink);
  return held;
}

const files = async (dir: string) => {
  const names = await readdir(path.join(dir, 'templates'));
  return {
    log: path.join(
      dir,
      'templates',
      names.find((n) => n.endsWith('.log'))!,
    ),
    snap: names.some((n) => n.endsWith('.snap'))
      ? path.join(
          dir,
          'templates',
          names.find((n) => n.endsWith('.snap'))!,
        )
      : null,
  };
};

describe('template store', () => {
  it('replays puts, removals and clears from its journal, and from a snapshot after compaction', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'portico-templates-'));
    const key = randomBytes(32);
    const store = openTemplateStore(dir, createSealer(key), { minCompactBytes: 0 });
    store.read('tok', { put: () => undefined, remove: () => undefined, clear: () => undefined });
    store.append('tok', [
      { guestId: 'a', embedding: vector(1) },
      { guestId: 'b', embedding: vector(2) },
    ]);
    store.append('tok', [{ clear: true }, { guestId: 'c', embedding: vector(3) }]);
    store.append('tok', [
      { guestId: 'd', embedding: vector(4) },
      { guestId: 'c', embedding: null },
    ]);
    expect([...readAll(dir, key).keys()]).toEqual(['d']);
    expect((await files(dir)).snap).toBeNull();

    expect(store.wantsCompaction('tok')).toBe(true);
    store.compact('tok', [
      ['d', vector(4)],
      ['e', vector(5)],
    ]);
    const { log, snap } = await files(dir);
    expect((await stat(snap!)).size).toBeGreaterThan(2 * EMBEDDING_DIMENSIONS * 4);
    expect(store.wantsCompaction('tok')).toBe(false);
    store.append('tok', [{ guestId: 'f', embedding: vector(6) }]);
    const held = readAll(dir, key);
    expect([...held.keys()].sort()).toEqual(['d', 'e', 'f']);
    expect(cosineSimilarity(held.get('e')!, vector(5))).toBeCloseTo(1, 6);
    expect(log.endsWith('.log')).toBe(true);
    expect(() => readAll(dir, randomBytes(32))).toThrow();
  });

  it('ignores a last batch cut short by a crash, and appends after the last whole one', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'portico-templates-'));
    const key = randomBytes(32);
    let store = openTemplateStore(dir, createSealer(key));
    store.read('tok', { put: () => undefined, remove: () => undefined, clear: () => undefined });
    store.append('tok', [{ guestId: 'a', embedding: vector(1) }]);
    store.append('tok', [{ guestId: 'b', embedding: vector(2) }]);
    const { log } = await files(dir);
    await truncate(log, (await stat(log)).size - 100);
    expect([...readAll(dir, key).keys()]).toEqual(['a']);

    store = openTemplateStore(dir, createSealer(key));
    store.read('tok', { put: () => undefined, remove: () => undefined, clear: () => undefined });
    store.append('tok', [{ guestId: 'c', embedding: vector(3) }]);
    expect([...readAll(dir, key).keys()]).toEqual(['a', 'c']);
  });

  it('ignores the journal of an older snapshot (a crash between a new snapshot and its journal)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'portico-templates-'));
    const key = randomBytes(32);
    const store = openTemplateStore(dir, createSealer(key));
    store.read('tok', { put: () => undefined, remove: () => undefined, clear: () => undefined });
    store.append('tok', [{ guestId: 'a', embedding: vector(1) }]);
    store.append('tok', [{ guestId: 'a', embedding: null }]);
    const { log } = await files(dir);
    await copyFile(log, `${log}.old`);
    store.compact('tok', [['b', vector(2)]]);
    await copyFile(`${log}.old`, log);
    expect([...readAll(dir, key).keys()]).toEqual(['b']);
  });

  it('keeps every template a completed refresh wrote and none it revoked when SIGKILLed at any moment', async () => {
    for (const delayMs of [0, 13, 41]) {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'portico-templates-kill-'));
      const key = randomBytes(32);
      const writer = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          path.join(import.meta.dirname, 'support/template-writer.ts'),
          dir,
          key.toString('base64'),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let done = -1;
      const closed = new Promise((resolve) => writer.once('close', resolve));
      await new Promise<void>((resolve, reject) => {
        writer.once('exit', () => reject(new Error('the writer exited before it was killed')));
        createInterface({ input: writer.stdout! }).on('line', (line) => {
          if (line === 'ready') done = 0;
          const round = /^done (\d+)$/.exec(line);
          if (round) done = Number(round[1]);
          if (done === 3) setTimeout(() => resolve(), delayMs);
        });
      });
      writer.kill('SIGKILL');
      await closed;
      // Rounds up to `done` returned; the next one may or may not have reached the disk.
      const finished = done;

      const sealer = createSealer(key);
      const db = await openStore(dir, sealer);
      const replica = createReplica(db, openTemplateStore(dir, sealer), sealer);
      await replica.load([TOKEN]);
      const held = replica.get(TOKEN)!;
      const stored = new Map([...held.index.entries()].map(([id, v]) => [id, Float32Array.from(v)]));
      const roundOf = (i: number, v: Float32Array) =>
        [finished, finished + 1].find((r) => cosineSimilarity(v, templateOf(i, versionAt(i, r))) > 0.9999);
      let missing = 0;
      for (let i = 0; i < GUESTS; i++) {
        const guest = held.guests.get(`g${i}`)!;
        const v = stored.get(`g${i}`);
        if (i >= GUESTS - finished) {
          // Revoked by a finished round: never matched again.
          expect(v, `g${i}`).toBeUndefined();
          expect(guest.hasTemplate).toBe(false);
        } else if (!v) {
          if (guest.hasTemplate) missing++;
        } else {
          expect(roundOf(i, v), `g${i} holds a template no round wrote`).toBeDefined();
        }
      }
      // A guest the list says has a template but whose template is not there (only the one revoked
      // by the round the kill interrupted) sends the next refresh back to the start.
      expect(missing).toBeLessThanOrEqual(1);
      if (missing > 0) expect(held.checkpoint).toBeNull();
      else expect(held.checkpoint).toMatch(/^\d+\.0$/);
      await db.close();
    }
  }, 120_000);
});
