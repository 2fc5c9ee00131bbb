// Less of PGlite's event-loop work per statement, for the Prisma adapter and for the statements run
// straight on the instance (direct.ts):
// - Named prepared statements for those a check-in runs every time. `PGlite.query` parses, analyses
//   and plans its text at every call: for the webhook claim about 1 ms of planning against 1 ms of
//   execution. A statement marked with `PREPARED` (or run through `run`) is parsed once per database,
//   then bound and executed by name, so PostgreSQL plans it once (a generic plan, once its cost proves
//   no worse than the custom ones). Only such statements: a generic plan does not see the parameters'
//   values, so an expression of them is no longer folded to a constant (a bulk statement with
//   `decode($1, 'base64')` would evaluate it once per row). Mark statements whose parameters are plain
//   values. On PostgreSQL the mark is a comment.
// - The adapter's result parsers made the instance's own. PGlite merges a call's `parsers` into its
//   defaults at every call (`{ ...defaults, ...parsers }`, 318 keys: 0.2 ms quiet, 0.4-0.8 ms under
//   load, more than many statements' execution); the adapter passes the same object every time, so it
//   is merged once. `run` parses with PGlite's own parsers, kept aside before that.
import {
  parse,
  protocol,
  type PGlite,
  type QueryOptions,
  type Results,
  type Transaction,
} from '@electric-sql/pglite';
import { Prisma } from '../../generated/prisma/client.js';

type BackendMessage = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];

const MARK = '/* prepared */';
const BYTEA = 17;

/** Put first in a statement's SQL: `$queryRaw\`${PREPARED}SELECT ...\``. */
export const PREPARED = Prisma.raw(`${MARK} `);

/** Distinct texts kept prepared; past it, marked statements run as unmarked ones (a bug to look at). */
const MAX_STATEMENTS = 256;

interface Statement {
  name: string;
  paramTypes: number[];
  /** Its result's columns (absent for a statement that returns no rows). */
  rowDescription?: BackendMessage;
}

export interface PreparedPGlite {
  /** The instance for the Prisma adapter: `query`, in and out of transactions, runs marked statements prepared. Everything else is the instance's own. */
  instance: PGlite;
  /**
   * Runs a statement prepared, outside any transaction, its rows parsed with PGlite's own parsers
   * (not the adapter's): timestamptz as Date, json parsed, int4 as number, arrays as arrays.
   */
  run<T>(sql: string, params: unknown[]): Promise<Results<T>>;
}

export function withPreparedStatements(pg: PGlite): PreparedPGlite {
  const statements = new Map<string, Statement>();
  const ownParsers = { ...pg.parsers };
  let adopted: QueryOptions['parsers'];
  /** The call's options without its parsers once they are the instance's (only ever one set). */
  function adopt(options: QueryOptions | undefined): QueryOptions | undefined {
    if (!options?.parsers) return options;
    if (adopted === undefined) {
      Object.assign(pg.parsers, options.parsers);
      adopted = options.parsers;
    }
    if (options.parsers !== adopted) return options;
    const { parsers: _merged, ...rest } = options;
    return rest;
  }

  /** Messages sent in one call, ending with Sync: a failure skips the rest and still gets its answer. */
  const send = (...messages: Uint8Array[]) =>
    pg.execProtocolStream(Buffer.concat([...messages, protocol.serialize.sync()]), { syncToFs: false });

  async function prepare(sql: string): Promise<Statement> {
    const name = `portico_${statements.size}`;
    const described = await send(
      protocol.serialize.parse({ name, text: sql }),
      protocol.serialize.describe({ type: 'S', name }),
    );
    const statement: Statement = {
      name,
      paramTypes: parse.parseDescribeStatementResults(described),
      rowDescription: described.find((message) => message.name === 'rowDescription'),
    };
    statements.set(sql, statement);
    return statement;
  }

  async function run<T>(
    sql: string,
    params: unknown[],
    options: QueryOptions | undefined,
    parsers = pg.parsers,
  ): Promise<Results<T>> {
    const statement = statements.get(sql) ?? (await prepare(sql));
    const { paramTypes } = statement;
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      // Bytes go as they are (the protocol's binary format): not as hex text, encoded here and decoded
      // again by the database (a check-in's sealed frame is tens of kilobytes).
      if (paramTypes[i] === BYTEA && ArrayBuffer.isView(value)) return value;
      const serializer = options?.serializers?.[paramTypes[i]!] ?? pg.serializers[paramTypes[i]!];
      return serializer ? serializer(value) : String(value);
    });
    const messages = await send(
      protocol.serialize.bind({ statement: statement.name, values }),
      protocol.serialize.execute({}),
    );
    if (statement.rowDescription) messages.unshift(statement.rowDescription);
    return parse.parseResults(messages, parsers, options)[0] as Results<T>;
  }

  const prepared = (sql: string) =>
    sql.startsWith(MARK) && (statements.has(sql) || statements.size < MAX_STATEMENTS);

  /** A statement prepared, outside transactions: waits for a transaction in progress to end. */
  const alone = <T>(
    sql: string,
    params: unknown[],
    options: QueryOptions | undefined,
    parsers = pg.parsers,
  ) =>
    pg._runExclusiveTransaction(() =>
      pg._runExclusiveQuery(async () => {
        const results = await run<T>(sql, params, options, parsers);
        await pg.syncToFs();
        return results;
      }),
    );

  const query = async <T>(sql: string, params: unknown[] = [], given?: QueryOptions): Promise<Results<T>> => {
    const options = adopt(given);
    if (!prepared(sql)) return pg.query<T>(sql, params, options);
    return alone<T>(sql, params, options);
  };

  const transaction = <T>(callback: (tx: Transaction) => Promise<T>): Promise<T> =>
    pg.transaction((tx) =>
      callback(
        Object.assign(Object.create(tx) as Transaction, {
          query: <R>(sql: string, params: unknown[] = [], given?: QueryOptions): Promise<Results<R>> => {
            const options = adopt(given);
            if (!prepared(sql)) return tx.query<R>(sql, params, options);
            if (tx.closed) throw new Error('Transaction is closed');
            return pg._runExclusiveQuery(() => run<R>(sql, params, options));
          },
        }),
      ),
    );

  const instance = new Proxy(pg, {
    get(target, property) {
      if (property === 'query') return query;
      if (property === 'transaction') return transaction;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    instance,
    run: <T>(sql: string, params: unknown[]) =>
      statements.has(sql) || statements.size < MAX_STATEMENTS
        ? alone<T>(sql, params, undefined, ownParsers)
        : pg.query<T>(sql, params, { parsers: ownParsers }),
  };
}
