// The face gallery of one API process against templates written and removed by another (here: rows
// written straight to the shared database), with synthetic embeddings: no face engine needed.
import { EMBEDDING_DIMENSIONS, embeddingToBuffer } from '@portico/face-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import { createFaceGallery, templateContext, type FaceGallery } from '../../src/modules/faces/gallery.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { testBackend } from '../support/database.js';
import { newTenant } from '../support/identity.js';
import { seedEnrolled } from '../support/seed-gallery.js';

/** A unit vector mostly along axis `axis`, tilted by `tilt` towards axis 0. */
function direction(axis: number, tilt = 0): Float32Array {
  const v = new Float32Array(EMBEDDING_DIMENSIONS);
  v[axis] = 1;
  v[0]! += tilt;
  const norm = Math.hypot(1, tilt);
  return v.map((x) => x / norm);
}

describe('face gallery coherence across processes', () => {
  let app: TestApp;
  let tenantId: string;
  let other: FaceGallery;
  let model: string;

  const enrollElsewhere = async (personId: string, embedding: Float32Array) => {
    const { prisma } = app.deps.db;
    await prisma.faceTemplate.deleteMany({ where: { personId } });
    await prisma.faceTemplate.create({
      data: {
        id: newId(),
        tenantId,
        personId,
        modelId: app.deps.face.modelId,
        embeddingEnc: app.deps.cipher.encrypt(
          embeddingToBuffer(embedding),
          templateContext(tenantId, personId),
        ),
        quality: 0.9,
      },
    });
  };
  const person = async (name: string) =>
    (await app.deps.db.prisma.person.create({ data: { id: newId(), tenantId, name, document: name } })).id;

  beforeAll(async () => {
    app = await createTestApp();
    model = app.deps.face.modelId;
    tenantId = (await newTenant(app)).tenantId;
    // A second API process's gallery on the same database.
    other = createFaceGallery({
      db: app.deps.db,
      cipher: app.deps.cipher,
      clock: app.deps.clock,
    });
  });
  afterAll(() => app?.close());

  it('drops a template removed elsewhere and returns the next best; sees new and replaced templates', async () => {
    const probe = direction(0);
    const [near, middle, far] = [await person('near'), await person('middle'), await person('far')];
    await enrollElsewhere(near, direction(1, 3));
    await enrollElsewhere(middle, direction(2, 2));
    await enrollElsewhere(far, direction(3, 1));
    const best = async () => (await other.search(tenantId, model, probe, 1))[0]?.personId;

    expect(await best()).toBe(near);
    expect(other.size(tenantId, model)).toBe(3);

    await app.deps.db.prisma.faceTemplate.deleteMany({ where: { personId: near } });
    expect(await best()).toBe(middle);
    expect(other.size(tenantId, model)).toBe(2);

    // A re-enrollment (a new template row for the same person) replaces the held one.
    await enrollElsewhere(far, direction(4, 10));
    expect(await best()).toBe(far);
    expect(other.size(tenantId, model)).toBe(2);

    const newcomer = await person('newcomer');
    await enrollElsewhere(newcomer, probe);
    const hits = await other.search(tenantId, model, probe, 3);
    expect(hits.map((h) => h.personId)).toEqual([newcomer, far, middle]);
    expect(hits[0]!.cosine).toBeCloseTo(1, 5);

    // Every template removed elsewhere: nothing is found, and nothing stale is returned.
    await app.deps.db.prisma.faceTemplate.deleteMany({ where: { tenantId } });
    expect(await other.search(tenantId, model, probe, 3)).toEqual([]);
    expect(other.size(tenantId, model)).toBe(0);
  });

  // PGlite only: on PostgreSQL each read waits on a socket, so timers run between pages whatever the
  // gallery does, and the test could not fail there.
  it.skipIf(testBackend !== 'pglite')(
    'lets timers run while it loads a gallery from the rows, a page at a time',
    async () => {
      // 12,000 templates: three pages of 5,000. On PGlite every statement runs on this thread, and a load
      // that only awaits promises held every timer and socket until it was done (4.5 s at 100,000).
      const { tenantId: big } = await newTenant(app);
      await seedEnrolled(app.deps, {
        tenantId: big,
        modelId: model,
        count: 12_000,
        enrolledAt: new Date(Date.now() - 3_600_000),
        embedding: (i) => direction(1 + (i % (EMBEDDING_DIMENSIONS - 1)), i / 12_000),
      });
      const fresh = createFaceGallery({
        db: app.deps.db,
        cipher: app.deps.cipher,
        clock: app.deps.clock,
        snapshots: false,
      });
      let turns = 0;
      const timer = setInterval(() => turns++, 1);
      try {
        await fresh.search(big, model, direction(0), 1);
      } finally {
        clearInterval(timer);
      }
      expect(fresh.size(big, model)).toBe(12_000);
      // A turn between pages (after the last one the load goes on to the search without waiting).
      expect(turns).toBeGreaterThanOrEqual(2);
    },
  );
});
