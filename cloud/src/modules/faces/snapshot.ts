// Gallery snapshots: a tenant's in-memory face index for one model, as stored (float16 templates and
// the fast path's int8 projections, FaceIndex.exportRows), sealed, so that a start loads it in a
// fraction of the time it takes to decrypt and index every template row. A snapshot is a cache: the
// gallery checks it against face_templates (the delta read on every search, a full id check in the
// background) and falls back to the rows when it is missing, stale beyond use, of another layout or
// does not decrypt.
//
// Where the chunks live: on PostgreSQL, in the database (several API processes share no disk, and the
// rows go with the tenant, cascade). On the embedded database in DATA_DIR, as files in
// DATA_DIR/gallery-snapshots/<tenant>/<model>/<generation>/<chunk>: one process holds that directory,
// and PGlite reads a 4.7 MB chunk in about 24 ms of WebAssembly on the event loop (detoasting, base64)
// where a file takes 2 ms (100,000 templates: 0.6-1.0 s against 0.05 s; docs/benchmarks/cloud.md). The
// heads stay in the database either way. Files are not fsynced: a chunk lost in a crash fails its
// check and the rows stand in. Chunk files of no current head (a replaced generation, a model or a
// tenant gone) are removed after every head switch, at start, and when a tenant's gallery is forgotten.
//
// Layout: one head row per (tenant, model) naming the current generation, and that generation's
// chunks (CHUNK_TEMPLATES rows each, AES-256-GCM with the service's key, bound as AAD to tenant,
// model, generation, chunk number and the head's figures). A new generation's chunks are written
// first, then the head is switched in one small transaction (the write-rename): readers see the old
// generation or the new one, never a mix. The head only moves to a snapshot confirmed later than its
// own (`confirmed_at`, the database's clock when the writer listed the tenant's templates), so a
// writer that listed the templates before an erasure cannot replace a snapshot written after it.
import { mkdir, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { IndexRows } from '@portico/face-engine';
import type { Cipher } from '../../infra/crypto.js';
import { newId, type Database } from '../../infra/db/index.js';
import { Prisma } from '../../generated/prisma/client.js';

/** Templates per chunk: about 4.7 MB sealed at 512 dimensions; one statement each. */
export const CHUNK_TEMPLATES = 4_000;

export interface SnapshotHead {
  generation: string;
  chunks: number;
  templates: number;
  layout: string;
  /** When the listing the snapshot holds started, by the writing process's clock (the delta reads after it). */
  syncedAt: Date;
  /** The database's clock at that listing: orders snapshots of different writers. */
  confirmedAt: Date;
}

/** A chunk's rows: the index rows plus each person's template id. */
export interface SnapshotChunk extends IndexRows {
  templateIds: string[];
}

const context = (tenantId: string, modelId: string, head: SnapshotHead, chunk: number) =>
  `face-gallery-snapshot:${tenantId}:${modelId}:${head.generation}:${chunk}/${head.chunks}:` +
  `${head.templates}:${head.syncedAt.toISOString()}:${head.layout}`;

/** [u32 count][u32 id bytes][ids: person ids then template ids, '\n'-joined][pad to 8][f16 vectors][i8 projections] */
function encodeChunk(chunk: SnapshotChunk): Buffer {
  const ids = Buffer.from([...chunk.ids, ...chunk.templateIds].join('\n'), 'utf8');
  const idsEnd = 8 + ids.length;
  const vectorsAt = Math.ceil(idsEnd / 8) * 8;
  const out = Buffer.alloc(vectorsAt + chunk.vectors.byteLength + chunk.projected.byteLength);
  out.writeUInt32LE(chunk.ids.length, 0);
  out.writeUInt32LE(ids.length, 4);
  ids.copy(out, 8);
  Buffer.from(chunk.vectors.buffer, chunk.vectors.byteOffset, chunk.vectors.byteLength).copy(out, vectorsAt);
  Buffer.from(chunk.projected.buffer, chunk.projected.byteOffset, chunk.projected.byteLength).copy(
    out,
    vectorsAt + chunk.vectors.byteLength,
  );
  return out;
}

function decodeChunk(plain: Buffer, dims: number): SnapshotChunk {
  const count = plain.readUInt32LE(0);
  const idBytes = plain.readUInt32LE(4);
  const names = count === 0 ? [] : plain.toString('utf8', 8, 8 + idBytes).split('\n');
  if (names.length !== 2 * count) throw new Error('snapshot chunk: ids do not match the count');
  const vectorsAt = Math.ceil((8 + idBytes) / 8) * 8;
  const vectorBytes = count * dims * 2;
  const projectedBytes = plain.length - vectorsAt - vectorBytes;
  if (projectedBytes < 0 || (count > 0 && projectedBytes % count !== 0)) {
    throw new Error('snapshot chunk: length does not match the count');
  }
  // Views of the decrypted buffer (the index copies them); a copy only when it is not 2-byte aligned.
  const at = plain.byteOffset + vectorsAt;
  const vectors =
    at % 2 === 0
      ? new Uint16Array(plain.buffer, at, count * dims)
      : new Uint16Array(new Uint8Array(plain.subarray(vectorsAt, vectorsAt + vectorBytes)).buffer);
  const projected = new Int8Array(plain.buffer, at + vectorBytes, projectedBytes);
  return { ids: names.slice(0, count), templateIds: names.slice(count), vectors, projected };
}

export interface SnapshotStore {
  /** The current snapshot's head, if any. */
  head(tenantId: string, modelId: string): Promise<SnapshotHead | undefined>;
  /** The heads of every stored snapshot (or a tenant's), biggest first (what a start loads). */
  heads(tenantId?: string): Promise<Array<SnapshotHead & { tenantId: string; modelId: string }>>;
  /** The chunks of `head`, decrypted and checked, in order; throws when one is missing or altered. */
  read(tenantId: string, modelId: string, head: SnapshotHead, dims: number): AsyncGenerator<SnapshotChunk>;
  /**
   * Stores a new generation and makes it current unless a snapshot confirmed later is there already.
   * Returns whether it became current.
   */
  write(
    tenantId: string,
    modelId: string,
    snapshot: Omit<SnapshotHead, 'generation' | 'chunks' | 'templates'>,
    chunks: SnapshotChunk[],
  ): Promise<boolean>;
  /** The database's clock (the `confirmedAt` of a listing made just before). */
  now(): Promise<Date>;
  /** Removes chunk files no current head names (of a tenant, or all): at start and after a tenant's reset. */
  sweep(tenantId?: string): Promise<void>;
}

interface HeadRow {
  tenant_id: string;
  model_id: string;
  generation: string;
  chunks: number;
  templates: number;
  layout: string;
  synced_at: Date;
  confirmed_at: Date;
}

const toHead = (row: HeadRow): SnapshotHead => ({
  generation: row.generation,
  chunks: Number(row.chunks),
  templates: Number(row.templates),
  layout: row.layout,
  syncedAt: new Date(row.synced_at),
  confirmedAt: new Date(row.confirmed_at),
});

/** Where a store keeps its chunks: the database's chunk table, or files (see the top of this file). */
interface ChunkPlace {
  put(tenantId: string, modelId: string, generation: string, chunk: number, sealed: Buffer): Promise<void>;
  get(tenantId: string, modelId: string, generation: string, chunk: number): Promise<Buffer | undefined>;
}

export function createSnapshotStore(deps: {
  db: Pick<Database, 'prisma' | 'dataDir'>;
  cipher: Cipher;
}): SnapshotStore {
  const { prisma } = deps.db;
  const dir = deps.db.dataDir === undefined ? undefined : path.join(deps.db.dataDir, 'gallery-snapshots');
  const place: ChunkPlace = dir ? fileChunks(dir) : databaseChunks(prisma);
  // Writes and sweeps one at a time (writes to the database too, harmless in the background): a sweep
  // never meets a generation of files being written.
  let files = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const done = files.then(work);
    files = done.then(
      () => undefined,
      () => undefined,
    );
    return done;
  };

  async function heads(tenantId?: string) {
    const which = tenantId === undefined ? Prisma.sql`TRUE` : Prisma.sql`tenant_id = ${tenantId}`;
    const rows = await prisma.$queryRaw<HeadRow[]>`
      SELECT * FROM face_gallery_snapshots WHERE ${which} ORDER BY templates DESC, tenant_id, model_id`;
    return rows.map((row) => ({ tenantId: row.tenant_id, modelId: row.model_id, ...toHead(row) }));
  }

  /** Removes the chunk files of no current head (of one tenant, or all). */
  async function sweep(tenantId?: string) {
    if (!dir) return;
    const keep = new Set(
      (await heads(tenantId)).map((h) => chunkDir(dir, h.tenantId, h.modelId, h.generation)),
    );
    for (const tenant of tenantId === undefined ? await list(dir) : [tenantId]) {
      for (const model of await list(path.join(dir, tenant))) {
        for (const generation of await list(path.join(dir, tenant, model))) {
          const at = path.join(dir, tenant, model, generation);
          if (!keep.has(at)) await rm(at, { recursive: true, force: true });
        }
        await removeIfEmpty(path.join(dir, tenant, model));
      }
      await removeIfEmpty(path.join(dir, tenant));
    }
  }

  /**
   * Makes `head` current unless a snapshot confirmed later is there already, and drops the chunk rows
   * and heads that are no longer any use; returns whether it became current.
   */
  function switchHead(tenantId: string, modelId: string, head: SnapshotHead): Promise<boolean> {
    return prisma.$transaction(async (tx) => {
      const [current] = await tx.$queryRaw<HeadRow[]>`
        SELECT * FROM face_gallery_snapshots WHERE tenant_id = ${tenantId} AND model_id = ${modelId} FOR UPDATE`;
      const newer = !current || new Date(current.confirmed_at) < head.confirmedAt;
      if (newer) {
        await tx.$executeRaw`
          INSERT INTO face_gallery_snapshots
                 (tenant_id, model_id, generation, chunks, templates, layout, synced_at, confirmed_at, written_at)
          VALUES (${tenantId}, ${modelId}, ${head.generation}, ${head.chunks}, ${head.templates}, ${head.layout},
                  ${head.syncedAt}, ${head.confirmedAt}, now())
          ON CONFLICT (tenant_id, model_id) DO UPDATE SET
                 generation = EXCLUDED.generation, chunks = EXCLUDED.chunks, templates = EXCLUDED.templates,
                 layout = EXCLUDED.layout, synced_at = EXCLUDED.synced_at,
                 confirmed_at = EXCLUDED.confirmed_at, written_at = EXCLUDED.written_at`;
      }
      // The replaced generation (or this one, refused), and chunks left by a writer that stopped
      // half-way an hour ago (a writer still at work is younger than that).
      await tx.$executeRaw`
        DELETE FROM face_gallery_snapshot_chunks
         WHERE tenant_id = ${tenantId} AND model_id = ${modelId}
           AND (generation = ${newer ? (current?.generation ?? '') : head.generation}
                OR (generation <> ${newer ? head.generation : current!.generation}
                    AND created_at < now() - interval '1 hour'))`;
      // Snapshots of models the tenant no longer has templates of (after a model switch).
      const gone = Prisma.sql`model_id <> ${modelId} AND NOT EXISTS (
        SELECT 1 FROM face_templates t WHERE t.tenant_id = ${tenantId} AND t.model_id = s.model_id)`;
      await tx.$executeRaw`DELETE FROM face_gallery_snapshots s WHERE tenant_id = ${tenantId} AND ${gone}`;
      await tx.$executeRaw`DELETE FROM face_gallery_snapshot_chunks s WHERE tenant_id = ${tenantId} AND ${gone}`;
      return newer;
    });
  }

  return {
    async head(tenantId, modelId) {
      const [row] = await prisma.$queryRaw<HeadRow[]>`
        SELECT * FROM face_gallery_snapshots WHERE tenant_id = ${tenantId} AND model_id = ${modelId}`;
      return row && toHead(row);
    },
    heads,
    sweep: (tenantId) => exclusive(() => sweep(tenantId)),
    async *read(tenantId, modelId, head, dims) {
      for (let chunk = 0; chunk < head.chunks; chunk++) {
        const sealed = await place.get(tenantId, modelId, head.generation, chunk);
        if (!sealed) throw new Error(`snapshot chunk ${chunk} is missing`);
        yield decodeChunk(deps.cipher.decrypt(sealed, context(tenantId, modelId, head, chunk)), dims);
      }
    },
    write: (tenantId, modelId, snapshot, chunks) =>
      exclusive(async () => {
        const head: SnapshotHead = {
          ...snapshot,
          generation: newId(),
          chunks: chunks.length,
          templates: chunks.reduce((sum, c) => sum + c.ids.length, 0),
        };
        // Chunk by chunk outside a transaction: on PGlite (one connection) other statements run between them.
        for (const [i, chunk] of chunks.entries()) {
          const sealed = deps.cipher.encrypt(encodeChunk(chunk), context(tenantId, modelId, head, i));
          await place.put(tenantId, modelId, head.generation, i, sealed);
        }
        const newer = await switchHead(tenantId, modelId, head);
        await sweep(tenantId);
        return newer;
      }),
    async now() {
      const [row] = await prisma.$queryRaw<Array<{ now: Date }>>`SELECT now() AS now`;
      return new Date(row!.now);
    },
  };
}

const list = (at: string) => readdir(at).catch(() => [] as string[]);
const removeIfEmpty = (at: string) => rmdir(at).catch(() => undefined);
const chunkDir = (dir: string, tenantId: string, modelId: string, generation: string) =>
  path.join(dir, tenantId, encodeURIComponent(modelId), generation);

function fileChunks(dir: string): ChunkPlace {
  return {
    async put(tenantId, modelId, generation, chunk, sealed) {
      const at = chunkDir(dir, tenantId, modelId, generation);
      await mkdir(at, { recursive: true, mode: 0o700 });
      await writeFile(path.join(at, String(chunk)), sealed, { mode: 0o600 });
    },
    get: (tenantId, modelId, generation, chunk) =>
      readFile(path.join(chunkDir(dir, tenantId, modelId, generation), String(chunk))).catch(
        (err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT') return undefined;
          throw err;
        },
      ),
  };
}

function databaseChunks(prisma: Database['prisma']): ChunkPlace {
  return {
    async put(tenantId, modelId, generation, chunk, sealed) {
      await prisma.$executeRaw`
        INSERT INTO face_gallery_snapshot_chunks (tenant_id, model_id, generation, chunk, data)
        VALUES (${tenantId}, ${modelId}, ${generation}, ${chunk}, decode(${sealed.toString('base64')}, 'base64'))`;
    },
    async get(tenantId, modelId, generation, chunk) {
      // Base64: through the driver adapters, bytea costs several times more to transfer.
      const [row] = await prisma.$queryRaw<Array<{ data: string }>>`
        SELECT encode(data, 'base64') AS data FROM face_gallery_snapshot_chunks
         WHERE tenant_id = ${tenantId} AND model_id = ${modelId}
           AND generation = ${generation} AND chunk = ${chunk}`;
      return row && Buffer.from(row.data, 'base64');
    },
  };
}
