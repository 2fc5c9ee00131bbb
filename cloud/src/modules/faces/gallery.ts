// Per-tenant face gallery: an in-memory FaceIndex of the tenant's enrolled templates (decrypted from
// FaceTemplate rows on first use), searched 1:N by enrollment (duplicate check) and check-in.
//
// Coherence across API processes: every search first reads a cheap fingerprint of the tenant's
// templates from the database (row count + sum of a 32-bit hash of each template id; a re-enrollment
// creates a new template id). When it differs from the fingerprint of what this process holds, the
// tenant is reloaded. So a change committed by any process is seen by the next search of every
// process, with no dependency on the bus. Changes made by this process are applied at once
// (`put` / `drop`) so it does not reload after its own writes.
import { createHash } from 'node:crypto';
import { embeddingFromBuffer, FaceIndex, type SearchHit } from '@portico/face-engine';
import type { Cipher } from '../../infra/crypto.js';
import type { Database } from '../../infra/db/index.js';

export interface GalleryHit {
  personId: string;
  /** Cosine similarity in [-1, 1]. */
  score: number;
}

export interface FaceGallery {
  /** The k best matching persons of the tenant, best first (templates of the current model only). */
  search(tenantId: string, embedding: Float32Array, k: number): Promise<GalleryHit[]>;
  /** After a commit that stored (or replaced) a person's template. */
  put(tenantId: string, personId: string, templateId: string, embedding: Float32Array): void;
  /** After a commit that erased a person's template. */
  drop(tenantId: string, personId: string): void;
  /** Forget a tenant (reloaded on next search). */
  invalidate(tenantId?: string): void;
  /** Templates held in memory for a tenant (undefined when not loaded). */
  size(tenantId: string): number | undefined;
}

/** Context bound (as AAD) to a template's encrypted embedding. */
export const templateContext = (tenantId: string, personId: string) =>
  `face-template:${tenantId}:${personId}`;

interface TenantGallery {
  index: FaceIndex;
  /** personId -> templateId */
  templates: Map<string, string>;
  count: number;
  hashSum: bigint;
}

const idHash = (id: string): bigint =>
  BigInt(parseInt(createHash('md5').update(id).digest('hex').slice(0, 8), 16));

export function createFaceGallery(deps: {
  db: Pick<Database, 'prisma'>;
  cipher: Cipher;
  modelId: string;
}): FaceGallery {
  const { prisma } = deps.db;
  const tenants = new Map<string, TenantGallery>();
  const loading = new Map<string, Promise<TenantGallery>>();

  async function fingerprint(tenantId: string): Promise<{ count: number; hashSum: bigint }> {
    const rows = await prisma.$queryRaw<Array<{ n: number | bigint; s: string }>>`
      SELECT count(*)::int AS n,
             coalesce(sum(('x' || lpad(substr(md5(id), 1, 8), 16, '0'))::bit(64)::bigint), 0)::text AS s
      FROM face_templates WHERE tenant_id = ${tenantId} AND model_id = ${deps.modelId}`;
    return { count: Number(rows[0]!.n), hashSum: BigInt(rows[0]!.s) };
  }

  async function load(tenantId: string): Promise<TenantGallery> {
    const rows = await prisma.faceTemplate.findMany({
      where: { tenantId, modelId: deps.modelId },
      select: { id: true, personId: true, embeddingEnc: true },
    });
    const gallery: TenantGallery = {
      index: new FaceIndex({ initialCapacity: Math.max(16, rows.length) }),
      templates: new Map(),
      count: 0,
      hashSum: 0n,
    };
    for (const row of rows) {
      const plain = deps.cipher.decrypt(row.embeddingEnc, templateContext(tenantId, row.personId));
      add(gallery, row.personId, row.id, embeddingFromBuffer(plain));
    }
    return gallery;
  }

  function add(gallery: TenantGallery, personId: string, templateId: string, embedding: Float32Array) {
    remove(gallery, personId);
    gallery.index.add(personId, embedding);
    gallery.templates.set(personId, templateId);
    gallery.count++;
    gallery.hashSum += idHash(templateId);
  }

  function remove(gallery: TenantGallery, personId: string) {
    const templateId = gallery.templates.get(personId);
    if (templateId === undefined) return;
    gallery.index.remove(personId);
    gallery.templates.delete(personId);
    gallery.count--;
    gallery.hashSum -= idHash(templateId);
  }

  async function current(tenantId: string): Promise<TenantGallery> {
    const held = tenants.get(tenantId);
    if (held) {
      const fp = await fingerprint(tenantId);
      if (fp.count === held.count && fp.hashSum === held.hashSum) return held;
      tenants.delete(tenantId);
    }
    let pending = loading.get(tenantId);
    if (!pending) {
      pending = load(tenantId).finally(() => loading.delete(tenantId));
      loading.set(tenantId, pending);
    }
    const gallery = await pending;
    tenants.set(tenantId, gallery);
    return gallery;
  }

  return {
    async search(tenantId, embedding, k) {
      const gallery = await current(tenantId);
      return gallery.index
        .search(embedding, k)
        .map((hit: SearchHit) => ({ personId: hit.id, score: hit.score }));
    },
    put(tenantId, personId, templateId, embedding) {
      const gallery = tenants.get(tenantId);
      if (gallery) add(gallery, personId, templateId, embedding);
    },
    drop(tenantId, personId) {
      const gallery = tenants.get(tenantId);
      if (gallery) remove(gallery, personId);
    },
    invalidate(tenantId) {
      if (tenantId === undefined) tenants.clear();
      else tenants.delete(tenantId);
    },
    size(tenantId) {
      return tenants.get(tenantId)?.count;
    },
  };
}
