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
import { CHECK_IN_CANDIDATES, embeddingFromBuffer, FaceIndex } from '@portico/face-engine';
import type { Clock } from '../../infra/clock.js';
import type { Cipher } from '../../infra/crypto.js';
import type { Database } from '../../infra/db/index.js';
import { Prisma } from '../../generated/prisma/client.js';

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

interface TenantGallery {
  tenantId: string;
  modelId: string;
  index: FaceIndex;
  /** personId -> templateId */
  templates: Map<string, string>;
  /** When the last read of the table started (this process's clock). */
  syncedAt: Date;
}

interface TemplateRow {
  id: string;
  person_id: string;
  /** Base64: through the driver adapters, bytea costs ~6x more to transfer than its base64 text. */
  embedding: string;
}

export function createFaceGallery(deps: {
  db: Pick<Database, 'prisma'>;
  cipher: Cipher;
  clock: Clock;
}): FaceGallery {
  const { prisma } = deps.db;
  /** By tenant, then by model. */
  const tenants = new Map<string, Map<string, TenantGallery>>();
  const loading = new Map<string, Promise<TenantGallery>>();

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
    const count = await prisma.faceTemplate.count({ where: { tenantId, modelId } });
    const gallery: TenantGallery = {
      tenantId,
      modelId,
      index: new FaceIndex({ initialCapacity: Math.max(16, count) }),
      templates: new Map(),
      syncedAt: deps.clock.now(),
    };
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

  /** Reads, decrypts and adds the templates with these ids. */
  async function fetchTemplates(gallery: TenantGallery, ids: string[]) {
    const { tenantId } = gallery;
    for (let i = 0; i < ids.length; i += PAGE) {
      const rows = await prisma.$queryRaw<TemplateRow[]>`
        SELECT id, person_id, encode(embedding_enc, 'base64') AS embedding FROM face_templates
         WHERE tenant_id = ${tenantId} AND id IN (${Prisma.join(ids.slice(i, i + PAGE))})`;
      for (const row of rows) add(gallery, row);
    }
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
    const rows = await prisma.$queryRaw<Pick<TemplateRow, 'id' | 'person_id'>[]>`
      SELECT id, person_id FROM face_templates WHERE tenant_id = ${tenantId} AND (${byId} OR ${recent})`;
    const alive = new Set(rows.map((row) => row.id));
    const unknown = rows
      .filter((row) => gallery.templates.get(row.person_id) !== row.id)
      .map((row) => row.id);
    await fetchTemplates(gallery, unknown);
    return { alive, added: unknown.length };
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
        if (gone.length === 0 && added === 0) return best();
      }
    },
    put(tenantId, modelId, personId, templateId, embedding) {
      const gallery = tenants.get(tenantId)?.get(modelId);
      if (!gallery) return;
      gallery.index.add(personId, embedding);
      gallery.templates.set(personId, templateId);
    },
    drop(tenantId, personId) {
      for (const gallery of tenants.get(tenantId)?.values() ?? []) remove(gallery, personId);
    },
    invalidate(tenantId) {
      if (tenantId === undefined) tenants.clear();
      else tenants.delete(tenantId);
    },
    size(tenantId, modelId) {
      return tenants.get(tenantId)?.get(modelId)?.templates.size;
    },
  };
}
