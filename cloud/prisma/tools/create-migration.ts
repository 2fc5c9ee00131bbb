// Writes the next migration: the SQL that takes a database built from the existing migrations to
// what schema.prisma describes (what `prisma migrate dev --create-only` does, without the native
// engine). Usage: pnpm --filter @portico/cloud exec tsx prisma/tools/create-migration.ts <name>
// Review the SQL before committing it: renames come out as drop + add.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { pgliteConnection } from '../../src/infra/db/index.js';
import { defaultMigrationsDir, migrate } from '../../src/infra/db/migrate.js';
import { diff } from './schema-engine.js';

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: create-migration.ts <name>   (lower-case letters, digits, underscores)');
  process.exit(2);
}

const schemaPath = fileURLToPath(new URL('../schema.prisma', import.meta.url));
const db = new PGlite();
try {
  await db.waitReady;
  await migrate(pgliteConnection(db));
  const result = await diff({
    from: { kind: 'database' },
    to: { kind: 'schema', path: schemaPath },
    schemaPath,
    adapter: new PrismaPGlite(db),
  });
  if (result.empty) {
    console.log('schema.prisma and the migrations agree: nothing to write.');
  } else {
    const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
    const dir = join(defaultMigrationsDir, `${stamp}_${name}`);
    await mkdir(dir);
    await writeFile(join(dir, 'migration.sql'), result.sql);
    console.log(`wrote ${join(dir, 'migration.sql')}`);
  }
} finally {
  await db.close();
}
