// PGlite with its statements prepared once. `pglite.query` parses, analyses and plans its text on every
// call (an unnamed statement), which on PGlite's WebAssembly costs more than running most of ours: the
// webhook claim took 3.0-3.4 ms a call that way and 0.9 ms prepared (docs/benchmarks/cloud.md). This
// client answers `query` as PGlite does (same locks, serializers, parsers and results), through named
// statements kept per SQL text; the Prisma adapter is given it in place of the PGlite instance.
import {
  parse,
  protocol,
  type PGlite,
  type QueryOptions,
  type Results,
  type Transaction,
} from '@electric-sql/pglite';

/** Statements kept prepared (least recently used closed beyond): Prisma's texts repeat; an `IN (...)` of many lengths does not. */
export const PREPARED_STATEMENTS = 500;

type Message = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];

interface Prepared {
  name: string;
  /** The parameters' type oids, which pick their serializers. */
  types: number[];
}

/** What the Prisma adapter uses of a PGlite instance and of its transactions. */
export interface PGliteClient {
  query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>>;
  exec(text: string, options?: QueryOptions): Promise<Results[]>;
  transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T>;
}

const { serialize } = protocol;

function joined(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export function withPreparedStatements(pg: PGlite, max = PREPARED_STATEMENTS): PGliteClient {
  /** By SQL text, least recently used first. */
  const prepared = new Map<string, Prepared>();
  let counter = 0;
  const send = (parts: Uint8Array[]): Promise<Message[]> =>
    pg.execProtocolStream(joined([...parts, serialize.sync()]), { syncToFs: false });

  async function statement(text: string): Promise<Prepared> {
    const held = prepared.get(text);
    if (held) {
      prepared.delete(text);
      prepared.set(text, held);
      return held;
    }
    const name = `portico_${counter++}`;
    const described = await send([serialize.parse({ name, text }), serialize.describe({ type: 'S', name })]);
    const made = { name, types: parse.parseDescribeStatementResults(described) };
    prepared.set(text, made);
    if (prepared.size > max) {
      const [oldest, old] = prepared.entries().next().value!;
      prepared.delete(oldest);
      await send([serialize.close({ type: 'S', name: old.name })]);
    }
    return made;
  }

  /** One statement, run under PGlite's query lock (the caller holds the transaction lock or is a transaction). */
  async function run<T>(
    text: string,
    params: unknown[],
    options: QueryOptions | undefined,
  ): Promise<Results<T>> {
    return pg.runExclusive(async () => {
      const { name, types } = await statement(text);
      const values = params.map((value, i) => {
        if (value === null || value === undefined) return null;
        const serializer = options?.serializers?.[types[i]!] ?? pg.serializers[types[i]!];
        return serializer ? serializer(value) : String(value);
      });
      const messages = await send([
        serialize.bind({ statement: name, values }),
        serialize.describe({ type: 'P' }),
        serialize.execute({}),
      ]);
      return parse.parseResults(messages, pg.parsers, options)[0] as Results<T>;
    });
  }

  return {
    query: async <T>(text: string, params: unknown[] = [], options?: QueryOptions) => {
      await pg._checkReady();
      return pg._runExclusiveTransaction(async () => {
        const result = await run<T>(text, params, options);
        // As `pglite.query`: a statement outside a transaction is synced to the file system.
        await pg.syncToFs();
        return result;
      });
    },
    exec: (text, options) => pg.exec(text, options),
    transaction: (callback) =>
      pg.transaction((tx) =>
        callback(
          Object.create(tx, {
            query: {
              value: <T>(text: string, params: unknown[] = [], options?: QueryOptions) => {
                if (tx.closed) throw new Error('Transaction is closed');
                return run<T>(text, params, options);
              },
            },
          }) as Transaction,
        ),
      ),
  };
}
