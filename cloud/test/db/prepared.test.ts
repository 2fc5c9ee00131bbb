// Statements marked PREPARED (src/infra/db/pglite-prepared.ts): on PGlite they are parsed once and
// then run by name; on PostgreSQL the mark is a comment. Either way they answer as unmarked ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prisma } from '../../src/generated/prisma/client.js';
import { newId, PREPARED, type Database } from '../../src/infra/db/index.js';
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

const read = (id: string, marked: boolean) =>
  db.prisma.$queryRaw<Record<string, unknown>[]>`${marked ? PREPARED : Prisma.empty}
    SELECT id, name, settings, webhook_secret_enc, created_at, ${7}::bigint AS big, ${[id, 'x']}::text[] AS list,
           ${null}::text AS nothing, ${1.5}::float8 AS half, ${true} AS yes
      FROM tenants WHERE id = ${id}`;

describe(`statements marked PREPARED on ${testBackend}`, () => {
  it('answer as the same statement unmarked: every column kind, parameters of every kind, no row', async () => {
    const id = await tenant();
    const plain = await read(id, false);
    for (let i = 0; i < 8; i++) expect(await read(id, true)).toEqual(plain);
    expect(plain).toHaveLength(1);
    expect(plain[0]!.settings).toEqual({ a: [1, 'b'] });
    expect(await read(newId(), true)).toEqual([]);
  });

  it('write, count affected rows and roll back inside a transaction', async () => {
    const id = await tenant('Before');
    const rename = (name: string) =>
      db.prisma.$executeRaw`${PREPARED}UPDATE tenants SET name = ${name} WHERE id = ${id}`;
    expect(await rename('After')).toBe(1);
    const bytes = Buffer.from([0, 1, 2, 0x5c, 0x78, 255, 0, 7]);
    await db.prisma.$executeRaw`${PREPARED}UPDATE tenants SET webhook_secret_enc = ${bytes} WHERE id = ${id}`;
    const stored = await db.prisma.tenant.findUniqueOrThrow({ where: { id } });
    expect(Buffer.from(stored.webhookSecretEnc).equals(bytes)).toBe(true);
    await expect(
      db.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`${PREPARED}UPDATE tenants SET name = ${'Inside'} WHERE id = ${id}`;
        const [row] = await tx.$queryRaw<
          { name: string }[]
        >`${PREPARED}SELECT name FROM tenants WHERE id = ${id}`;
        expect(row!.name).toBe('Inside');
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    const [row] = await db.prisma.$queryRaw<
      { name: string }[]
    >`${PREPARED}SELECT name FROM tenants WHERE id = ${id}`;
    expect(row!.name).toBe('After');
  });

  it('fail with the database error, and the next statement runs', async () => {
    const id = await tenant();
    const divide = (by: number) =>
      db.prisma.$queryRaw`${PREPARED}SELECT 1 / ${by}::int AS x FROM tenants WHERE id = ${id}`;
    await expect(divide(0)).rejects.toThrow(/22012/);
    await expect(divide(0)).rejects.toThrow(/22012/);
    expect(await divide(1)).toEqual([{ x: 1 }]);
    const duplicate = () =>
      db.prisma.$executeRaw`${PREPARED}INSERT INTO tenants (id, slug, name, webhook_secret_enc, updated_at)
        VALUES (${id}, ${`t-${newId()}`}, 'Again', ${Buffer.from([1])}, now())`;
    await expect(duplicate()).rejects.toThrow(/23505/);
    expect(await divide(1)).toEqual([{ x: 1 }]);
    await expect(db.prisma.$queryRaw`${PREPARED}SELEC ${1}::int`).rejects.toThrow(/42601/);
    expect(await divide(1)).toEqual([{ x: 1 }]);
  });

  it.runIf(testBackend === 'pglite')('are prepared once and planned once (PGlite)', async () => {
    const id = await tenant();
    for (let i = 0; i < 12; i++) {
      await db.prisma
        .$queryRaw`${PREPARED}SELECT name FROM tenants WHERE id = ${id} AND status = ${'active'}`;
      await db.prisma.$queryRaw`SELECT name FROM tenants WHERE id = ${id} AND status = ${'unmarked'}`;
    }
    const statements = await db.prisma.$queryRaw<
      { statement: string; generic_plans: bigint; custom_plans: bigint }[]
    >`
      SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements`;
    const mine = statements.filter((s) => s.statement.includes('status = $2'));
    expect(mine).toHaveLength(1);
    expect(mine[0]!.statement.startsWith('/* prepared */')).toBe(true);
    // PostgreSQL plans the first five executions with their values, then keeps a generic plan.
    expect(Number(mine[0]!.generic_plans)).toBe(12 - 5);
    // Only marked statements are kept prepared (the unmarked one above ran twelve times too).
    expect(statements.every((s) => s.statement.startsWith('/* prepared */'))).toBe(true);
  });
});
