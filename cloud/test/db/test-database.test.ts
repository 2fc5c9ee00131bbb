// The tests' databases (test/support/database.ts): on PGlite a database a test closed is emptied and
// handed to the next test of the worker. Whatever a test leaves, the next one starts as on a database
// just migrated, and the closed one's handle refuses work. On PostgreSQL every database is new: the
// same assertions hold there too.
import { afterEach, describe, expect, it } from 'vitest';
import { Prisma } from '../../src/generated/prisma/client.js';
import { newId, type Database } from '../../src/infra/db/index.js';
import { createTestDatabase, testBackend } from '../support/database.js';

const open: Database[] = [];
async function database() {
  const db = await createTestDatabase();
  open.push(db);
  return db;
}
async function close(db: Database) {
  open.splice(open.indexOf(db), 1);
  await db.close();
}
afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
});

/** What a test leaves behind: rows, a sequence moved on, statements prepared, a session setting. */
async function leaveTraces(db: Database) {
  const id = newId();
  await db.prisma.tenant.create({
    data: { id, slug: `t-${id}`, name: 'Left behind', webhookSecretEnc: Buffer.from([1]) },
  });
  await db.sql.query(Prisma.sql`SELECT id, created_at FROM tenants WHERE id = ${id}`);
  await db.prisma.$executeRawUnsafe(`SELECT nextval('guests_change_seq_seq')`);
  await db.prisma.$executeRawUnsafe(`SET TIME ZONE 'Asia/Tokyo'`);
}

describe(`the tests' databases on ${testBackend}`, () => {
  it('start empty and migrated after another test closed its own, with no statement, setting or sequence of it', async () => {
    const first = await database();
    await leaveTraces(first);
    await close(first);

    const next = await database();
    expect(await next.prisma.tenant.count()).toBe(0);
    const migrations = await next.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM _prisma_migrations`;
    expect(migrations[0]!.n).toBeGreaterThan(0);
    // The first one's prepared statement is gone (the name would be taken); rows parse as on a new one.
    const id = newId();
    await next.prisma.tenant.create({
      data: { id, slug: `t-${id}`, name: 'Fresh', webhookSecretEnc: Buffer.from([1]) },
    });
    const [row] = await next.sql.query<{ id: string; created_at: Date }>(
      Prisma.sql`SELECT id, created_at FROM tenants WHERE id = ${id}`,
    );
    expect(row!.created_at).toBeInstanceOf(Date);
    const kinds = Prisma.sql`SELECT '2026-11-28 04:00Z'::timestamptz AS at, '{"a":1}'::jsonb AS doc, 5::int8 AS big,
      1.5::float8 AS half, ARRAY['a', 'b'] AS list, true AS yes, 'v'::varchar AS short`;
    expect(await next.sql.query(kinds)).toEqual(await next.prisma.$queryRaw(kinds));
    expect(
      await next.prisma.$queryRaw<{ n: bigint }[]>`SELECT nextval('guests_change_seq_seq') AS n`,
    ).toEqual([{ n: 1n }]);
    expect(await next.prisma.$queryRaw<{ TimeZone: string }[]>`SHOW TIME ZONE`).toEqual([
      { TimeZone: expect.not.stringMatching(/Tokyo/) },
    ]);
  });

  it('refuses statements through a closed handle, and what it would have written reaches no other test', async () => {
    const first = await database();
    await close(first);
    const next = await database();
    const id = newId();
    await expect(
      first.prisma.tenant.create({
        data: { id, slug: `t-${id}`, name: 'Late', webhookSecretEnc: Buffer.from([1]) },
      }),
    ).rejects.toThrow();
    await expect(first.sql.query(Prisma.sql`SELECT 1`)).rejects.toThrow();
    expect(await next.prisma.tenant.count()).toBe(0);
  });

  it('does not hand out a database whose schema a test changed', async () => {
    const first = await database();
    await first.prisma.$executeRawUnsafe('ALTER TABLE tenants ADD COLUMN left_behind int');
    await first.prisma.$executeRawUnsafe('CREATE TABLE scratch (id int)');
    await close(first);
    const next = await database();
    const columns = await next.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM information_schema.columns
       WHERE table_name = 'tenants' AND column_name = 'left_behind'`;
    expect(columns[0]!.n).toBe(0);
    const tables = await next.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'scratch'`;
    expect(tables[0]!.n).toBe(0);
  });
});
