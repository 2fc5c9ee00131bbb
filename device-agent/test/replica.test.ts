// The replica on disk: pages applied, removals (also of ids it never held), a reload as at start,
// templates unreadable at rest without the key.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EMBEDDING_MODEL_ID, embeddingToBuffer } from '@portico/face-engine';
import type { Replica as Page } from '@portico/contract';
import { describe, expect, it } from 'vitest';
import { createReplica } from '../src/replica.js';
import { createSealer } from '../src/sealed.js';
import { openStore } from '../src/store.js';
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
});
