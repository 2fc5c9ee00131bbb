// `db.sql` (src/infra/db/direct.ts): hot statements sent straight to the driver answer as Prisma's
// `$queryRaw` answers the same statement, in and out of transactions, on PGlite and on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prisma } from '../../src/generated/prisma/client.js';
import { isUniqueViolation, newId, violatedForeignKey, type Database } from '../../src/infra/db/index.js';
import { createTestDatabase, testBackend } from '../support/database.js';

let db: Database;
beforeAll(async () => {
  db = await createTestDatabase();
}, 180_000);
afterAll(() => db?.close());

async function tenant(name = 'Acme') {
  const id = newId();
  await db.prisma.tenant.create({
    data: { id, slug: `t-${id}`, name, webhookSecretEnc: Buffer.from([1, 2, 3]), settings: { a: [1, 'b'] } },
  });
  return id;
}

/** Every column kind direct.ts types, from parameters of every kind. */
const everyKind = (id: string, at: Date) => Prisma.sql`
  SELECT id, name, settings, created_at, status = 'active' AS active,
         ${at}::timestamptz AS at, ${[id, 'x', 'a "quoted", \\ value']}::text[] AS list,
         ${null}::text AS nothing, ${1.5}::float8 AS half, ${true} AS yes, ${41}::int + 1 AS answer,
         ${2}::int2 AS small, ${9007199254740993n}::int8 AS big, ${'{"k":[1,null,"v"]}'}::jsonb AS doc, 'v'::varchar AS short,
         length(${Buffer.from([0, 0x5c, 0x78, 255])}::bytea) AS bytes
    FROM tenants WHERE id = ${id}`;

describe(`db.sql on ${testBackend}`, () => {
  it('answers as $queryRaw: every column kind it types, parameters of every kind, no row', async () => {
    const id = await tenant();
    const at = new Date('2026-11-27T15:04:05.678Z');
    const byPrisma = await db.prisma.$queryRaw<Record<string, unknown>[]>(everyKind(id, at));
    expect(byPrisma).toHaveLength(1);
    for (let i = 0; i < 7; i++) expect(await db.sql.query(everyKind(id, at))).toEqual(byPrisma);
    const [row] = await db.sql.query<Record<string, unknown>>(everyKind(id, at));
    expect(row).toMatchObject({
      at,
      list: [id, 'x', 'a "quoted", \\ value'],
      nothing: null,
      answer: 42,
      big: 9007199254740993n,
      doc: { k: [1, null, 'v'] },
      bytes: 4,
      settings: { a: [1, 'b'] },
    });
    expect(row!.created_at).toBeInstanceOf(Date);
    expect(await db.sql.query(everyKind(newId(), at))).toEqual([]);
    expect(await db.sql.transaction((tx) => tx.query(everyKind(id, at)))).toEqual(byPrisma);
  });

  it('commits a transaction when it returns and rolls it back when it throws, a failed statement included', async () => {
    const id = await tenant('Before');
    const nameOf = async () =>
      (await db.sql.query<{ name: string }>(Prisma.sql`SELECT name FROM tenants WHERE id = ${id}`))[0]!.name;
    const rename = (name: string) => Prisma.sql`UPDATE tenants SET name = ${name} WHERE id = ${id}`;
    expect(
      await db.sql.transaction(async (tx) => {
        await tx.query(Prisma.sql`SELECT id FROM tenants WHERE id = ${id} FOR UPDATE`);
        return tx.execute(rename('Committed'));
      }),
    ).toBe(1);
    expect(await nameOf()).toBe('Committed');
    await expect(
      db.sql.transaction(async (tx) => {
        await tx.execute(rename('Inside'));
        expect(
          (await tx.query<{ name: string }>(Prisma.sql`SELECT name FROM tenants WHERE id = ${id}`))[0]!.name,
        ).toBe('Inside');
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await nameOf()).toBe('Committed');
    await expect(
      db.sql.transaction(async (tx) => {
        await tx.execute(rename('Half'));
        await tx.query(Prisma.sql`SELECT 1 / ${0}::int AS x`);
      }),
    ).rejects.toMatchObject({ code: '22012' });
    expect(await nameOf()).toBe('Committed');
    // The connection is whole again: the next transaction and statement run.
    expect(await db.sql.transaction((tx) => tx.execute(rename('After')))).toBe(1);
    expect(await nameOf()).toBe('After');
  });

  it('writes bytes as they are and counts the rows it changed', async () => {
    const id = await tenant('Before');
    const bytes = new Uint8Array([0, 1, 2, 0x5c, 0x78, 255, 0, 7]);
    expect(
      await db.sql.execute(Prisma.sql`UPDATE tenants SET name = ${'After'}, webhook_secret_enc = ${bytes}
                                       WHERE id = ANY(${[id, newId()]}::text[])`),
    ).toBe(1);
    expect(await db.sql.execute(Prisma.sql`UPDATE tenants SET name = 'x' WHERE id = ${newId()}`)).toBe(0);
    const stored = await db.prisma.tenant.findUniqueOrThrow({ where: { id } });
    expect(stored.name).toBe('After');
    expect([...stored.webhookSecretEnc]).toEqual([...bytes]);
  });

  it('fails with the driver error, read by the same helpers as Prisma errors, and the next statement runs', async () => {
    const id = await tenant();
    const divide = (by: number) =>
      db.sql.query(Prisma.sql`SELECT 1 / ${by}::int AS x FROM tenants WHERE id = ${id}`);
    await expect(divide(0)).rejects.toMatchObject({ code: '22012' });
    expect(await divide(1)).toEqual([{ x: 1 }]);
    const duplicate = await db.sql
      .execute(
        Prisma.sql`INSERT INTO tenants (id, slug, name, webhook_secret_enc, updated_at)
                          VALUES (${id}, ${`t-${newId()}`}, 'Again', ${Buffer.from([1])}, now())`,
      )
      .catch((error: unknown) => error);
    expect(isUniqueViolation(duplicate)).toBe(true);
    const orphan = await db.sql
      .execute(
        Prisma.sql`INSERT INTO applications (id, tenant_id, name, environment)
                          VALUES (${newId()}, ${newId()}, 'Orphan', 'live')`,
      )
      .catch((error: unknown) => error);
    expect(violatedForeignKey(orphan)).toBe('applications_tenant_id_fkey');
    await expect(db.sql.query(Prisma.sql`SELEC ${1}::int`)).rejects.toMatchObject({ code: '42601' });
    expect(await divide(1)).toEqual([{ x: 1 }]);
  });

  it('refuses a column it does not type as Prisma does, naming it', async () => {
    await expect(db.sql.query(Prisma.sql`SELECT 1.5::numeric AS money`)).rejects.toThrow(
      /column "money" has type 1700/,
    );
    await expect(db.sql.query(Prisma.sql`SELECT '\\x00'::bytea AS raw`)).rejects.toThrow(/"raw"/);
  });

  it('never reads what an open transaction has not committed', async () => {
    const id = await tenant('Committed');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const transaction = db.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`UPDATE tenants SET name = 'Uncommitted' WHERE id = ${id}`;
      inside();
      await held;
      await tx.$executeRaw`UPDATE tenants SET name = 'Later' WHERE id = ${id}`;
    });
    await entered;
    const read = db.sql.query<{ name: string }>(Prisma.sql`SELECT name FROM tenants WHERE id = ${id}`);
    if (testBackend === 'pglite') {
      // One connection: the statement waits for the transaction to end, then reads what it committed.
      const first = await Promise.race([read, new Promise((r) => setTimeout(() => r('waiting'), 300))]);
      expect(first).toBe('waiting');
      release();
      await transaction;
      expect(await read).toEqual([{ name: 'Later' }]);
    } else {
      // Another connection: it answers while the transaction is still open, with the committed name.
      expect(await read).toEqual([{ name: 'Committed' }]);
      release();
      await transaction;
    }
  });

  it.runIf(testBackend === 'pglite')('prepares each statement once (PGlite)', async () => {
    const id = await tenant();
    for (let i = 0; i < 12; i++) {
      await db.sql.query(Prisma.sql`SELECT name FROM tenants WHERE id = ${id} AND status = ${'direct'}`);
    }
    const statements = await db.prisma.$queryRaw<{ statement: string; generic_plans: bigint }[]>`
      SELECT statement, generic_plans FROM pg_prepared_statements WHERE statement LIKE '%status = $2'`;
    expect(statements).toHaveLength(1);
    expect(Number(statements[0]!.generic_plans)).toBe(12 - 5);
  });
});
