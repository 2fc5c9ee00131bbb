// What the property-based runs over /docs-json share (the fuzzer, fuzz.test.ts, and the contract run,
// contract-run.test.ts): the OpenAPI document as they read it, values generated from its schemas (as
// documented, or spoiled with hostile values), real ids met so far, and the server's own log and
// uncaught exceptions, so that a failing request is reported with its cause.
import fc from 'fast-check';
import { ERROR_CODES, z, type ErrorCode } from '@portico/contract';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/infra/logger.js';
// ---------------------------------------------------------------------------------------------
// The OpenAPI document, as far as the runs read it.

export interface JsonSchema {
  type?: string | string[];
  $ref?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxItems?: number;
  example?: unknown;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonSchema;
}

export interface Operation {
  operationId: string;
  method: string;
  path: string;
  parameters: Parameter[];
  bodyTypes: Record<string, JsonSchema | undefined>;
  /** Security scheme names the operation accepts; empty for public operations. */
  accepts: string[];
  /** Documented answers by status: their description (error codes in backquotes) and media types. */
  responses: Record<string, ResponseDoc>;
}

export interface ResponseDoc {
  description: string;
  content?: Record<string, { schema?: JsonSchema }>;
}

export interface OpenApiDoc {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        parameters?: Parameter[];
        requestBody?: { content: Record<string, { schema?: JsonSchema }> };
        security?: Record<string, string[]>[];
        responses?: Record<string, ResponseDoc>;
      }
    >
  >;
  components: { schemas: Record<string, JsonSchema> };
}

export function operationsOf(doc: OpenApiDoc): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      operationId: op.operationId,
      method: method.toUpperCase(),
      path,
      parameters: op.parameters ?? [],
      bodyTypes: Object.fromEntries(
        Object.entries(op.requestBody?.content ?? {}).map(([type, media]) => [type, media.schema]),
      ),
      accepts: (op.security ?? []).flatMap((s) => Object.keys(s)),
      responses: op.responses ?? {},
    })),
  );
}

/** The codes an operation documents for a status: the backquoted codes of that answer's description. */
export function documentedCodes(op: Operation, status: number): Set<string> {
  const text = op.responses[String(status)]?.description ?? '';
  const named = [...text.matchAll(/`([a-z0-9_]+)`/g)].map((m) => m[1]!);
  return new Set(named.filter((c) => ERROR_CODES.includes(c as ErrorCode)));
}

// ---------------------------------------------------------------------------------------------
// Hostile values.

export const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'ana\u0000souza',
  '\ud800',
  'x\udfff',
  'a\ud83d',
  '\u202eevil\u202c',
  'مرحبا بالعالم',
  'שלום',
  '👩🏽‍💻🏳️‍🌈',
  'e\u0301\u0301\u0301',
  '\ufeffbom',
  '\uffff\ufffe',
  '\u2028\u2029',
  '\r\nX-Injected: 1',
  '%',
  '_',
  '\\',
  '%_%',
  "'; DROP TABLE persons; --",
  '../../../etc/passwd',
  '{{7*7}}${7*7}',
  '<script>alert(1)</script>',
  'null',
  'undefined',
  '__proto__',
  'constructor',
  '0x10',
  '1e999',
  '-0',
  'NaN',
  '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11',
  'x'.repeat(65),
  'é'.repeat(3_000),
  'x'.repeat(20_000),
  '😀'.repeat(5_000),
];

/** Any UTF-16 code unit, lone surrogates included. */
export const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

export const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: anyCodeUnit, maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
);

// Numbers JSON.stringify can write; the raw literals below are spliced in after it.
export const hostileNumber = fc.oneof(
  fc.constantFrom(0, -0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 2, 2 ** 31, -(2 ** 31) - 1, 1e21, 5e-324),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** Numbers JSON can carry but JavaScript cannot hold exactly (or at all): written raw into the body. */
const RAW_NUMBERS = ['1e999', '-1e999', '123456789012345678901234567890', '1e-400', '-0.0e0'];
const RAW_MARK = '\u0001raw:';
const rawNumber = fc.constantFrom(...RAW_NUMBERS).map((n) => `${RAW_MARK}${n}`);

export function serialise(value: unknown): string {
  return JSON.stringify(value).replace(/"\\u0001raw:([^"]*)"/g, '$1');
}

export const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  hostileNumber,
  rawNumber,
  hostileString,
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.oneof(fc.integer(), hostileString), { maxLength: 4 }),
  fc.dictionary(fc.constantFrom('$ne', '$gt', '__proto__', 'constructor', 'id', 'tenantId'), fc.integer(), {
    maxKeys: 3,
  }),
  fc.constant(nest(200)),
);

function nest(depth: number): unknown {
  let v: unknown = 'deep';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

// ---------------------------------------------------------------------------------------------
// Values from schemas: mostly what the schema asks for, each node sometimes spoiled.

/**
 * Real values met so far (ids, tokens, slugs, photos), by the name of the field that carried them and
 * by the resource path that answered them: `/v1/events/{id}` draws its id from what `/v1/events`
 * answered, so routes added later reach their logic without a line here.
 */
export class Pools {
  private readonly byKey = new Map<string, string[]>();

  add(key: string, value: string): void {
    const pool = this.byKey.get(key) ?? [];
    if (pool.includes(value)) return;
    pool.push(value);
    if (pool.length > 20) pool.shift();
    this.byKey.set(key, pool);
  }

  /** A value from the first of `keys` that holds any (read when the request is generated). */
  pick(keys: string[]): fc.Arbitrary<string> {
    return fc.nat().map((n) => {
      const pool = keys.map((k) => this.byKey.get(k) ?? []).find((p) => p.length) ?? ['none'];
      return pool[n % pool.length]!;
    });
  }

  has(key: string): boolean {
    return (this.byKey.get(key)?.length ?? 0) > 0;
  }

  /**
   * Collects ids, tokens and slugs from an answer of `path` (an OpenAPI path). The `id` of the answer
   * (of a list's items, of the objects it holds) is filed under the resource too.
   */
  harvest(path: string, body: unknown): void {
    const resource = `${path.replace(/\{[^}]+\}$/, '').replace(/\/$/, '')}/id`;
    const walk = (v: unknown, depth: number, ofResource: boolean) => {
      if (depth > 3 || v === null || typeof v !== 'object') return;
      if (Array.isArray(v)) return v.slice(0, 5).forEach((item) => walk(item, depth + 1, ofResource));
      for (const [key, value] of Object.entries(v)) {
        if (typeof value !== 'string' || value.length > 200) {
          walk(value, depth + 1, ofResource && depth === 0);
          continue;
        }
        if (key === 'id' || /Id$/.test(key) || key === 'nonce') this.add(key, value);
        else if (/token$/i.test(key)) this.add('token', value);
        else if (key === 'slug') this.add('tenantSlug', value);
        else continue;
        this.add('anyId', value);
        if (key === 'id' && ofResource) this.add(resource, value);
      }
    };
    walk(body, 0, true);
  }
}

const EXTRA_KEYS = [
  'tenantId',
  'id',
  'role',
  'isAdmin',
  '__proto__',
  'constructor',
  '$where',
  'unknownField',
];

export class SchemaArbitraries {
  /**
   * @param spoil how often a node is replaced by junk (0: requests the schema accepts, to reach the
   *   routes' logic; 1 in 10: requests that break it somewhere)
   */
  constructor(
    private readonly doc: OpenApiDoc,
    private readonly pools: Pools,
    private readonly spoil: number,
  ) {}

  resolve(schema: JsonSchema): JsonSchema {
    let s = schema;
    for (let i = 0; s.$ref && i < 10; i++) {
      s = this.doc.components.schemas[s.$ref.replace('#/components/schemas/', '')] ?? {};
    }
    return s;
  }

  /** A value for `schema`, spoiled at every node as often as the constructor says. */
  value(schema: JsonSchema | undefined, name: string, depth = 0): fc.Arbitrary<unknown> {
    if (!schema || depth > 5) return junk;
    const typed = this.typed(this.resolve(schema), name, depth);
    if (this.spoil === 0) return typed;
    return fc.oneof(
      { weight: Math.round((1 - this.spoil) * 100), arbitrary: typed },
      { weight: Math.round(this.spoil * 100), arbitrary: junk },
    );
  }

  private typed(s: JsonSchema, name: string, depth: number): fc.Arbitrary<unknown> {
    const variants = s.anyOf ?? s.oneOf;
    if (variants) return fc.oneof(...variants.map((v) => this.value(v, name, depth + 1)));
    if (s.allOf?.length) return this.value(s.allOf[0], name, depth + 1);
    if (s.enum) return fc.constantFrom(...s.enum);
    if (s.const !== undefined) return fc.constant(s.const);
    const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
    if (types.length > 1) return fc.oneof(...types.map((type) => this.typed({ ...s, type }, name, depth)));
    switch (types[0]) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
      case 'number': {
        const number = this.number(s, types[0] === 'integer');
        return this.spoil === 0
          ? number
          : fc.oneof({ weight: 3, arbitrary: number }, { weight: 1, arbitrary: hostileNumber });
      }
      case 'string':
        return this.string(s, name);
      case 'array': {
        const items = this.value(s.items, name, depth + 1);
        const length = { minLength: Math.min(s.minItems ?? 0, 3), maxLength: Math.min(s.maxItems ?? 4, 4) };
        // Repeated items only when spoiling.
        return s.uniqueItems && this.spoil === 0
          ? fc.uniqueArray(items, { ...length, selector: (v) => JSON.stringify(v) })
          : fc.array(items, length);
      }
      case 'object':
        return this.object(s, depth);
      default:
        return junk;
    }
  }

  private number(s: JsonSchema, integer: boolean): fc.Arbitrary<number> {
    const min = s.minimum ?? s.exclusiveMinimum ?? -1e6;
    const max = s.maximum ?? s.exclusiveMaximum ?? 1e6;
    return integer
      ? fc.integer({ min: Math.ceil(Math.max(min, -1e9)), max: Math.floor(Math.min(max, 1e9)) })
      : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  }

  private string(s: JsonSchema, name: string): fc.Arbitrary<string> {
    const pooled = /token$/i.test(name) ? 'token' : name;
    return fc.oneof(
      ...(this.pools.has(pooled) ? [{ weight: 4, arbitrary: this.pools.pick([pooled]) }] : []),
      { weight: 4, arbitrary: this.wellFormedString(s) },
      ...(this.spoil === 0
        ? []
        : [
            { weight: 2, arbitrary: hostileString },
            { weight: 1, arbitrary: this.pools.pick(['anyId']) },
          ]),
    );
  }

  private wellFormedString(s: JsonSchema): fc.Arbitrary<string> {
    switch (s.format) {
      case 'email':
        // The addresses the service takes (zod's pattern, narrower than RFC 5321's: the document says
        // `format: email` only); fast-check's own would be refused half the time.
        return fc.stringMatching(z.regexes.email).filter((e) => e.length <= 320);
      case 'date-time':
        return fc
          .date({ min: new Date('1900-01-01'), max: new Date('2200-01-01'), noInvalidDate: true })
          .map((d) => d.toISOString());
      case 'date':
        return fc
          .date({ min: new Date('1900-01-01'), max: new Date('2200-01-01'), noInvalidDate: true })
          .map((d) => d.toISOString().slice(0, 10));
      case 'uri':
        return fc.oneof(
          fc.webUrl(),
          fc.constantFrom('http://127.0.0.1:1/hook', 'http://[::1]/', 'https://example.com/x'),
        );
    }
    if (s.pattern) {
      try {
        return fc.stringMatching(new RegExp(s.pattern));
      } catch {
        // A pattern fast-check cannot generate from: its example, or any text.
        return typeof s.example === 'string' ? fc.constant(s.example) : fc.string({ maxLength: 40 });
      }
    }
    const min = s.minLength ?? 0;
    const max = Math.max(min, Math.min(s.maxLength ?? 40, 40));
    return fc.oneof(
      fc.string({ minLength: min, maxLength: max }),
      ...(typeof s.example === 'string' ? [fc.constant(s.example)] : []),
    );
  }

  private object(s: JsonSchema, depth: number): fc.Arbitrary<Record<string, unknown>> {
    const required = new Set(s.required ?? []);
    const ABSENT = Symbol('absent');
    // A required field is missing only when spoiling.
    const fields = Object.entries(s.properties ?? {}).map(([key, schema]) => {
      const value = this.value(schema, key, depth + 1);
      const present = required.has(key) && this.spoil === 0;
      return (
        present
          ? value
          : fc.oneof(
              { weight: required.has(key) ? 12 : 5, arbitrary: value },
              { weight: required.has(key) ? 1 : 5, arbitrary: fc.constant(ABSENT) },
            )
      ).map((v) => [key, v] as const);
    });
    const additional =
      typeof s.additionalProperties === 'object'
        ? fc.dictionary(fc.string({ maxLength: 12 }), this.value(s.additionalProperties, '', depth + 1), {
            maxKeys: 3,
          })
        : fc.constant({});
    // Keys the schema does not declare only when spoiling: a strict object refuses them.
    const extra =
      this.spoil === 0
        ? fc.constant({})
        : fc.oneof(
            { weight: 9, arbitrary: fc.constant({}) },
            { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...EXTRA_KEYS), junk, { maxKeys: 2 }) },
          );
    const objects = fc.tuple(fc.tuple(...fields), additional, extra).map(([pairs, more, extras]) => {
      const out: Record<string, unknown> = { ...(more as object), ...(extras as object) };
      for (const [key, v] of pairs) if (v !== ABSENT) out[key] = v;
      return out;
    });
    // Too few fields only when spoiling.
    const fewest = this.spoil === 0 ? (s.minProperties ?? 0) : 0;
    return fewest ? objects.filter((o) => Object.keys(o).length >= fewest) : objects;
  }
}

/** Percent-encodes the UTF-8 of a string (an unpaired surrogate becomes U+FFFD, as on any client). */
export const percentEncode = (s: string) =>
  [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

/**
 * An answer's media type (without parameters) and text. A stream of server-sent events stays open:
 * its answer is its status and media type, and the stream is closed unread.
 */
export async function readAnswer(res: Response): Promise<{ type: string; text: string }> {
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (type !== 'text/event-stream') return { type, text: await res.text() };
  await res.body?.cancel();
  return { type, text: '' };
}

/**
 * The server's error log lines by request id (a 5xx is reported with its cause) and the exceptions
 * nothing caught (an 'error' event without a listener: in production they end the process; the
 * server runs in this process, so they land here). `logger` goes to `createTestApp`.
 */
export function serverProbe() {
  const errors = new Map<string, string>();
  const crashes: Error[] = [];
  const onCrash = (error: Error) => crashes.push(error);
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as {
          requestId?: string;
          err?: { message?: string; stack?: string };
          msg?: string;
        };
        if (entry.requestId)
          errors.set(
            entry.requestId,
            `${entry.msg}: ${entry.err?.stack ?? entry.err?.message ?? ''}`.slice(0, 1_500),
          );
      }
      done();
    },
  });
  return {
    logger: createLogger('error', sink),
    errors,
    crashes,
    listen: () => process.on('uncaughtException', onCrash),
    stop: () => process.off('uncaughtException', onCrash),
  };
}
