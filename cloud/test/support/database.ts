// Databases for tests. With TEST_DATABASE_URL (CI: a PostgreSQL 15 server) every call gets a
// fresh database on that server, dropped on close. Otherwise every call gets an in-memory PGlite in
// the state of a migrated snapshot: one a test of this worker closed and that was emptied again, or a
// new one loaded from the snapshot (~1 s instead of ~5 s for initdb + migrations).
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { databaseOnPGlite, openDatabase, pgliteConnection, type Database } from '../../src/infra/db/index.js';
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
  const pglite = idle.pop() ?? (await newInMemory());
  const lent = lend(pglite);
  let closed = false;
  return databaseOnPGlite(lent.instance, async () => {
    if (closed) return;
    closed = true;
    lent.revoke();
    await giveBack(pglite);
  });
}

/**
 * In-memory databases this worker's tests closed, emptied and ready for the next test. Loading the
 * snapshot into a new PGlite takes about 0.35 s on a quiet machine (its 42 MB untarred into memory,
 * PostgreSQL started) and 1 s on average in the suite, which closed 124 of them (2026-11-28);
 * emptying one and checking its schema takes 10-50 ms (docs/contributing.md, "The suite's time").
 */
const idle: PGlite[] = [];
/**
 * More are closed: most files use one or two at a time. None outside a test runner's worker, which ends
 * its process itself: an instance loaded from a snapshot and left open keeps a script's process alive
 * (test/bench/sync.ts would never end).
 */
const KEEP_IDLE = process.env.VITEST ? 3 : 0;
/** Memory only grows: one that a test filled (100,000 templates) is closed rather than kept. */
const KEEP_MAX_BYTES = 384 * 1024 * 1024;

/** The migrated snapshot's state, the same for every instance loaded from it: read from the first. */
interface Pristine {
  /** Empties every table but the migrations' own, and restarts the sequences. */
  wipe: string;
  /** Of the schema (tables, columns, constraints, triggers, functions) and the migrations applied. */
  fingerprint: string;
  /** PGlite's result parsers before the Prisma adapter's were merged into them (pglite-prepared.ts). */
  parsers: PGlite['parsers'];
}
let pristine: Promise<Pristine> | undefined;

async function newInMemory(): Promise<PGlite> {
  const pglite = new PGlite({ loadDataDir: await migratedSnapshot() });
  await pglite.waitReady;
  pristine ??= readPristine(pglite);
  await pristine;
  return pglite;
}

async function readPristine(pglite: PGlite): Promise<Pristine> {
  const tables = await pglite.query<{ name: string }>(
    `SELECT quote_ident(tablename) AS name FROM pg_tables
      WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY 1`,
  );
  const sequences = await pglite.query<{ name: string }>(
    `SELECT quote_ident(sequencename) AS name FROM pg_sequences WHERE schemaname = 'public'`,
  );
  return {
    // Without the foreign keys' triggers (replica role) the order does not matter; DELETE rather than
    // TRUNCATE, which makes new files for every table (about 120 ms against 2-15).
    wipe: [
      'SET session_replication_role = replica',
      ...tables.rows.map((t) => `DELETE FROM ${t.name}`),
      'RESET session_replication_role',
      ...sequences.rows.map((q) => `ALTER SEQUENCE ${q.name} RESTART`),
    ].join(';\n'),
    fingerprint: await fingerprint(pglite),
    parsers: { ...pglite.parsers },
  };
}

/** The instance for one test: once it is closed, a late statement of that test fails, as on a closed database. */
function lend(pglite: PGlite) {
  let revoked = false;
  const instance = new Proxy(pglite, {
    get(target, property) {
      if (revoked) throw new Error('This test database was closed');
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { instance, revoke: () => (revoked = true) };
}

/** Back to the snapshot's state, or closed when it cannot be (schema changed, too big, pool full). */
async function giveBack(pglite: PGlite): Promise<void> {
  const state = await pristine!;
  try {
    if (idle.length < KEEP_IDLE && pglite.Module.HEAPU8.byteLength <= KEEP_MAX_BYTES) {
      // Prepared statements, session settings, advisory locks, temporary tables.
      await pglite.exec('DISCARD ALL');
      await pglite.exec(state.wipe);
      if ((await fingerprint(pglite)) === state.fingerprint) {
        for (const key of Object.keys(pglite.parsers)) delete pglite.parsers[Number(key)];
        Object.assign(pglite.parsers, state.parsers);
        idle.push(pglite);
        return;
      }
    }
  } catch {
    // A transaction left open, a closed instance: not reused.
  }
  await pglite.close().catch(() => {});
}

async function fingerprint(pglite: PGlite): Promise<string> {
  const { rows } = await pglite.query<{ md5: string }>(
    `SELECT md5(concat_ws('|',
       (SELECT string_agg(concat_ws(',', c.relname, c.relkind, a.attname, a.atttypid, a.attnotnull,
                                    pg_get_expr(d.adbin, d.adrelid)), ';' ORDER BY c.relname, a.attnum)
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
          LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
         WHERE n.nspname = 'public'),
       (SELECT string_agg(pg_get_constraintdef(oid), ';' ORDER BY conname) FROM pg_constraint
         WHERE connamespace = 'public'::regnamespace),
       (SELECT string_agg(concat_ws(',', tgname, tgenabled), ';' ORDER BY tgname) FROM pg_trigger
         WHERE NOT tgisinternal),
       (SELECT string_agg(md5(prosrc), ';' ORDER BY proname) FROM pg_proc
         WHERE pronamespace = 'public'::regnamespace),
       (SELECT string_agg(checksum, ';' ORDER BY migration_name) FROM _prisma_migrations))) AS md5`,
  );
  return rows[0]!.md5;
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
