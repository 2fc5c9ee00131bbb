// The PGlite client with prepared statements answers as `pglite.query` does: the same rows and types,
// the same errors, the same locking against an open transaction; statements beyond its limit are
// closed. Runs on PGlite whatever TEST_DATABASE_URL says (it is PGlite's client).
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { withPreparedStatements } from '../../src/infra/db/pglite-statements.js';

// One PGlite for the file (its start is most of the time), emptied before each test.
const shared = new PGlite();
afterAll(() => shared.close());

async function database(): Promise<PGlite> {
  await shared.exec(`DEALLOCATE ALL; DROP TABLE IF EXISTS t;
    CREATE TABLE t (id text PRIMARY KEY, n int, at timestamptz, data bytea, doc jsonb, note text)`);
  return shared;
}

const prepared = async (pg: PGlite) =>
  (await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements`)).rows[0]!.n;

describe('PGlite with prepared statements', () => {
  it('returns what pglite.query returns, rows as arrays or objects, every time a text is reused', async () => {
    const pg = await database();
    const client = withPreparedStatements(pg);
    const insert = `INSERT INTO t (id, n, at, data, doc, note) VALUES ($1, $2, $3, $4, $5, $6)`;
    const row = (i: number) => [
      `r${i}`,
      i,
      new Date(Date.UTC(2026, 10, 27, 6, i)),
      new Uint8Array([i, 255 - i, 0]),
      JSON.stringify({ i, tags: ['a', 'b'] }),
      i % 2 ? null : `note ${i}`,
    ];
    for (let i = 0; i < 8; i++) await client.query(insert, row(i));
    const select = `SELECT id, n, at, data, doc, note FROM t WHERE n >= $1 ORDER BY n`;
    for (const options of [undefined, { rowMode: 'array' as const }]) {
      // Past five executions PostgreSQL may switch to a generic plan: the answers must not change.
      for (let round = 0; round < 7; round++) {
        const ours = await client.query(select, [round % 4], options);
        const theirs = await pg.query(select, [round % 4], options);
        expect(ours.rows).toEqual(theirs.rows);
        expect(ours.fields).toEqual(theirs.fields);
        expect(ours.rows).toHaveLength(8 - (round % 4));
      }
    }
    const updated = await client.query(`UPDATE t SET note = $1 WHERE n < $2`, ['x', 3]);
    expect(updated.affectedRows).toBe(3);
    expect(await prepared(pg)).toBe(3);
  });

  it('fails as pglite.query fails, and the statement and the connection stay usable', async () => {
    const pg = await database();
    const client = withPreparedStatements(pg);
    const insert = `INSERT INTO t (id, n) VALUES ($1, $2)`;
    await client.query(insert, ['a', 1]);
    const duplicate = await client.query(insert, ['a', 2]).catch((e: unknown) => e);
    const theirs = await pg.query(insert, ['a', 2]).catch((e: unknown) => e);
    expect(duplicate).toBeInstanceOf(Error);
    expect((duplicate as { code?: string }).code).toBe('23505');
    expect((duplicate as { constraint?: string }).constraint).toBe(
      (theirs as { constraint?: string }).constraint,
    );
    const syntax = await client.query(`SELEC nothing`).catch((e: unknown) => e);
    expect((syntax as { code?: string }).code).toBe('42601');
    await client.query(insert, ['b', 2]);
    expect((await client.query(`SELECT id FROM t ORDER BY id`)).rows).toEqual([{ id: 'a' }, { id: 'b' }]);
  });

  it('closes the least recently used statement beyond its limit', async () => {
    const pg = await database();
    const client = withPreparedStatements(pg, 2);
    const texts = [1, 2, 3].map((k) => `SELECT $1::int + ${k} AS v`);
    for (const text of texts) await client.query(text, [1]);
    expect(await prepared(pg)).toBe(2);
    // The first was closed: asked again, it is prepared again (and the second closed).
    expect((await client.query(texts[0]!, [1])).rows).toEqual([{ v: 2 }]);
    expect((await client.query(texts[2]!, [1])).rows).toEqual([{ v: 4 }]);
    expect(await prepared(pg)).toBe(2);
  });

  it('runs a statement of its own only when an open transaction has ended, never inside it', async () => {
    const pg = await database();
    const client = withPreparedStatements(pg);
    let outside: Promise<unknown> | undefined;
    await client
      .transaction(async (tx) => {
        await tx.query(`INSERT INTO t (id, n) VALUES ($1, $2)`, ['in-tx', 1]);
        outside = client.query(`INSERT INTO t (id, n) VALUES ($1, $2)`, ['outside', 2]);
        await new Promise((resolve) => setTimeout(resolve, 50));
        await tx.query(`SELECT 1`);
        throw new Error('roll back');
      })
      .catch(() => {});
    await outside;
    // The transaction's insert rolled back; the statement issued meanwhile ran after it, on its own.
    expect((await client.query(`SELECT id FROM t ORDER BY id`)).rows).toEqual([{ id: 'outside' }]);
  });
});
