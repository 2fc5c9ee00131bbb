// The replica on disk: pages applied, removals (also of ids it never held), a reload as at start,
// templates unreadable at rest without the key.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EMBEDDING_MODEL_ID, embeddingToBuffer } from '@portico/face-engine';
import type { Replica as Page } from '@portico/contract';
import { describe, expect, it } from 'vitest';
import { createReplica } from '../src/replica.js';
import { createSealer } from '../src/sealed.js';
import { openStore, sealName } from '../src/store.js';
import { openTemplateStore } from '../src/templates.js';

// A policy as a cloud from before the three answers sends it (only the accept line).
const policy = {
  tenantId: 't',
  modelId: EMBEDDING_MODEL_ID,
  matchThreshold: 0.57,
  requireLiveness: false,
  livenessThreshold: 0.5,
  syncCheckinImages: false,
} as Page['policy'];
const event: Page['event'] = {
  id: 'e',
  name: 'Gala',
  status: 'open',
  checkinMethods: [],
  capacity: null,
  geofence: null,
};
const vector = new Float32Array(512).map((_, i) => Math.cos(i));
const embedding = embeddingToBuffer(vector).toString('base64');
const guest = (id: string, withTemplate: boolean): Page['items'][number] => ({
  guestId: id,
  name: `Guest ${id}`,
  status: 'confirmed',
  checkedInAt: null,
  personId: `p-${id}`,
  qrHash: `hash-${id}`,
  template: withTemplate ? { modelId: EMBEDDING_MODEL_ID, embedding } : null,
});
const page = (
  items: Page['items'],
  removed: string[],
  checkpoint: string,
  revokedPersons: string[] = [],
): Page => ({
  event,
  policy,
  items,
  removed,
  revokedPersons,
  nextCursor: null,
  checkpoint,
});

describe('device replica', () => {
  it('applies pages, removals and deleted persons, reloads them from disk, and keeps templates and names sealed at rest', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'portico-replica-'));
    const key = randomBytes(32);
    let db = await openStore(dir, createSealer(key));
    let replica = createReplica(db, openTemplateStore(dir, createSealer(key)), createSealer(key));
    await replica.load(['tok']);
    await replica.apply(
      'tok',
      page([guest('a', true), guest('b', true), guest('c', false)], [], '5.1000'),
      true,
      1000,
    );
    await replica.apply(
      'tok',
      page([guest('c', true), guest('d', true)], ['b', 'never-held'], '7.2000'),
      true,
      2000,
    );
    // d's person was deleted in the cloud: d stays on the list, without a face; so does e, whose
    // person was deleted after the page listing it was read.
    await replica.apply('tok', page([guest('e', true)], [], '7.3000', ['p-d', 'p-e']), true, 3000);
    await replica.markCheckedIn('tok', 'a', '2026-11-23T10:00:00.000Z');
    await replica.close();
    await db.close();

    db = await openStore(dir, createSealer(key));
    replica = createReplica(db, openTemplateStore(dir, createSealer(key)), createSealer(key));
    await replica.load(['tok']);
    const held = replica.get('tok')!;
    expect([...held.guests.keys()].sort()).toEqual(['a', 'c', 'd', 'e']);
    expect(held.index.size).toBe(2);
    expect(held.index.has('d')).toBe(false);
    expect(held.guests.get('d')).toMatchObject({ personId: null, hasTemplate: false });
    expect(held.guests.get('e')).toMatchObject({ personId: null, hasTemplate: false });
    expect(held).toMatchObject({ checkpoint: '7.3000', refreshedAt: 3000 });
    expect(held.guests.get('a')!.checkedIn).toBe(true);
    expect(held.byQr.get('hash-c')).toBe('c');
    const [best] = held.index.search(vector, 1);
    expect(best!.score).toBeCloseTo(1, 5);

    // Neither the template's bytes nor its base64 are anywhere on the disk.
    const files = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((f) => f.isFile());
    expect(files.some((f) => f.name.endsWith('.log'))).toBe(true);
    const contents = await Promise.all(files.map((f) => readFile(path.join(f.parentPath, f.name))));
    const raw = embeddingToBuffer(vector).subarray(0, 64);
    expect(contents.some((c) => c.includes(raw) || c.includes(embedding.slice(0, 40)))).toBe(false);
    // Nor a guest's name, and the removed guest left no deleted record behind (its QR hash is gone).
    expect(contents.some((c) => c.includes('Guest '))).toBe(false);
    expect(held.guests.get('c')!.name).toBe('Guest c');
    expect(contents.some((c) => c.includes('hash-b'))).toBe(false);
    await db.close();

    // Another key cannot open the templates.
    const other = createSealer(randomBytes(32));
    db = await openStore(dir, createSealer(key));
    await expect(createReplica(db, openTemplateStore(dir, other), other).load(['tok'])).rejects.toThrow();
    await db.close();
  });

  it('moves the guests an older agent kept in RxDB into the replica store, with their check-ins and templates', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'portico-replica-'));
    const sealer = createSealer(randomBytes(32));
    // The older layout: guests as RxDB documents (names sealed one by one), templates in the store.
    let db = await openStore(dir, sealer);
    const older = openTemplateStore(dir, sealer);
    older.read('tok', { put: () => {}, remove: () => {}, clear: () => {} });
    older.append('tok', [{ guestId: 'a', embedding: vector }]);
    const state = { event, policy, checkpoint: '4.1' };
    await db.events.upsert({ token: 'tok', state: JSON.stringify(state), refreshedAt: 1000 });
    await db.guests.bulkUpsert(
      ['a', 'b'].map((id) => ({
        key: `tok:${id}`,
        eventToken: 'tok',
        guestId: id,
        name: sealName(sealer, `tok:${id}`, `Guest ${id}`),
        status: id === 'b' ? 'checked_in' : 'confirmed',
        checkedInAt: id === 'b' ? '2026-11-23T10:00:00.000Z' : null,
        personId: `p-${id}`,
        qrHash: `hash-${id}`,
        modelId: id === 'a' ? EMBEDDING_MODEL_ID : null,
      })),
    );

    for (let start = 0; start < 2; start++) {
      const replica = createReplica(db, openTemplateStore(dir, sealer), sealer);
      await replica.load(['tok']);
      const held = replica.get('tok')!;
      expect([...held.guests.keys()].sort()).toEqual(['a', 'b']);
      expect(held.guests.get('a')).toMatchObject({ name: 'Guest a', hasTemplate: true, checkedIn: false });
      expect(held.guests.get('b')).toMatchObject({ name: 'Guest b', hasTemplate: false, checkedIn: true });
      expect(held.index.has('a')).toBe(true);
      expect(held.checkpoint).toBe('4.1');
      expect(await db.guests.count().exec()).toBe(0);
      await db.close();
      db = await openStore(dir, sealer);
    }
    await db.close();
  });

  it('writes a check-in, and a delta of unchanged guests, without rewriting the list', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'portico-replica-'));
    const sealer = createSealer(randomBytes(32));
    const db = await openStore(dir, sealer);
    const replica = createReplica(db, openTemplateStore(dir, sealer), sealer);
    await replica.load(['tok']);
    const many = Array.from({ length: 2000 }, (_, i) => guest(`g${i}`, false));
    await replica.apply('tok', page(many, [], '1.1'), true, 1000);
    const stored = async () => {
      const names = await readdir(path.join(dir, 'templates'));
      const sizes = await Promise.all(names.map((n) => stat(path.join(dir, 'templates', n))));
      return sizes.reduce((sum, s) => sum + s.size, 0);
    };
    const before = await stored();
    expect(before).toBeGreaterThan(2000 * 50);

    await replica.markCheckedIn('tok', 'g7', '2026-11-23T10:00:00.000Z');
    const checkedIn = await stored();
    expect(checkedIn - before).toBeGreaterThan(0);
    expect(checkedIn - before).toBeLessThan(1000);

    // The cloud sends the same guests again (their change sequence moved): nothing is written.
    await replica.apply('tok', page(many.slice(100, 200), [], '1.2'), true, 2000);
    expect(await stored()).toBe(checkedIn);
    // And no guest is an RxDB document (a write of which rewrites every index of the collection).
    expect((await readdir(dir)).filter((n) => decodeURIComponent(n).includes('--guests--2-'))).toEqual([]);
    expect(replica.get('tok')!.guests.get('g7')!.checkedIn).toBe(true);
    await db.close();
  });

  it('writes the checkpoint at a new policy, then at most once a minute and at close', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'portico-replica-'));
    const sealer = createSealer(randomBytes(32));
    const reopened = async () => {
      const db = await openStore(dir, sealer);
      const replica = createReplica(db, openTemplateStore(dir, sealer), sealer);
      await replica.load(['tok']);
      return { db, replica, held: replica.get('tok')! };
    };
    let { db, replica } = await reopened();
    await replica.apply('tok', page([guest('a', false)], [], '1.1'), true, 1000);
    await replica.apply('tok', page([guest('b', false)], [], '1.2'), true, 2000);
    await db.close(); // as a crash would leave it: no close of the replica
    let held;
    ({ db, replica, held } = await reopened());
    expect(held).toMatchObject({ checkpoint: '1.1', refreshedAt: 1000 });
    // Its guests are all there: the replica store has them whatever the checkpoint says.
    expect([...held.guests.keys()].sort()).toEqual(['a', 'b']);
    await replica.apply('tok', page([], [], '1.3'), true, 61_000);
    await replica.apply('tok', page([], [], '1.4'), true, 62_000);
    await replica.apply(
      'tok',
      { ...page([], [], '1.5'), event: { ...event, name: 'Renamed' } },
      true,
      63_000,
    );
    await db.close();
    ({ db, replica, held } = await reopened());
    expect(held).toMatchObject({ checkpoint: '1.5', refreshedAt: 63_000, event: { name: 'Renamed' } });
    await replica.apply('tok', page([], [], '1.6'), true, 64_000);
    await replica.close();
    await db.close();
    ({ db, held } = await reopened());
    expect(held).toMatchObject({ checkpoint: '1.6', refreshedAt: 64_000 });
    await db.close();
  });
});
