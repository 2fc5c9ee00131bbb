// Less of PGlite's event-loop work per statement:
// - For the Prisma adapter, its result parsers made the instance's own. PGlite merges a call's
//   `parsers` into its defaults at every call (`{ ...defaults, ...parsers }`, 318 keys: 0.2 ms quiet,
//   0.4-0.8 ms under load, more than many statements' execution); the adapter passes the same object
//   every time, so it is merged once.
// - For the statements run straight on the instance (direct.ts), named prepared statements.
//   `PGlite.query` parses, analyses and plans its text at every call: for the webhook claim about 1 ms
//   of planning against 1 ms of execution. A statement run through `run` is parsed once per database,
//   then bound and executed by name in one call into the WebAssembly, so PostgreSQL plans it once (a
//   generic plan, once its cost proves no worse than the custom ones). A generic plan does not see the
//   parameters' values, so an expression of them is no longer folded to a constant (a bulk statement
//   with `decode($1, 'base64')` would evaluate it once per row): only statements whose parameters are
//   plain values go through `run`. Their rows are parsed with PGlite's own parsers, kept aside before
//   the adapter's were merged.
import { parse, protocol, type PGlite, type QueryOptions, type Results } from '@electric-sql/pglite';

type BackendMessage = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];

const BYTEA = 17;

/** Distinct texts kept prepared; past it, statements run unprepared (a bug to look at). */
const MAX_STATEMENTS = 256;

interface Statement {
  name: string;
  paramTypes: number[];
  /** Its result's columns (absent for a statement that returns no rows). */
  rowDescription?: BackendMessage;
}

/** Runs one statement, prepared: its rows parsed with PGlite's own parsers. */
export type PreparedRun = <T>(sql: string, params: unknown[]) => Promise<Results<T>>;

export interface PreparedPGlite {
  /** The instance for the Prisma adapter, the adapter's parsers merged into it once. */
  instance: PGlite;
  /** Outside any transaction (waits for one in progress to end). */
  run: PreparedRun;
  /** A transaction whose statements `fn` runs with the `run` it is given. */
  transaction<T>(fn: (run: PreparedRun) => Promise<T>): Promise<T>;
}

export function withPreparedStatements(pg: PGlite): PreparedPGlite {
  const statements = new Map<string, Statement>();
  const preparable = (sql: string) => statements.has(sql) || statements.size < MAX_STATEMENTS;
  // int8 as bigint, as Prisma gives it (PGlite's own parser gives a number).
  const ownParsers = { ...pg.parsers, 20: (value: string) => BigInt(value) };
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

  async function execute<T>(sql: string, params: unknown[]): Promise<Results<T>> {
    const statement = statements.get(sql) ?? (await prepare(sql));
    const { paramTypes } = statement;
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      // Bytes go as they are (the protocol's binary format): not as hex text, encoded here and decoded
      // again by the database (a check-in's sealed frame is tens of kilobytes).
      if (paramTypes[i] === BYTEA && ArrayBuffer.isView(value)) return value;
      const serializer = pg.serializers[paramTypes[i]!];
      return serializer ? serializer(value) : String(value);
    });
    const messages = await send(
      protocol.serialize.bind({ statement: statement.name, values }),
      protocol.serialize.execute({}),
    );
    if (statement.rowDescription) messages.unshift(statement.rowDescription);
    return parse.parseResults(messages, ownParsers)[0] as Results<T>;
  }

  const instance = new Proxy(pg, {
    get(target, property) {
      if (property === 'query') {
        return <T>(sql: string, params?: unknown[], options?: QueryOptions) =>
          target.query<T>(sql, params, adopt(options));
      }
      if (property === 'transaction') {
        return <T>(callback: Parameters<PGlite['transaction']>[0]) =>
          target.transaction((tx) =>
            callback(
              Object.assign(Object.create(tx) as typeof tx, {
                query: <R>(sql: string, params?: unknown[], options?: QueryOptions) =>
                  tx.query<R>(sql, params, adopt(options)),
              }),
            ),
          ) as Promise<T>;
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });

  return {
    instance,
    run: <T>(sql: string, params: unknown[]) =>
      preparable(sql)
        ? pg._runExclusiveTransaction(() =>
            pg._runExclusiveQuery(async () => {
              const results = await execute<T>(sql, params);
              await pg.syncToFs();
              return results;
            }),
          )
        : pg.query<T>(sql, params, { parsers: ownParsers }),
    transaction: (fn) =>
      pg.transaction((tx) =>
        fn(<R>(sql: string, params: unknown[]) => {
          if (tx.closed) throw new Error('Transaction is closed');
          return preparable(sql)
            ? pg._runExclusiveQuery(() => execute<R>(sql, params))
            : tx.query<R>(sql, params, { parsers: ownParsers });
        }),
      ),
  };
}
