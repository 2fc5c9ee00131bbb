// Raw connections to empty databases of the backend under test (PGlite unless TEST_DATABASE_URL).
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { pgliteConnection, postgresConnection } from '../../src/infra/db/index.js';
import { defaultMigrationsDir, type MigrationConnection } from '../../src/infra/db/migrate.js';
import { createScratchPostgresDatabase, testBackend } from '../support/database.js';

export interface RawDatabase {
  conn: MigrationConnection;
  /** For the schema engine. */
  adapter: SqlMigrationAwareDriverAdapterFactory;
  /** PostgreSQL only. */
  url?: string;
  close(): Promise<void>;
}

let emptySnapshot: Promise<Blob> | undefined;

/** An empty database: a scratch database on PostgreSQL, an in-memory PGlite otherwise. */
export async function openEmptyDatabase(): Promise<RawDatabase> {
  if (testBackend === 'postgres') {
    const scratch = await createScratchPostgresDatabase();
    const client = new pg.Client({ connectionString: scratch.url });
    await client.connect();
    return {
      conn: postgresConnection(client),
      adapter: new PrismaPg({ connectionString: scratch.url }),
      url: scratch.url,
      close: async () => {
        await client.end();
        await scratch.drop();
      },
    };
  }
  emptySnapshot ??= (async () => {
    const db = new PGlite();
    // dumpDataDir() before the instance is ready never settles.
    await db.waitReady;
    const dump = await db.dumpDataDir('none');
    await db.close();
    return dump;
  })();
  const db = new PGlite({ loadDataDir: await emptySnapshot });
  await db.waitReady;
  return { conn: pgliteConnection(db), adapter: new PrismaPGlite(db), close: () => db.close() };
}

/** A writable copy of the migrations folder, for tests that add or edit migrations. */
export async function copyMigrations(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'portico-migrations-'));
  await cp(defaultMigrationsDir, dir, { recursive: true });
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export interface Catalog {
  columns: unknown[];
  indexes: unknown[];
  constraints: unknown[];
}

/** What the application depends on in the public schema, in a comparable form. */
export async function readCatalog(conn: MigrationConnection): Promise<Catalog> {
  const columns = await conn.query(
    `SELECT c.relname AS table_name, a.attname AS column_name,
            format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null,
            pg_get_expr(d.adbin, d.adrelid) AS default_value
       FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
        AND c.relname <> '_prisma_migrations'
      ORDER BY 1, 2`,
  );
  const indexes = await conn.query(
    `SELECT tablename AS table_name, indexname AS index_name, indexdef AS definition
       FROM pg_indexes
      WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'
      ORDER BY 1, 2`,
  );
  const constraints = await conn.query(
    `SELECT c.relname AS table_name, con.conname AS constraint_name, con.contype::text AS type,
            pg_get_constraintdef(con.oid) AS definition
       FROM pg_constraint con
       JOIN pg_class c ON c.oid = con.conrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relname <> '_prisma_migrations'
      ORDER BY 1, 2`,
  );
  return { columns, indexes, constraints };
}
