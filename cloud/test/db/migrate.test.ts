import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/infra/db/index.js';
import { migrate, MigrationError, readMigrations } from '../../src/infra/db/migrate.js';
import { createScratchPostgresDatabase, testBackend } from '../support/database.js';
import { copyMigrations, openEmptyDatabase } from './helpers.js';

interface Row {
  id: string;
  migration_name: string;
  checksum: string;
  finished_at: unknown;
  rolled_back_at: unknown;
  logs: string | null;
  applied_steps_count: number;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function emptyDatabase() {
  const db = await openEmptyDatabase();
  cleanups.push(db.close);
  return db;
}

async function migrationsCopy() {
  const copy = await copyMigrations();
  cleanups.push(copy.remove);
  return copy.dir;
}

const recorded = (db: Awaited<ReturnType<typeof emptyDatabase>>) =>
  db.conn.query<Row>('SELECT * FROM "_prisma_migrations" ORDER BY migration_name');

// A new PGlite runs initdb in WASM: seconds when idle, much longer on a busy CI runner.
describe(`migration runner (${testBackend})`, { timeout: 180_000 }, () => {
  it('applies every migration to an empty database, then has nothing to do', async () => {
    const db = await emptyDatabase();
    const files = await readMigrations();
    expect(files.length).toBeGreaterThan(0);

    const first = await migrate(db.conn);
    expect(first.applied).toEqual(files.map((f) => f.name));

    const rows = await recorded(db);
    expect(rows.map((r) => [r.migration_name, r.checksum])).toEqual(files.map((f) => [f.name, f.checksum]));
    for (const row of rows) {
      // The shape `prisma migrate deploy` writes, so the CLI sees these as applied.
      expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.checksum).toMatch(/^[0-9a-f]{64}$/);
      expect(row.finished_at).not.toBeNull();
      expect(row.rolled_back_at).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }

    const second = await migrate(db.conn);
    expect(second).toEqual({ applied: [], alreadyApplied: files.map((f) => f.name) });
    expect(await recorded(db)).toEqual(rows);
  });

  it('refuses to run when an applied migration was edited', async () => {
    const db = await emptyDatabase();
    const dir = await migrationsCopy();
    await migrate(db.conn, { migrationsDir: dir });

    const [first] = await readMigrations(dir);
    await appendFile(join(dir, first!.name, 'migration.sql'), '\nCREATE TABLE sneaky (id int);\n');

    await expect(migrate(db.conn, { migrationsDir: dir })).rejects.toThrow(
      new RegExp(`Migration ${first!.name} was modified after it was applied`),
    );
    const tables = await db.conn.query(`SELECT 1 FROM pg_tables WHERE tablename = 'sneaky'`);
    expect(tables).toEqual([]);
  });

  it('rolls back a failing migration and does not record it', async () => {
    const db = await emptyDatabase();
    const dir = await migrationsCopy();
    // A $$ body (which a naive split on ';' breaks) in a migration that succeeds ...
    await mkdir(join(dir, '20990101000000_function'));
    await writeFile(
      join(dir, '20990101000000_function', 'migration.sql'),
      `CREATE FUNCTION portico_answer() RETURNS int LANGUAGE plpgsql AS $$
       BEGIN
         RETURN 42;
       END;
       $$;\n`,
    );
    // ... then one that fails half-way.
    await mkdir(join(dir, '20990102000000_broken'));
    await writeFile(
      join(dir, '20990102000000_broken', 'migration.sql'),
      'CREATE TABLE half_done (id int);\nINSERT INTO no_such_table VALUES (1);\n',
    );

    await expect(migrate(db.conn, { migrationsDir: dir })).rejects.toThrow(
      /Migration 20990102000000_broken failed and was rolled back/,
    );
    const names = (await recorded(db)).map((r) => r.migration_name);
    expect(names).not.toContain('20990102000000_broken');
    expect(names).toContain('20990101000000_function');
    expect(await db.conn.query(`SELECT portico_answer() AS answer`)).toEqual([{ answer: 42 }]);
    expect(await db.conn.query(`SELECT 1 FROM pg_tables WHERE tablename = 'half_done'`)).toEqual([]);

    // Fixing the file lets the next start apply it.
    await writeFile(
      join(dir, '20990102000000_broken', 'migration.sql'),
      'CREATE TABLE half_done (id int);\n',
    );
    expect((await migrate(db.conn, { migrationsDir: dir })).applied).toEqual(['20990102000000_broken']);
  });

  it('refuses to run over a migration that another tool left unfinished', async () => {
    const db = await emptyDatabase();
    await migrate(db.conn);
    await db.conn.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count)
       VALUES ('00000000-0000-4000-8000-000000000000', $1, '20990101000000_failed', now(), 0)`,
      ['0'.repeat(64)],
    );
    await expect(migrate(db.conn)).rejects.toBeInstanceOf(MigrationError);
    await expect(migrate(db.conn)).rejects.toThrow(
      /20990101000000_failed is recorded as started but not finished/,
    );
  });

  it.skipIf(testBackend !== 'postgres')('serialises concurrent starters on one database', async () => {
    const scratch = await createScratchPostgresDatabase();
    cleanups.push(scratch.drop);
    const starters = await Promise.all(
      [1, 2, 3].map(() => openDatabase({ databaseUrl: scratch.url, poolSize: 1 })),
    );
    for (const db of starters) cleanups.push(db.close);

    const rows = await starters[0]!.prisma.$queryRaw<{ migration_name: string }[]>`
      SELECT migration_name FROM "_prisma_migrations" ORDER BY migration_name`;
    expect(rows.map((r) => r.migration_name)).toEqual((await readMigrations()).map((f) => f.name));
  });
});
