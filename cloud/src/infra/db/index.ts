// Opens the service's database: PostgreSQL through adapter-pg when a URL is given, otherwise the
// embedded PGlite (PostgreSQL in WASM) in `${dataDir}/pglite`. Pending migrations are applied
// before the Prisma client is handed out.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '../../generated/prisma/client.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { directOnPGlite, directOnPool, type DirectSql } from './direct.js';
import { acquireDataDirLock } from './lock.js';
import { migrate, type MigrationConnection } from './migrate.js';
import { withPreparedStatements } from './pglite-prepared.js';

export type { PrismaClient } from '../../generated/prisma/client.js';
export { viaPrisma, type DirectSql, type Statements } from './direct.js';
export { newId } from './ids.js';
export { MigrationError } from './migrate.js';
export { DataDirLockedError } from './lock.js';

/**
 * The client inside `prisma.$transaction(async (tx) => ...)`. On PGlite there is one connection:
 * inside a transaction use only `tx`; the outer client would wait for the transaction to end.
 */
export type Tx = Prisma.TransactionClient;

/**
 * A write refused by a unique index (Prisma's P2002, or SQLSTATE 23505 from `db.sql`), e.g. a taken
 * externalId or a concurrent duplicate.
 */
export const isUniqueViolation = (error: unknown): boolean => {
  const code = (error as { code?: string } | null)?.code;
  return code === 'P2002' || code === '23505';
};

/** The foreign key a raw statement violated (its constraint's name), if that is why it failed. */
export function violatedForeignKey(error: unknown): string | undefined {
  const driver = error as { code?: string; constraint?: string } | null;
  if (driver?.code === '23503') return driver.constraint;
  const cause = (
    error as {
      meta?: { driverAdapterError?: { cause?: { kind?: string; constraint?: { index?: string } } } };
    }
  )?.meta?.driverAdapterError?.cause;
  return cause?.kind === 'ForeignKeyConstraintViolation' ? cause.constraint?.index : undefined;
}

export interface Database {
  prisma: PrismaClient;
  /** The check-in's hot statements and transactions, straight to the driver, prepared (direct.ts). */
  sql: DirectSql;
  kind: 'pglite' | 'postgres';
  /**
   * The service's data directory when the embedded database lives in it (PGlite on disk): one process
   * holds it, so what is kept beside the database can be files there. Unset on PostgreSQL and in memory.
   */
  dataDir?: string;
  /** Throws when the database does not answer (readiness probe). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** PostgreSQL URL; when set, PGlite options are ignored. */
  databaseUrl?: string;
  /** Service data directory; PGlite lives in `${dataDir}/pglite`. */
  dataDir?: string;
  /** Directory of Prisma migration folders (default cloud/prisma/migrations). */
  migrationsDir?: string;
  /** Pool size for PostgreSQL (default 10). */
  poolSize?: number;
  onLog?: (msg: string) => void;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  if (!options.dataDir) throw new Error('openDatabase: give databaseUrl or dataDir');
  return openPGlite(options.dataDir, options);
}

async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<Database> {
  // Loaded only here: a start on the embedded database does without them (~70 ms of imports).
  const [{ default: pg }, { PrismaPg }] = await Promise.all([import('pg'), import('@prisma/adapter-pg')]);
  // Migrations on a dedicated session: the advisory lock is per session, and a script with
  // several statements needs the simple query protocol, which a plain client.query(text) uses.
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await migrate(postgresConnection(client), { migrationsDir: options.migrationsDir, onLog: options.onLog });
  } finally {
    await client.end();
  }

  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 });
  // An idle client whose server connection drops (database restart, failover, a test dropping its
  // database) emits 'error' on the pool; unhandled, that would crash the process. The pool replaces it.
  pool.on('error', (err) => options.onLog?.(`database connection lost: ${err.message}`));
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    prisma,
    sql: directOnPool(pool, pg.types),
    kind: 'postgres',
    ping: async () => {
      await prisma.$queryRaw`SELECT 1`;
    },
    close: async () => {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

async function openPGlite(dataDir: string, options: OpenDatabaseOptions): Promise<Database> {
  const dir = join(dataDir, 'pglite');
  await mkdir(dir, { recursive: true });
  // PGlite itself does not notice a second process on the same directory (it would corrupt it).
  const release = await acquireDataDirLock(dir);
  let db: PGlite | undefined;
  try {
    db = new PGlite({ dataDir: dir });
    await db.waitReady;
    await migrate(pgliteConnection(db), { migrationsDir: options.migrationsDir, onLog: options.onLog });
  } catch (error) {
    await db?.close().catch(() => {});
    await release();
    throw error;
  }

  const pglite = db;
  return {
    ...databaseOnPGlite(pglite, async () => {
      await pglite.close();
      await release();
    }),
    dataDir,
  };
}

/**
 * The service's view of a PGlite instance that is open and migrated; `close` runs `release` after
 * Prisma lets go (the service closes the instance; tests hand an in-memory one back for reuse).
 */
export function databaseOnPGlite(pglite: PGlite, release: () => Promise<void>): Database {
  const prepared = withPreparedStatements(pglite);
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(prepared.instance) });
  return {
    prisma,
    sql: directOnPGlite(prepared),
    kind: 'pglite',
    ping: async () => {
      await prisma.$queryRaw`SELECT 1`;
    },
    close: async () => {
      await prisma.$disconnect();
      await release();
    },
  };
}

export function postgresConnection(client: pg.Client): MigrationConnection {
  return {
    kind: 'postgres',
    exec: async (sql) => {
      await client.query(sql);
    },
    query: async <T>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as T[],
  };
}

export function pgliteConnection(db: PGlite): MigrationConnection {
  return {
    kind: 'pglite',
    exec: async (sql) => {
      await db.exec(sql);
    },
    query: async <T>(sql: string, params?: unknown[]) => (await db.query<T>(sql, params)).rows,
  };
}
