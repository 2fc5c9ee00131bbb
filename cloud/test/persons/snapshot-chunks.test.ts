// Gallery snapshot chunks where each database keeps them: as sealed files in DATA_DIR/gallery-snapshots on
// the embedded database in a data directory, as rows of face_gallery_snapshot_chunks otherwise (the test
// database: in-memory PGlite, or PostgreSQL on CI's PostgreSQL pass). Either way only the current
// generation is kept (a replaced or refused one is removed), an altered chunk is refused, and nothing is
// left once the tenant is gone. Small synthetic chunks: no face engine needed.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FaceIndex } from '@portico/face-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCipher } from '../../src/infra/crypto.js';
import { newId, openDatabase, type Database } from '../../src/infra/db/index.js';
import { createSnapshotStore, type SnapshotStore } from '../../src/modules/faces/snapshot.js';
import { createTestDatabase } from '../support/database.js';

const MODEL = 'model+v1@test';

describe.each([
  { place: 'files', files: true },
  { place: 'rows', files: false },
])('gallery snapshot chunks as $place', ({ files }) => {
  let dataDir: string;
  let db: Database;
  let store: SnapshotStore;
  let tenantId: string;
  const layout = new FaceIndex().layout;
  const folder = () => path.join(dataDir, 'gallery-snapshots', tenantId, encodeURIComponent(MODEL));
  /** The generations whose chunks are stored. */
  const stored = async () =>
    files
      ? await readdir(folder()).catch(() => [])
      : (
          await db.prisma.faceGallerySnapshotChunk.findMany({
            where: { tenantId },
            distinct: ['generation'],
            select: { generation: true },
          })
        ).map((c) => c.generation);

  /** One chunk of `n` templates (unit vectors along an axis each), under fresh person ids. */
  const chunk = (n: number) => {
    const index = new FaceIndex();
    for (let i = 0; i < n; i++) {
      const v = new Float32Array(512);
      v[i] = 1;
      index.add(newId(), v);
    }
    const rows = index.exportRows();
    return { ...rows, templateIds: rows.ids.map(() => newId()) };
  };
  const write = (confirmedAt: Date, chunks = [chunk(3), chunk(2)]) =>
    store.write(tenantId, MODEL, { layout, syncedAt: confirmedAt, confirmedAt }, chunks);

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'portico-snapshot-chunks-'));
    db = files ? await openDatabase({ dataDir }) : await createTestDatabase();
    store = createSnapshotStore({ db, cipher: createCipher(randomBytes(32)) });
    tenantId = newId();
    await db.prisma.tenant.create({
      data: { id: tenantId, slug: `chunks-${tenantId}`, name: 'Chunks', webhookSecretEnc: randomBytes(16) },
    });
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('stores sealed chunks in its place only, and reads back the same rows', async () => {
    const chunks = [chunk(3), chunk(2)];
    expect(await write(new Date('2026-11-27T10:00:00Z'), chunks)).toBe(true);
    const head = (await store.head(tenantId, MODEL))!;
    expect(head).toMatchObject({ chunks: 2, templates: 5, layout });
    expect(await stored()).toEqual([head.generation]);
    if (files) {
      expect((await readdir(path.join(folder(), head.generation))).sort()).toEqual(['0', '1']);
      expect(await db.prisma.faceGallerySnapshotChunk.count()).toBe(0);
      // Sealed: neither a person id nor a template id is readable in the file.
      const file = await readFile(path.join(folder(), head.generation, '0'));
      for (const id of [...chunks[0]!.ids, ...chunks[0]!.templateIds]) expect(file.includes(id)).toBe(false);
    } else {
      expect(await readdir(dataDir)).toEqual([]);
    }
    const read = [];
    for await (const c of store.read(tenantId, MODEL, head, 512)) read.push(c);
    expect(read.map((c) => c.ids)).toEqual(chunks.map((c) => c.ids));
    expect(read.map((c) => c.templateIds)).toEqual(chunks.map((c) => c.templateIds));
    expect(read.map((c) => [...c.vectors])).toEqual(chunks.map((c) => [...c.vectors]));
    expect(read.map((c) => [...c.projected])).toEqual(chunks.map((c) => [...c.projected]));
  });

  it('keeps only the current generation: a replaced one and a refused (older) one are removed', async () => {
    const first = (await store.head(tenantId, MODEL))!;
    expect(await write(new Date('2026-11-27T11:00:00Z'))).toBe(true);
    const second = (await store.head(tenantId, MODEL))!;
    expect(second.generation).not.toBe(first.generation);
    expect(await stored()).toEqual([second.generation]);
    // A writer that listed the templates before the current snapshot's listing loses, and its chunks go.
    expect(await write(new Date('2026-11-27T10:30:00Z'))).toBe(false);
    expect((await store.head(tenantId, MODEL))!.generation).toBe(second.generation);
    expect(await stored()).toEqual([second.generation]);
  });

  it('refuses an altered chunk, and names a missing one', async () => {
    const head = (await store.head(tenantId, MODEL))!;
    const reading = async () => {
      for await (const c of store.read(tenantId, MODEL, head, 512)) expect(c.ids.length).toBeGreaterThan(0);
    };
    const file = path.join(folder(), head.generation, '1');
    if (files) {
      const sealed = await readFile(file);
      sealed[sealed.length - 1] = sealed.at(-1)! ^ 1;
      await writeFile(file, sealed);
    } else {
      await db.prisma.$executeRaw`
        UPDATE face_gallery_snapshot_chunks SET data = set_byte(data, 40, (get_byte(data, 40) + 1) % 256)
         WHERE tenant_id = ${tenantId} AND chunk = 1`;
    }
    await expect(reading()).rejects.toThrow();
    if (files) await rm(file);
    else await db.prisma.faceGallerySnapshotChunk.deleteMany({ where: { tenantId, chunk: 1 } });
    await expect(reading()).rejects.toThrow('snapshot chunk 1 is missing');
  });

  it('leaves nothing once the tenant is gone (a sandbox reset deletes the tenant)', async () => {
    await write(new Date('2026-11-27T12:00:00Z'));
    await db.prisma.tenant.delete({ where: { id: tenantId } });
    await store.sweep(tenantId);
    expect(await stored()).toEqual([]);
    if (files) expect(await readdir(path.join(dataDir, 'gallery-snapshots'))).toEqual([]);
  });
});
