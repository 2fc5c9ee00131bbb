// The migrations must build exactly the database schema.prisma describes: the generated client
// trusts schema.prisma, the database only ever sees the migrations. Editing schema.prisma without
// adding a migration (`pnpm --filter @portico/cloud exec tsx prisma/tools/create-migration.ts <name>`)
// fails here.
import { readFile, writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { diff } from '../../prisma/tools/schema-engine.js';
import { migrate } from '../../src/infra/db/migrate.js';
import { testBackend } from '../support/database.js';
import { openEmptyDatabase, readCatalog, type RawDatabase } from './helpers.js';

const schemaPath = fileURLToPath(new URL('../../prisma/schema.prisma', import.meta.url));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function database(): Promise<RawDatabase> {
  const db = await openEmptyDatabase();
  cleanups.push(db.close);
  return db;
}

/** A copy of schema.prisma with one more column, as a forgetful colleague would leave it. */
async function editedSchema(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'portico-schema-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const text = await readFile(schemaPath, 'utf8');
  const edited = text.replace(/(model Person \{\n)/, '$1  nickname String?\n');
  expect(edited).not.toBe(text);
  const path = join(dir, 'schema.prisma');
  await writeFile(path, edited);
  return path;
}

/** A database built from a schema file's own from-empty SQL, bypassing the migrations. */
async function databaseFromSchema(path: string): Promise<RawDatabase> {
  const db = await database();
  const { sql } = await diff({
    from: { kind: 'empty' },
    to: { kind: 'schema', path },
    schemaPath: path,
    adapter: db.adapter,
  });
  await db.conn.exec(sql);
  return db;
}

// A new PGlite runs initdb in WASM: seconds when idle, much longer on a busy CI runner.
describe(`migrations vs schema.prisma (${testBackend})`, { timeout: 180_000 }, () => {
  it('the migrated catalog equals the catalog schema.prisma produces', async () => {
    const migrated = await database();
    await migrate(migrated.conn);
    const expected = await databaseFromSchema(schemaPath);

    const actual = await readCatalog(migrated.conn);
    expect(actual.columns.length).toBeGreaterThan(100);
    expect(actual).toEqual(await readCatalog(expected.conn));

    // The comparison notices a schema change that has no migration.
    const drifted = await databaseFromSchema(await editedSchema());
    expect(await readCatalog(drifted.conn)).not.toEqual(actual);
  });

  // Prisma's own differ reading the live database; adapter-pg cannot carry its catalog queries
  // (it rejects the "char" column type), so this runs on PGlite only.
  it.skipIf(testBackend !== 'pglite')("Prisma's schema differ finds nothing to migrate", async () => {
    const migrated = await database();
    await migrate(migrated.conn);

    const result = await diff({
      from: { kind: 'database' },
      to: { kind: 'schema', path: schemaPath },
      schemaPath,
      adapter: migrated.adapter,
    });
    expect(result.sql).toContain('empty migration');
    expect(result.empty).toBe(true);

    const edited = await editedSchema();
    const drift = await diff({
      from: { kind: 'database' },
      to: { kind: 'schema', path: edited },
      schemaPath: edited,
      adapter: migrated.adapter,
    });
    expect(drift.empty).toBe(false);
    expect(drift.sql).toMatch(/ADD COLUMN\s+"nickname" TEXT/);
  });
});
