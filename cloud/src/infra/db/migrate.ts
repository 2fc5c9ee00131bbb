// The project's migration runner. `prisma migrate deploy` needs Prisma's native schema engine,
// which cannot be downloaded everywhere this service runs, so migrations are applied here: the
// same folder layout (prisma/migrations/<stamp>_<name>/migration.sql) and the same bookkeeping
// table (_prisma_migrations, sha256 checksums), so the Prisma CLI, where it works, agrees.
//
// Scripts run on a raw connection (a pg client or PGlite's exec), never through a Prisma driver
// adapter: adapter-pg splits scripts on ';' (breaking $$ bodies) and pglite-prisma-adapter does not
// await its script, so a failure could be recorded as success.
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const defaultMigrationsDir = fileURLToPath(new URL('../../../prisma/migrations', import.meta.url));

/** The same key as Prisma's own migrate lock, so this runner and `prisma migrate deploy` exclude each other. */
const ADVISORY_LOCK_KEY = 72707369;

/** One connection; `exec` runs a multi-statement script, `query` one parameterised statement. */
export interface MigrationConnection {
  readonly kind: 'pglite' | 'postgres';
  exec(sql: string): Promise<void>;
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
}

export interface MigrationFile {
  name: string;
  sql: string;
  /** Hex sha256 of migration.sql, as Prisma records it. */
  checksum: string;
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: string[];
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | string | null;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export async function readMigrations(dir: string = defaultMigrationsDir): Promise<MigrationFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const files: MigrationFile[] = [];
  for (const name of names) {
    const sql = await readFile(join(dir, name, 'migration.sql'), 'utf8');
    files.push({ name, sql, checksum: sha256(sql) });
  }
  return files;
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

/**
 * Applies the pending migrations in name order, each in its own transaction together with its
 * `_prisma_migrations` row, so a failed migration leaves neither schema changes nor a record.
 * Refuses to run when an applied migration's file changed or a migration is marked failed.
 * Migration files must therefore not contain their own BEGIN/COMMIT nor statements that cannot
 * run in a transaction (CREATE INDEX CONCURRENTLY).
 */
export async function migrate(
  conn: MigrationConnection,
  options: { migrationsDir?: string; onLog?: (msg: string) => void } = {},
): Promise<MigrateResult> {
  const log = options.onLog ?? (() => {});
  const files = await readMigrations(options.migrationsDir);
  if (conn.kind === 'postgres') await conn.query('SELECT pg_advisory_lock($1)', [ADVISORY_LOCK_KEY]);
  try {
    await conn.exec(CREATE_TABLE);
    const rows = await conn.query<AppliedRow>(
      `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations"
       WHERE rolled_back_at IS NULL ORDER BY started_at`,
    );
    const applied = new Map<string, AppliedRow>();
    for (const row of rows) {
      if (row.finished_at === null) {
        throw new MigrationError(
          `Migration ${row.migration_name} is recorded as started but not finished (a failed ` +
            `\`prisma migrate deploy\`?). Fix the database, then mark it with ` +
            `\`prisma migrate resolve --rolled-back ${row.migration_name}\` or \`--applied\`.`,
        );
      }
      applied.set(row.migration_name, row);
    }

    const known = new Set(files.map((f) => f.name));
    for (const name of applied.keys()) {
      if (!known.has(name))
        log(
          `migration ${name} is applied in the database but missing from ${options.migrationsDir ?? defaultMigrationsDir}`,
        );
    }

    const result: MigrateResult = { applied: [], alreadyApplied: [] };
    for (const file of files) {
      const row = applied.get(file.name);
      if (row) {
        // Accept a CRLF checkout of the same file.
        if (row.checksum !== file.checksum && row.checksum !== sha256(file.sql.replace(/\r\n/g, '\n'))) {
          throw new MigrationError(
            `Migration ${file.name} was modified after it was applied (checksum ${row.checksum} in ` +
              `the database, ${file.checksum} on disk). Applied migrations must not change: restore ` +
              `the file and put the change in a new migration.`,
          );
        }
        result.alreadyApplied.push(file.name);
        continue;
      }
      const started = Date.now();
      await conn.exec('BEGIN');
      try {
        await conn.exec(file.sql);
        await conn.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
           VALUES ($1, $2, now(), $3, $4, 1)`,
          [randomUUID(), file.checksum, file.name, new Date(started)],
        );
        await conn.exec('COMMIT');
      } catch (error) {
        await conn.exec('ROLLBACK').catch(() => {});
        throw new MigrationError(
          `Migration ${file.name} failed and was rolled back: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
      log(`applied migration ${file.name} in ${Date.now() - started} ms`);
      result.applied.push(file.name);
    }
    return result;
  } finally {
    // A broken connection releases the lock by itself; keep the original error.
    if (conn.kind === 'postgres')
      await conn.query('SELECT pg_advisory_unlock($1)', [ADVISORY_LOCK_KEY]).catch(() => {});
  }
}
