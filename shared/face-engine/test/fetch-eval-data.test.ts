// The verification half of scripts/fetch-eval-data.ts, on local files (no network here): a set's digest
// is stable, names every photo, and refuses a changed, missing or added photo; archives by sha256.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVAL_SETS, photosOf, setDigest, sha256File, verifySet } from '../scripts/fetch-eval-data.js';

describe('fetch-eval-data: verification', () => {
  let dir: string;
  const grey = (v: number) =>
    sharp({ create: { width: 4, height: 3, channels: 3, background: { r: v, g: v, b: v } } })
      .greyscale()
      .png()
      .toBuffer();
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'eval-verify-'));
    for (const [person, n] of [
      ['Ada_Lovelace', 2],
      ['Alan_Turing', 1],
    ] as const) {
      await mkdir(path.join(dir, 'set', person), { recursive: true });
      for (let i = 1; i <= n; i++)
        await writeFile(path.join(dir, 'set', person, `${person}_000${i}.png`), await grey(i * 40));
    }
    await writeFile(path.join(dir, 'set', 'README.md'), 'not a photo');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('hashes a file as sha256sum does', async () => {
    await writeFile(path.join(dir, 'abc'), 'abc');
    expect(await sha256File(path.join(dir, 'abc'))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('lists the photos of a <person>/<photo> folder, sorted', async () => {
    expect(await photosOf(path.join(dir, 'set'))).toEqual([
      'Ada_Lovelace/Ada_Lovelace_0001.png',
      'Ada_Lovelace/Ada_Lovelace_0002.png',
      'Alan_Turing/Alan_Turing_0001.png',
    ]);
  });

  it('accepts the set it pinned and refuses a changed, removed or added photo', async () => {
    const set = path.join(dir, 'set');
    for (const digestOf of ['bytes', 'pixels'] as const) {
      const pinned = { setSha256: await setDigest(set, digestOf), digestOf };
      expect(await verifySet(set, pinned)).toMatchObject({ ok: true, photos: 3 });
      const photo = path.join(set, 'Alan_Turing', 'Alan_Turing_0001.png');
      await writeFile(photo, await grey(200));
      expect((await verifySet(set, pinned)).ok).toBe(false);
      await writeFile(photo, await grey(40));
      expect((await verifySet(set, pinned)).ok).toBe(true);
      await writeFile(path.join(set, 'Alan_Turing', 'Alan_Turing_0002.png'), await grey(80));
      expect(await verifySet(set, pinned)).toMatchObject({ ok: false, photos: 4 });
      await rm(path.join(set, 'Alan_Turing', 'Alan_Turing_0002.png'));
    }
    expect((await verifySet(path.join(dir, 'absent'), EVAL_SETS.att!)).ok).toBe(false);
  });

  it('reads pixels, not encodings, for a converted set: the same picture as PNG twice verifies', async () => {
    const set = path.join(dir, 'set');
    const pinned = { setSha256: await setDigest(set, 'pixels'), digestOf: 'pixels' as const };
    const photo = path.join(set, 'Ada_Lovelace', 'Ada_Lovelace_0001.png');
    await writeFile(
      photo,
      await sharp({ create: { width: 4, height: 3, channels: 3, background: { r: 40, g: 40, b: 40 } } })
        .greyscale()
        .png({ compressionLevel: 0 })
        .toBuffer(),
    );
    expect((await verifySet(set, pinned)).ok).toBe(true);
  });

  it('pins every supported set, and the archives whose sha256 is published', () => {
    expect(Object.keys(EVAL_SETS)).toEqual(['lfw-dev', 'att']);
    for (const s of Object.values(EVAL_SETS)) expect(s.setSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(EVAL_SETS['lfw-dev']!.archiveSha256).toMatch(/^[0-9a-f]{64}$/);
  });
});
