// The statements a check-in runs every time, sent straight to the driver instead of through Prisma's
// client (issue 28). Prisma's `$queryRaw` costs about 0.13 ms of the event loop per statement on a
// quiet machine (a one-row read: 223 µs through it, 98 µs straight to the PGlite wrapper) and twice
// that under load, its interactive transaction more; a check-in by face runs nine such statements,
// thirteen at an event.
// - Every statement is prepared (see pglite-prepared.ts for why that needs plain parameter values):
//   on PGlite by name once per database, on PostgreSQL by name once per pooled connection.
// - Rows come typed as `$queryRaw` types them, for the column kinds listed in COLUMN_TYPES; a column of
//   another kind is an error (add it there, with its case in test/db/direct.test.ts).
// - Errors are the driver's (`code` is the SQLSTATE); `violatedForeignKey` and `isUniqueViolation`
//   read both kinds.
// - `transaction` runs several atomically (a check-in at an event: the event's lock, its rules, the
//   check-in), also without Prisma.
import type pg from 'pg';
import type { Prisma } from '../../generated/prisma/client.js';
import type { Tx } from './index.js';
import type { PreparedPGlite, PreparedRun } from './pglite-prepared.js';

export interface DirectSql {
  /** The statement's rows. */
  query<T>(statement: Prisma.Sql): Promise<T[]>;
  /** The number of rows the statement changed. */
  execute(statement: Prisma.Sql): Promise<number>;
  /**
   * `fn`'s statements in one transaction: committed when it returns, rolled back when it throws. On
   * PGlite (one connection) nothing else runs meanwhile: inside, use only the statements given to `fn`.
   */
  transaction<T>(fn: (sql: Statements) => Promise<T>): Promise<T>;
}

/** What runs inside a transaction. */
export type Statements = Omit<DirectSql, 'transaction'>;

/** Column types (PostgreSQL type oids) whose values both drivers parse as `$queryRaw` does. */
const COLUMN_TYPES = new Map<number, string>([
  [16, 'bool'],
  [20, 'int8'],
  [21, 'int2'],
  [23, 'int4'],
  [25, 'text'],
  [701, 'float8'],
  [1009, 'text[]'],
  [1043, 'varchar'],
  [1184, 'timestamptz'],
  [3802, 'jsonb'],
]);

function checkColumns(fields: readonly { name: string; dataTypeID: number }[], sql: string): void {
  for (const field of fields) {
    if (!COLUMN_TYPES.has(field.dataTypeID)) {
      throw new Error(
        `direct SQL: column "${field.name}" has type ${field.dataTypeID}, which direct.ts does not type as Prisma does: ${sql.slice(0, 80)}`,
      );
    }
  }
}

function pgliteStatements(runner: PreparedRun): Statements {
  async function run<T>(statement: Prisma.Sql) {
    const results = await runner<T>(statement.text, statement.values);
    checkColumns(results.fields, statement.text);
    return results;
  }
  return {
    query: async <T>(statement: Prisma.Sql) => (await run<T>(statement)).rows,
    execute: async (statement) => (await run(statement)).affectedRows ?? 0,
  };
}

export function directOnPGlite(prepared: PreparedPGlite): DirectSql {
  return {
    ...pgliteStatements(prepared.run),
    transaction: (fn) => prepared.transaction((run) => fn(pgliteStatements(run))),
  };
}

/** Distinct texts given a name per connection; past it, statements go unnamed. */
const MAX_NAMED = 256;

/** int8 as bigint, as Prisma gives it (pg gives a string). */
const withBigInt = (types: typeof pg.types): pg.CustomTypesConfig => ({
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? BigInt : types.getTypeParser(oid, format)) as typeof types.getTypeParser,
});

/** `types`: pg's, loaded by the caller (pg is imported only when PostgreSQL is used). */
export function directOnPool(pool: pg.Pool, types: typeof pg.types): DirectSql {
  const parsers = withBigInt(types);
  const names = new Map<string, string>();
  function nameOf(text: string): string | undefined {
    let name = names.get(text);
    if (!name && names.size < MAX_NAMED) names.set(text, (name = `portico_${names.size}`));
    return name;
  }
  const statements = (client: pg.Pool | pg.PoolClient): Statements => {
    async function run<T extends pg.QueryResultRow>(statement: Prisma.Sql) {
      const name = nameOf(statement.text);
      const result = await client.query<T>({
        text: statement.text,
        // Bytes as a Buffer: pg sends other objects as JSON.
        values: statement.values.map((value) =>
          value instanceof Uint8Array && !Buffer.isBuffer(value)
            ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
            : value,
        ),
        types: parsers,
        ...(name && { name }),
      });
      checkColumns(result.fields, statement.text);
      return result;
    }
    return {
      query: async <T>(statement: Prisma.Sql) => (await run(statement)).rows as T[],
      execute: async (statement) => (await run(statement)).rowCount ?? 0,
    };
  };
  return {
    ...statements(pool),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
      } catch (error) {
        client.release(error as Error);
        throw error;
      }
      try {
        const result = await fn(statements(client));
        await client.query('COMMIT');
        client.release();
        return result;
      } catch (error) {
        // A connection that cannot roll back is closed, not handed to the next caller.
        await client.query('ROLLBACK').then(
          () => client.release(),
          (rollback: Error) => client.release(rollback),
        );
        throw error;
      }
    },
  };
}

/** A Prisma transaction with the same shape, for code shared with one (the sync batch's). */
export function viaPrisma(tx: Pick<Tx, '$queryRaw' | '$executeRaw'>): Statements {
  return {
    query: <T>(statement: Prisma.Sql) => tx.$queryRaw<T[]>(statement),
    execute: (statement) => tx.$executeRaw(statement),
  };
}
