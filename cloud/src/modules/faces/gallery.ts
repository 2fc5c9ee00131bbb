// Per-tenant face gallery: an in-memory FaceIndex of the tenant's enrolled templates (decrypted from
// FaceTemplate rows on first use), searched 1:N by enrollment (duplicate check) and check-in.
//
// Coherence across API processes, at one indexed query per search whatever the gallery size (two
// when there are templates this process does not hold yet). The query reads two things at once:
// - new templates: the tenant's templates created since the previous read (index on tenant_id,
//   created_at), minus an overlap of SKEW_MS for clock skew between API processes and for
//   transactions that commit a little after they stamped the row; a re-enrollment is a new template
//   row, so it arrives this way too. Ids only: embeddings are fetched just for the templates not held
//   yet (the second query, only when there are any), and the search runs again with them;
// - removed templates: the candidates of the in-memory search, confirmed against the table. A
//   candidate whose template is gone (person deleted or anonymised by any process) is dropped from
//   memory and never returned, and the next best candidates stand in (confirmed by another query
//   only if the SPARE candidates searched did not suffice).
// Changes made by this process are applied at once (`put` / `drop`).
//
// Start-up: `warm` loads every stored snapshot (snapshot.ts), biggest first, before the service
// reports ready; a snapshot is as good as the delta reads after it, since they start at its listing
// time. A gallery that changed is written again as a new snapshot (at most once per
// `snapshotDelayMs`), after a full listing of the tenant's templates that drops the ones erased
// meanwhile: a snapshot written after an erasure never holds the erased template. A tenant without a
// usable snapshot loads from the rows as before, and writes one.
import {
  CHECK_IN_CANDIDATES,
  EMBEDDING_DIMENSIONS,
  embeddingFromBuffer,
  FaceIndex,
} from '@portico/face-engine';
import type { Clock } from '../../infra/clock.js';
import type { Cipher } from '../../infra/crypto.js';
import type { Database } from '../../infra/db/index.js';
import type { Logger } from '../../infra/logger.js';
import { Prisma } from '../../generated/prisma/client.js';
import { CHUNK_TEMPLATES, createSnapshotStore, type SnapshotChunk } from './snapshot.js';

export interface GalleryHit {
  personId: string;
  /** Cosine similarity in [-1, 1]. */
  cosine: number;
  /** Calibrated score in [0, 1], what thresholds apply to (see the face engine's calibration.ts). */
  score: number;
}

export interface FaceGallery {
  /**
   * The k best matching persons of the tenant by calibrated score, best first, among the templates of
   * `modelId` (the embedding's model; the tenant's gallery of that model is the calibration cohort),
   * optionally among some persons only (an event's guests).
   */
  search(
    tenantId: string,
    modelId: string,
    embedding: Float32Array,
    k: number,
    among?: ReadonlySet<string>,
  ): Promise<GalleryHit[]>;
  /** After a commit that stored (or replaced) a person's template of a model. */
  put(tenantId: string, modelId: string, personId: string, templateId: string, embedding: Float32Array): void;
  /** After a commit that erased a person's templates. */
  drop(tenantId: string, personId: string): void;
  /** Forget a tenant, every model (reloaded on next search). */
  invalidate(tenantId?: string): void;
  /** Templates of a model held in memory for a tenant (undefined when not loaded). */
  size(tenantId: string, modelId: string): number | undefined;
  /**
   * Loads every stored snapshot, biggest first, then (without waiting) the galleries of tenants
   * that have templates but no snapshot. Resolves when the snapshots are loaded; never rejects.
   * Runs once: a later call returns the same promise (what readiness waits for).
   */
  warm(): Promise<void>;
  /** Whether `warm`'s snapshot loads are done (readiness). */
  ready(): boolean;
  /** Writes the snapshots that are due now, and waits for those being written. */
  flush(): Promise<void>;
  /** Stops writing snapshots; waits for the one being written. */
  close(): Promise<void>;
}

/** Context bound (as AAD) to a template's encrypted embedding. */
export const templateContext = (tenantId: string, personId: string) =>
  `face-template:${tenantId}:${personId}`;

/** How far back each delta read looks behind the previous one (clocks of API processes must agree within it). */
const SKEW_MS = 5_000;
/**
 * Extra candidates searched so that hits removed elsewhere can be replaced without a second search;
 * for one answer, the check-in's CHECK_IN_CANDIDATES, the search the evaluation measures.
 */
const SPARE = CHECK_IN_CANDIDATES - 1;
const PAGE = 5_000;
/** Default pause between a gallery's change and its new snapshot (changes meanwhile join the same write). */
export const SNAPSHOT_DELAY_MS = 30_000;

interface TenantGallery {
  tenantId: string;
  modelId: string;
  index: FaceIndex;
  /** personId -> templateId */
  templates: Map<string, string>;
  /** When the last read of the table started (this process's clock). */
  syncedAt: Date;
  /** Changed since its snapshot was read or written. */
  dirty: boolean;
  /** Forgotten (invalidate): its snapshot is not written. */
  discarded: boolean;
  /** A snapshot write (or check) due. */
  timer?: NodeJS.Timeout;
  /** The snapshot write (or check) under way. */
  writing?: Promise<void>;
}

interface TemplateRow {
  id: string;
  person_id: string;
  /** Base64: through the driver adapters, bytea costs ~6x more to transfer than its base64 text. */
  embedding: string;
}

export function createFaceGallery(deps: {
  db: Pick<Database, 'prisma' | 'sql' | 'dataDir'>;
  cipher: Cipher;
  clock: Clock;
  /** Snapshot failures are logged (tenant, model, counts, the error's message: never a template). */
  logger?: Logger;
  /** Whether to read and write snapshots (default true; a second gallery in a test may do without). */
  snapshots?: boolean;
  snapshotDelayMs?: number;
}): FaceGallery {
  const { prisma } = deps.db;
  const store = createSnapshotStore(deps);
  const snapshots = deps.snapshots ?? true;
  const delay = deps.snapshotDelayMs ?? SNAPSHOT_DELAY_MS;
  /** By tenant, then by model. */
  const tenants = new Map<string, Map<string, TenantGallery>>();
  const loading = new Map<string, Promise<TenantGallery>>();
  let warmed = false;
  let warming: Promise<void> | undefined;
  let closed = false;

  function add(gallery: TenantGallery, row: TemplateRow) {
    const { tenantId } = gallery;
    if (gallery.templates.get(row.person_id) === row.id) return;
    const sealed = Buffer.from(row.embedding, 'base64');
    const plain = deps.cipher.decrypt(sealed, templateContext(tenantId, row.person_id));
    gallery.index.add(row.person_id, embeddingFromBuffer(plain));
    gallery.templates.set(row.person_id, row.id);
  }

  function remove(gallery: TenantGallery, personId: string) {
    if (!gallery.templates.delete(personId)) return;
    gallery.index.remove(personId);
  }

  async function load(tenantId: string, modelId: string): Promise<TenantGallery> {
    if (snapshots) {
      try {
        const gallery = await loadSnapshot(tenantId, modelId);
        if (gallery) {
          // Checked against the table (erasures the delta reads have not met yet) in a while.
          schedule(gallery);
          return gallery;
        }
      } catch (err) {
        deps.logger?.warn(
          { tenantId, modelId, err: err instanceof Error ? err.message : String(err) },
          'gallery snapshot unusable: loading the templates from the table',
        );
      }
    }
    const gallery = await loadRows(tenantId, modelId);
    gallery.dirty = true;
    if (snapshots) schedule(gallery);
    return gallery;
  }

  function emptyGallery(tenantId: string, modelId: string, capacity: number, syncedAt: Date): TenantGallery {
    return {
      tenantId,
      modelId,
      index: new FaceIndex({ initialCapacity: Math.max(16, capacity) }),
      templates: new Map(),
      syncedAt,
      dirty: false,
      discarded: false,
    };
  }

  async function loadSnapshot(tenantId: string, modelId: string): Promise<TenantGallery | undefined> {
    const head = await store.head(tenantId, modelId);
    if (!head) return undefined;
    const gallery = emptyGallery(tenantId, modelId, head.templates, head.syncedAt);
    if (head.layout !== gallery.index.layout)
      throw new Error(`snapshot layout ${head.layout} is not the index's`);
    for await (const chunk of store.read(tenantId, modelId, head, EMBEDDING_DIMENSIONS)) {
      gallery.index.addRows(head.layout, chunk);
      chunk.ids.forEach((personId, i) => gallery.templates.set(personId, chunk.templateIds[i]!));
    }
    if (gallery.templates.size !== head.templates)
      throw new Error('snapshot holds fewer templates than its head says');
    return gallery;
  }

  async function loadRows(tenantId: string, modelId: string): Promise<TenantGallery> {
    const count = await prisma.faceTemplate.count({ where: { tenantId, modelId } });
    const gallery = emptyGallery(tenantId, modelId, count, deps.clock.now());
    // In pages by id: one huge result set would hold every row in memory twice, and the event loop
    // gets a turn between pages. Ids first, then their embeddings by primary key: ordered by id, the
    // embeddings query itself would let PostgreSQL (PGlite has no statistics) encode and sort every
    // template of the tenant for each page (2.1 s a page at 100k templates).
    for (let cursor = ''; ;) {
      const page = await prisma.$queryRaw<Pick<TemplateRow, 'id'>[]>`
        SELECT id FROM face_templates
         WHERE tenant_id = ${tenantId} AND model_id = ${modelId} AND id > ${cursor}
         ORDER BY id LIMIT ${PAGE}`;
      await fetchTemplates(
        gallery,
        page.map((row) => row.id),
      );
      if (page.length < PAGE) break;
      cursor = page.at(-1)!.id;
    }
    return gallery;
  }

  /**
   * Reads, decrypts and adds the templates with these ids. Each page ends with a turn of the event loop:
   * on PGlite every statement runs on this thread and settles as a promise, so without it a load of
   * 100,000 templates held timers, sockets and the embedded broker for its whole 4.5 s.
   */
  async function fetchTemplates(gallery: TenantGallery, ids: string[]) {
    const { tenantId } = gallery;
    for (let i = 0; i < ids.length; i += PAGE) {
      const rows = await prisma.$queryRaw<TemplateRow[]>`
        SELECT id, person_id, encode(embedding_enc, 'base64') AS embedding FROM face_templates
         WHERE tenant_id = ${tenantId} AND id IN (${Prisma.join(ids.slice(i, i + PAGE))})`;
      for (const row of rows) add(gallery, row);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Lists the tenant's templates of the model, drops the ones gone, adds the ones missing, and writes
   * a snapshot when anything changed since the last one.
   */
  async function persist(gallery: TenantGallery) {
    const { tenantId, modelId } = gallery;
    const confirmedAt = await store.now();
    const syncedAt = deps.clock.now();
    const rows = await prisma.$queryRaw<Pick<TemplateRow, 'id' | 'person_id'>[]>`
      SELECT id, person_id FROM face_templates WHERE tenant_id = ${tenantId} AND model_id = ${modelId}`;
    const alive = new Set(rows.map((row) => row.id));
    for (const [personId, templateId] of gallery.templates) {
      if (!alive.has(templateId)) {
        remove(gallery, personId);
        gallery.dirty = true;
      }
    }
    const unknown = rows
      .filter((row) => gallery.templates.get(row.person_id) !== row.id)
      .map((row) => row.id);
    if (unknown.length > 0) {
      await fetchTemplates(gallery, unknown);
      gallery.dirty = true;
    }
    if (!gallery.dirty || gallery.discarded || closed) return;
    gallery.dirty = false;
    // Copied in one go: the rows must not move (a removal fills its hole with the last row) meanwhile.
    const chunks: SnapshotChunk[] = [];
    for (let from = 0; from < gallery.index.size; from += CHUNK_TEMPLATES) {
      const rows = gallery.index.exportRows(from, from + CHUNK_TEMPLATES);
      chunks.push({ ...rows, templateIds: rows.ids.map((personId) => gallery.templates.get(personId)!) });
    }
    try {
      await store.write(tenantId, modelId, { layout: gallery.index.layout, syncedAt, confirmedAt }, chunks);
    } catch (err) {
      gallery.dirty = true;
      throw err;
    }
  }

  /** A snapshot write (or check) of the gallery in `delay`, after the one under way. */
  function schedule(gallery: TenantGallery, after = delay) {
    if (!snapshots || closed || gallery.discarded || gallery.timer) return;
    gallery.timer = setTimeout(() => run(gallery), after);
    gallery.timer.unref();
  }

  function run(gallery: TenantGallery): Promise<void> {
    clearTimeout(gallery.timer);
    gallery.timer = undefined;
    const writing = (gallery.writing ?? Promise.resolve())
      .then(() => persist(gallery))
      .catch((err: unknown) => {
        deps.logger?.warn(
          {
            tenantId: gallery.tenantId,
            modelId: gallery.modelId,
            err: err instanceof Error ? err.message : String(err),
          },
          'gallery snapshot not written',
        );
        schedule(gallery);
      })
      .finally(() => {
        if (gallery.writing === writing) gallery.writing = undefined;
      });
    gallery.writing = writing;
    return writing;
  }

  function sweepFailed(tenantId: string | undefined, err: unknown) {
    deps.logger?.warn(
      { tenantId, err: err instanceof Error ? err.message : String(err) },
      'gallery snapshot files not swept',
    );
  }

  function changed(gallery: TenantGallery) {
    gallery.dirty = true;
    schedule(gallery);
  }

  function galleries(): TenantGallery[] {
    return [...tenants.values()].flatMap((byModel) => [...byModel.values()]);
  }

  function loaded(tenantId: string, modelId: string): Promise<TenantGallery> {
    const held = tenants.get(tenantId)?.get(modelId);
    if (held) return Promise.resolve(held);
    const key = `${tenantId}/${modelId}`;
    let pending = loading.get(key);
    if (!pending) {
      pending = load(tenantId, modelId)
        .then((g) => {
          const byModel = tenants.get(tenantId) ?? new Map<string, TenantGallery>();
          byModel.set(modelId, g);
          tenants.set(tenantId, byModel);
          return g;
        })
        .finally(() => loading.delete(key));
      loading.set(key, pending);
    }
    return pending;
  }

  /**
   * Which of `templateIds` still exist, and (with `newSince`) the ids of the tenant's templates
   * created after it, in one query; templates not held yet are fetched and added.
   */
  async function read(
    gallery: TenantGallery,
    templateIds: string[],
    newSince: Date | null,
  ): Promise<{ alive: Set<string>; added: number }> {
    const byId = templateIds.length > 0 ? Prisma.sql`id IN (${Prisma.join(templateIds)})` : Prisma.sql`FALSE`;
    const { tenantId, modelId } = gallery;
    const recent = newSince
      ? Prisma.sql`(model_id = ${modelId} AND created_at > ${newSince})`
      : Prisma.sql`FALSE`;
    const rows = await deps.db.sql.query<Pick<TemplateRow, 'id' | 'person_id'>>(Prisma.sql`
      SELECT id, person_id FROM face_templates WHERE tenant_id = ${tenantId} AND (${byId} OR ${recent})`);
    const alive = new Set(rows.map((row) => row.id));
    const unknown = rows
      .filter((row) => gallery.templates.get(row.person_id) !== row.id)
      .map((row) => row.id);
    await fetchTemplates(gallery, unknown);
    return { alive, added: unknown.length };
  }

  /** `warm`'s work (FaceGallery.warm), run once. */
  async function warmAll(): Promise<void> {
    try {
      if (!snapshots) return;
      for (const head of await store.heads()) {
        if (closed) return;
        await loaded(head.tenantId, head.modelId).catch((err: unknown) =>
          deps.logger?.warn(
            { tenantId: head.tenantId, err: err instanceof Error ? err.message : String(err) },
            'gallery not loaded at start',
          ),
        );
      }
      // Chunk files a stop left behind (written, never made current, or replaced but not yet removed).
      void store.sweep().catch((err: unknown) => sweepFailed(undefined, err));
      // Tenants with templates and no snapshot yet (e.g. the first start with snapshots): from the
      // rows, after readiness, one at a time; each writes its snapshot.
      void (async () => {
        const without = await prisma.$queryRaw<Array<{ tenant_id: string; model_id: string }>>`
          SELECT DISTINCT t.tenant_id, t.model_id FROM face_templates t
           WHERE NOT EXISTS (SELECT 1 FROM face_gallery_snapshots s
                              WHERE s.tenant_id = t.tenant_id AND s.model_id = t.model_id)`;
        for (const row of without) if (!closed) await loaded(row.tenant_id, row.model_id);
      })().catch((err: unknown) =>
        deps.logger?.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'galleries not loaded at start',
        ),
      );
    } catch (err) {
      deps.logger?.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'gallery snapshots not loaded at start',
      );
    } finally {
      warmed = true;
    }
  }

  return {
    async search(tenantId, modelId, embedding, k, among) {
      const gallery = await loaded(tenantId, modelId);
      // Templates known to exist as of this search's reads.
      const confirmed = new Set<string>();
      let newSince: Date | null = new Date(gallery.syncedAt.getTime() - SKEW_MS);
      for (;;) {
        const candidates = gallery.index.search(embedding, k + SPARE, among ? { among } : {});
        const best = () =>
          gallery.index
            .calibrate(embedding, candidates)
            .slice(0, k)
            .map((c) => ({ personId: c.id, cosine: c.cosine, score: c.score }));
        const unconfirmed = candidates
          .map((c) => gallery.templates.get(c.id)!)
          .filter((id) => !confirmed.has(id));
        if (unconfirmed.length === 0 && newSince === null) return best();
        // Advanced only once the read succeeded: a failed read must not skip the templates it missed.
        const readAt = deps.clock.now();
        const { alive, added } = await read(gallery, unconfirmed, newSince);
        if (newSince) gallery.syncedAt = readAt;
        newSince = null;
        for (const id of alive) confirmed.add(id);
        // Gone: dropped from memory. Nothing gone and nothing new: these candidates are the answer.
        const gone = candidates.filter((c) => !confirmed.has(gallery.templates.get(c.id)!));
        for (const c of gone) remove(gallery, c.id);
        if (gone.length > 0 || added > 0) changed(gallery);
        if (gone.length === 0 && added === 0) return best();
      }
    },
    put(tenantId, modelId, personId, templateId, embedding) {
      const gallery = tenants.get(tenantId)?.get(modelId);
      if (!gallery) return;
      gallery.index.add(personId, embedding);
      gallery.templates.set(personId, templateId);
      changed(gallery);
    },
    drop(tenantId, personId) {
      const held = [...(tenants.get(tenantId)?.values() ?? [])];
      for (const gallery of held) {
        remove(gallery, personId);
        changed(gallery);
      }
      // A snapshot of a gallery this process does not hold may hold the template: loaded, it is
      // checked against the table and written again without it.
      if (snapshots && !closed && held.length === 0) {
        void store
          .heads(tenantId)
          .then((heads) => Promise.all(heads.map((head) => loaded(tenantId, head.modelId))))
          .catch((err: unknown) =>
            deps.logger?.warn(
              { tenantId, err: err instanceof Error ? err.message : String(err) },
              'gallery snapshot not checked after an erasure',
            ),
          );
      }
    },
    invalidate(tenantId) {
      const forgotten = tenantId === undefined ? galleries() : [...(tenants.get(tenantId)?.values() ?? [])];
      for (const gallery of forgotten) {
        gallery.discarded = true;
        clearTimeout(gallery.timer);
      }
      if (tenantId === undefined) tenants.clear();
      else tenants.delete(tenantId);
      // A tenant reset deleted its snapshot heads: its chunk files go too.
      if (snapshots) void store.sweep(tenantId).catch((err: unknown) => sweepFailed(tenantId, err));
    },
    size(tenantId, modelId) {
      return tenants.get(tenantId)?.get(modelId)?.templates.size;
    },
    warm() {
      warming ??= warmAll();
      return warming;
    },
    ready: () => warmed,
    async flush() {
      await Promise.all(galleries().map((gallery) => (gallery.timer ? run(gallery) : gallery.writing)));
    },
    async close() {
      closed = true;
      for (const gallery of galleries()) clearTimeout(gallery.timer);
      await Promise.all(galleries().map((gallery) => gallery.writing));
    },
  };
}
