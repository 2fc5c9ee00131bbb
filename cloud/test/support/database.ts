// Databases for tests. With TEST_DATABASE_URL (CI: a PostgreSQL 15 server) every call gets a
// fresh database on that server, dropped on close. Otherwise every call gets an in-memory PGlite
// loaded from a migrated snapshot (~1 s instead of ~5 s for initdb + migrations).
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { openDatabase, pgliteConnection, type Database } from '../../src/infra/db/index.js';
import { migrate, readMigrations } from '../../src/infra/db/migrate.js';

export const testDatabaseUrl: string | undefined = process.env.TEST_DATABASE_URL || undefined;
export const testBackend: Database['kind'] = testDatabaseUrl ? 'postgres' : 'pglite';

export async function createTestDatabase(): Promise<Database> {
  if (testDatabaseUrl) {
    const scratch = await createScratchPostgresDatabase();
    try {
      const db = await openDatabase({ databaseUrl: scratch.url, poolSize: 4 });
      return {
        ...db,
        close: async () => {
          await db.close();
          await scratch.drop();
        },
      };
    } catch (error) {
      await scratch.drop();
      throw error;
    }
  }
  return openDatabase({ memory: true, snapshot: await migratedSnapshot() });
}

let snapshot: Promise<Blob> | undefined;

/**
 * A dump of a freshly migrated PGlite. Made once and kept in node_modules/.cache, keyed by the
 * migrations and the PGlite build, so only the first test file of the first run pays for initdb.
 */
export function migratedSnapshot(): Promise<Blob> {
  snapshot ??= (async () => {
    const migrations = await readMigrations();
    const key = createHash('sha256')
      .update(createRequire(import.meta.url).resolve('@electric-sql/pglite'))
      .update(JSON.stringify(migrations.map((m) => [m.name, m.checksum])))
      .digest('hex')
      .slice(0, 16);
    const file = fileURLToPath(
      new URL(`../../node_modules/.cache/portico-test-db/${key}.tar`, import.meta.url),
    );
    try {
      return new Blob([await readFile(file)]);
    } catch {
      // Not cached yet.
    }
    const db = new PGlite();
    let dump: Blob;
    try {
      // dumpDataDir() before the instance is ready never settles.
      await db.waitReady;
      await migrate(pgliteConnection(db));
      dump = await db.dumpDataDir('none');
    } finally {
      await db.close();
    }
    // Written aside and renamed: parallel test files never read a half-written snapshot.
    await mkdir(dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
    await rename(partial, file);
    return dump;
  })();
  return snapshot;
}

/** An empty database on the server of `serverUrl` (default TEST_DATABASE_URL), with the means to drop it. */
export async function createScratchPostgresDatabase(
  serverUrl = testDatabaseUrl,
): Promise<{ url: string; drop(): Promise<void> }> {
  if (!serverUrl) throw new Error('TEST_DATABASE_URL is not set');
  const name = `portico_t_${randomBytes(6).toString('hex')}`;
  await withAdmin(serverUrl, (admin) => admin.query(`CREATE DATABASE "${name}"`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    // FORCE (PostgreSQL 13+) ends sessions a failed test may have left open.
    drop: () =>
      withAdmin(serverUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(
        () => {},
      ),
  };
}

async function withAdmin<T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}
