// Rows written as raw SQL so that several of them go to the database as one statement: a check-in
// with its frame, audit row and outbox event is one round trip, atomic without a transaction (on
// PGlite each statement costs ~1.5 ms of the event loop, BEGIN and COMMIT included).
import { Prisma } from '../../generated/prisma/client.js';

/** A column value: a parameter, or a SQL fragment (e.g. from `jsonb`). */
export type ColumnValue = string | number | boolean | Date | null | Prisma.Sql;

/** `INSERT INTO table (columns) VALUES (...)`. Table and column names are the caller's constants. */
export function insertRow(table: string, row: Record<string, ColumnValue>): Prisma.Sql {
  const columns = Object.keys(row);
  return Prisma.sql`INSERT INTO ${Prisma.raw(table)} (${Prisma.raw(columns.join(', '))})
    VALUES (${Prisma.join(columns.map((column) => row[column]))})`;
}

/** A JSON value for a jsonb column. */
export const jsonb = (value: unknown): Prisma.Sql => Prisma.sql`${JSON.stringify(value)}::jsonb`;

/**
 * Several inserts as one statement (data-modifying CTEs run once each, to completion, whatever the
 * outer query reads; foreign keys are checked at the end of the statement, so a row may reference one
 * inserted beside it). Run it with `$executeRaw`; with `outer` (a query whose rows come back: it reads
 * the tables as they were before the inserts), with `$queryRaw`.
 */
export function oneStatement(inserts: Prisma.Sql[], outer?: Prisma.Sql): Prisma.Sql {
  if (inserts.length === 0) throw new Error('oneStatement: nothing to insert');
  const last = outer ?? inserts.at(-1)!;
  const ctes = (outer ? inserts : inserts.slice(0, -1)).map(
    (insert, i) => Prisma.sql`${Prisma.raw(`w${i}`)} AS (${insert})`,
  );
  return ctes.length === 0 ? last : Prisma.sql`WITH ${Prisma.join(ctes)} ${last}`;
}
