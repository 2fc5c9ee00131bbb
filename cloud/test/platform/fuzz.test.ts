// Property-based fuzzing of every operation the service documents in /docs-json, new routes included
// without a line here: requests built from each operation's own schemas, then spoiled (NUL bytes,
// unpaired surrogates, right-to-left text, emoji, very long strings, huge numbers, wrong types,
// missing and extra fields, malformed ids, broken escapes, odd content types), sent with and without
// valid credentials. Whatever the input: no 5xx, and every error is problem+json with a known `code`.
//
// Replay: the seed is printed; FUZZ_SEED=<seed> reruns the same inputs, FUZZ_RUNS=<n> sets the runs per
// operation, FUZZ_OPERATION=<operationId> limits the run to one operation.
import fc from 'fast-check';
import { ERROR_CODES } from '@portico/contract';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaceEngine } from '@portico/face-engine';
import type { FaceService } from '../../src/infra/face.js';
import { createLogger } from '../../src/infra/logger.js';
import { integratorOf } from '../persons/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { base64, cleanPhotos, facelessPng, HAS_MODELS, sharedFaceEngine } from '../support/faces.js';
import { bearer, login, PASSWORD } from '../support/identity.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 30);
const ONLY = process.env.FUZZ_OPERATION;
const VERBOSE = process.env.FUZZ_VERBOSE === '1';
const REQUEST_TIMEOUT_MS = 20_000;
// fast-check shrinks a failure by sending more requests: bound the time one operation may take.
const OPERATION_TIME_LIMIT_MS = 60_000;

// ---------------------------------------------------------------------------------------------
// The OpenAPI document, as far as the fuzzer reads it.

interface JsonSchema {
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
  maxItems?: number;
  example?: unknown;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonSchema;
}

interface Operation {
  operationId: string;
  method: string;
  path: string;
  parameters: Parameter[];
  bodyTypes: Record<string, JsonSchema | undefined>;
  /** Caller kinds the operation accepts; empty for public operations. */
  accepts: string[];
}

interface OpenApiDoc {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        parameters?: Parameter[];
        requestBody?: { content: Record<string, { schema?: JsonSchema }> };
        security?: Record<string, string[]>[];
      }
    >
  >;
  components: { schemas: Record<string, JsonSchema> };
}

function operationsOf(doc: OpenApiDoc): Operation[] {
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
    })),
  );
}

// ---------------------------------------------------------------------------------------------
// Hostile values.

const HOSTILE_STRINGS = [
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
const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: anyCodeUnit, maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
);

// Numbers JSON.stringify can write; the raw literals below are spliced in after it.
const hostileNumber = fc.oneof(
  fc.constantFrom(0, -0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 2, 2 ** 31, -(2 ** 31) - 1, 1e21, 5e-324),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** Numbers JSON can carry but JavaScript cannot hold exactly (or at all): written raw into the body. */
const RAW_NUMBERS = ['1e999', '-1e999', '123456789012345678901234567890', '1e-400', '-0.0e0'];
const RAW_MARK = '\u0001raw:';
const rawNumber = fc.constantFrom(...RAW_NUMBERS).map((n) => `${RAW_MARK}${n}`);

function serialise(value: unknown): string {
  return JSON.stringify(value).replace(/"\\u0001raw:([^"]*)"/g, '$1');
}

const junk: fc.Arbitrary<unknown> = fc.oneof(
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
class Pools {
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

class SchemaArbitraries {
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
      case 'array':
        return fc.array(this.value(s.items, name, depth + 1), {
          minLength: Math.min(s.minItems ?? 0, 3),
          maxLength: Math.min(s.maxItems ?? 4, 4),
        });
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
        return fc.emailAddress().filter((e) => e.length <= 320);
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
    const fields = Object.entries(s.properties ?? {}).map(([key, schema]) =>
      fc
        .oneof(
          { weight: required.has(key) ? 12 : 5, arbitrary: this.value(schema, key, depth + 1) },
          { weight: required.has(key) ? 1 : 5, arbitrary: fc.constant(ABSENT) },
        )
        .map((v) => [key, v] as const),
    );
    const additional =
      typeof s.additionalProperties === 'object'
        ? fc.dictionary(fc.string({ maxLength: 12 }), this.value(s.additionalProperties, '', depth + 1), {
            maxKeys: 3,
          })
        : fc.constant({});
    const extra = fc.oneof(
      { weight: 9, arbitrary: fc.constant({}) },
      { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...EXTRA_KEYS), junk, { maxKeys: 2 }) },
    );
    return fc.tuple(fc.tuple(...fields), additional, extra).map(([pairs, more, extras]) => {
      const out: Record<string, unknown> = { ...(more as object), ...(extras as object) };
      for (const [key, v] of pairs) if (v !== ABSENT) out[key] = v;
      return out;
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Requests.

interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** Percent-encodes the UTF-8 of a string (an unpaired surrogate becomes U+FFFD, as on any client). */
const percentEncode = (s: string) =>
  [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

/** Segments no client library would send but an attacker will: broken escapes, invalid UTF-8, dot segments. */
const RAW_SEGMENTS = [
  '%',
  '%%',
  '%ZZ',
  '%E0%A4%A',
  '%FF%FE',
  '%C0%AF',
  '%00',
  '%2e%2e',
  '%2F',
  '..',
  '.',
  '%EF%BF%BF',
];

type Credential = 'none' | 'adminSession' | 'apiKey' | 'device' | 'bogusBearer' | 'bogusSecret';

interface Credentials {
  adminSession: string;
  apiKey: string;
  device: string;
}

/** The OpenAPI security scheme names, as the fuzzer's credentials (no portal sessions here). */
const CREDENTIAL_OF: Record<string, Credential> = {
  adminSession: 'adminSession',
  apiKey: 'apiKey',
  internalSecret: 'device',
};

function headersFor(who: Credential, creds: Credentials): Record<string, string> {
  switch (who) {
    case 'adminSession':
      return bearer(creds.adminSession);
    case 'apiKey':
      return bearer(creds.apiKey);
    case 'device':
      return { 'x-internal-secret': creds.device };
    case 'bogusBearer':
      return { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' };
    case 'bogusSecret':
      return { 'x-internal-secret': 'x'.repeat(40) };
    case 'none':
      return {};
  }
}

const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
];

const RAW_BODIES = [
  '',
  '{',
  'null',
  '[]',
  '"text"',
  '1e999',
  '{"a":1,"a":2}',
  '\ufeff{}',
  '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
  `${'['.repeat(3_000)}${']'.repeat(3_000)}`,
  '{"name":"\\u0000","document":"\\ud800"}',
];

const UPLOADS = [
  'name,document,email\nAna,123,ana@example.com\n',
  'name,document\n"unterminated,1\n',
  'name\u0000,document\nA\u0000,1\n',
  `name,document\n${'x,1\n'.repeat(2_000)}`,
  'PK\u0003\u0004not really a spreadsheet',
  '',
];

/** A file upload for an operation that does not take JSON (multipart/form-data, text/csv, …). */
function uploadBody(type: string): fc.Arbitrary<{ text: string; type: string }> {
  const content = fc.oneof(fc.constantFrom(...UPLOADS), hostileString);
  if (!type.startsWith('multipart/')) return content.map((text) => ({ text, type }));
  const boundary = 'fuzzboundary7MA4YWxk';
  return fc
    .tuple(
      fc.constantFrom('file', 'upload', 'rows', ''),
      fc.constantFrom('guests.csv', 'guests.xlsx', '../../etc/passwd', 'a"b.csv', 'x'.repeat(300)),
      fc.constantFrom(
        'text/csv',
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        'image/png',
      ),
      content,
      fc.boolean(),
    )
    .map(([field, filename, partType, text, terminated]) => ({
      type: `multipart/form-data; boundary=${boundary}`,
      text:
        `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\n` +
        `Content-Type: ${partType}\r\n\r\n${text}\r\n${terminated ? `--${boundary}--\r\n` : ''}`,
    }));
}

/**
 * Requests for one operation. `clean`: what the operation documents (real ids, declared parameters,
 * accepted credentials, JSON bodies its schema accepts), to reach its logic; otherwise anything.
 */
function requestArbitrary(
  op: Operation,
  schemas: SchemaArbitraries,
  pools: Pools,
  creds: () => Credentials,
  clean: boolean,
): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');

  // `/v1/applications/{id}/api-keys/{keyId}`: `id` from what /v1/applications/ answered, `keyId` from
  // what /v1/applications/{id}/api-keys/ answered, else any value of that name, else any id.
  const seededSegment = (p: Parameter) =>
    pools
      .pick(
        p.name === 'id'
          ? [`${op.path.slice(0, op.path.indexOf(`{${p.name}}`))}id`, 'id', 'anyId']
          : [p.name, `${op.path.slice(0, op.path.indexOf(`{${p.name}}`))}id`, 'anyId'],
      )
      .map(percentEncode);
  const segment = (p: Parameter) =>
    clean
      ? seededSegment(p)
      : fc.oneof(
          { weight: 4, arbitrary: seededSegment(p) },
          { weight: 1, arbitrary: pools.pick(['anyId']).map(percentEncode) },
          {
            weight: 3,
            arbitrary: hostileString.filter((s) => s.length > 0 && s.length < 3_000).map(percentEncode),
          },
          { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
        );
  const path = fc
    .tuple(...pathParams.map((p) => segment(p).map((v) => [p.name, v] as const)))
    .map((pairs) => pairs.reduce((acc, [name, v]) => acc.replace(`{${name}}`, v), op.path));

  const schemaValue = (p: Parameter) =>
    schemas.value(p.schema, p.name).map((v) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? '')));
  const queryValue = (p: Parameter) =>
    clean
      ? schemaValue(p)
      : fc.oneof({ weight: 3, arbitrary: schemaValue(p) }, { weight: 2, arbitrary: hostileString });
  const declared = fc.tuple(
    ...queryParams.map((p) =>
      fc.option(
        queryValue(p).map((v) => [[p.name, v]] as [string, string][]),
        { freq: 2, nil: [] },
      ),
    ),
  );
  const undeclared = clean
    ? fc.constant([] as [string, string][])
    : fc.oneof(
        { weight: 8, arbitrary: fc.constant([] as [string, string][]) },
        {
          weight: 2,
          arbitrary: fc
            .tuple(
              fc.constantFrom(
                'q[]',
                'q[$ne]',
                'limit[$gt]',
                '__proto__',
                'constructor[prototype]',
                'foo',
                ...queryParams.map((p) => p.name),
              ),
              hostileString,
            )
            .map((pair) => [pair]),
        },
      );
  const query = fc.tuple(declared, undeclared).map(([d, u]) => {
    const pairs = [...d.flat(), ...u];
    return pairs.length
      ? `?${pairs.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&')}`
      : '';
  });

  const accepted = op.accepts.map((kind) => CREDENTIAL_OF[kind] ?? 'none');
  const acceptedCredential = fc.constantFrom<Credential>(...(accepted.length ? accepted : ['none' as const]));
  const credential = clean
    ? acceptedCredential
    : fc.oneof(
        {
          weight: 6,
          arbitrary: acceptedCredential,
        },
        { weight: 3, arbitrary: fc.constantFrom<Credential>('none', 'adminSession', 'apiKey', 'device') },
        { weight: 1, arbitrary: fc.constantFrom<Credential>('bogusBearer', 'bogusSecret') },
      );
  // A client address per request (the test server trusts its loopback proxy): per-address rate limits
  // would otherwise answer 429 before the fuzzer reaches the route.
  const forwardedFor = clean
    ? fc.ipV4()
    : fc.oneof(
        { weight: 9, arbitrary: fc.ipV4() },
        { weight: 1, arbitrary: fc.constantFrom('garbage', '::1, 10.0.0.1', 'x'.repeat(300), '') },
      );

  const jsonSchema = op.bodyTypes['application/json'];
  const hasBody = Object.keys(op.bodyTypes).length > 0;
  if (hasBody && !jsonSchema) {
    return fc
      .record({ path, query, credential, forwardedFor, upload: uploadBody(Object.keys(op.bodyTypes)[0]!) })
      .map(({ path, query, credential, forwardedFor, upload }) => ({
        method: op.method,
        url: path + query,
        headers: {
          ...headersFor(credential, creds()),
          'x-forwarded-for': forwardedFor,
          'content-type': upload.type,
        },
        body: upload.text,
      }));
  }
  const cleanBody = schemas.value(jsonSchema, 'body').map((v) => ({
    text: serialise(v) as string | undefined,
    type: 'application/json' as string | undefined,
  }));
  const body = !hasBody
    ? fc.constant({ text: undefined as string | undefined, type: undefined as string | undefined })
    : clean
      ? cleanBody
      : fc.oneof(
          {
            weight: 8,
            arbitrary: fc
              .tuple(
                schemas.value(jsonSchema, 'body'),
                fc.oneof(
                  { weight: 8, arbitrary: fc.constant('application/json') },
                  { weight: 1, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
                ),
              )
              .map(([v, type]) => ({ text: serialise(v), type })),
          },
          {
            weight: 1,
            arbitrary: fc.constantFrom(...RAW_BODIES).map((text) => ({ text, type: 'application/json' })),
          },
          {
            weight: 1,
            arbitrary: fc.constant({
              text: undefined as string | undefined,
              type: undefined as string | undefined,
            }),
          },
        );

  return fc
    .record({ path, query, credential, forwardedFor, body })
    .map(({ path, query, credential, forwardedFor, body }) => ({
      method: op.method,
      url: path + query,
      headers: {
        ...headersFor(credential, creds()),
        ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
        ...(body.type ? { 'content-type': body.type } : {}),
      },
      ...(body.text !== undefined ? { body: body.text } : {}),
    }));
}

/** What a failing request was, short enough to read in a report. */
function describeRequest(r: FuzzRequest): string {
  const cut = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}… (${s.length} chars)` : s);
  return `${r.method} ${cut(r.url)} headers=${JSON.stringify(r.headers)} body=${r.body === undefined ? '(none)' : JSON.stringify(cut(r.body))}`;
}

// ---------------------------------------------------------------------------------------------

describe('fuzzing every documented operation', () => {
  let t: TestApp;
  let engine: FaceEngine | undefined;
  let doc: OpenApiDoc;
  let creds: Credentials;
  const pools = new Pools();
  let refreshCredentials: () => Promise<void>;
  /** The server's error log lines by request id: a 5xx is reported with its cause. */
  const serverErrors = new Map<string, string>();
  /**
   * Exceptions nothing caught (an 'error' event without a listener): in production they end the
   * process. The server runs in this process, so they land here, and the request that caused one fails.
   */
  const crashes: Error[] = [];
  const onCrash = (error: Error) => crashes.push(error);
  const counts = { requests: 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, timeouts: 0 };
  const started = Date.now();
  /** Operations that answered 2xx at least once: the fuzzer reached their logic, not only validation. */
  const succeeded = new Set<string>();
  /** FUZZ_VERBOSE=1: statuses and codes by operation. */
  const byOperation = new Map<string, Map<string, number>>();

  beforeAll(async () => {
    process.on('uncaughtException', onCrash);
    let face: FaceService | undefined;
    if (HAS_MODELS) ({ engine, face } = await sharedFaceEngine(1));
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) {
          const entry = JSON.parse(line) as {
            requestId?: string;
            err?: { message?: string; stack?: string };
            msg?: string;
          };
          if (entry.requestId)
            serverErrors.set(
              entry.requestId,
              `${entry.msg}: ${entry.err?.stack ?? entry.err?.message ?? ''}`.slice(0, 1_500),
            );
        }
        done();
      },
    });
    t = await createTestApp({ logger: createLogger('error', sink), ...(face ? { face } : {}) });
    doc = (await t.request('GET', '/docs-json')).body as OpenApiDoc;

    const org = await integratorOf(t);
    const victim = await t.request('POST', '/v1/applications', {
      headers: org.headers,
      body: { name: 'fuzz victim' },
    });
    const person = await t.request('POST', '/v1/persons', {
      headers: org.keyHeaders,
      body: { name: 'Fuzz Person', document: 'fz-1', externalId: 'fz-ext-1', email: 'fuzz@example.com' },
    });
    const qr = person.body.identityId
      ? await t.request('GET', `/v1/checkin/identities/${person.body.identityId}/qr-token`, {
          headers: org.keyHeaders,
        })
      : undefined;
    const photos = HAS_MODELS ? await cleanPhotos() : [];
    const frames = [base64(await facelessPng()), ...photos.slice(0, 1).map((p) => base64(p.bytes))];

    creds = { adminSession: org.token, apiKey: org.apiKey, device: t.deps.secrets.internalSecret };
    // Some operations end the very session or key the fuzzer uses (logout, rotating a key): take new ones.
    refreshCredentials = async () => {
      if ((await t.request('GET', '/v1/auth/me', { headers: bearer(creds.adminSession) })).status === 401) {
        const again = await login(t, org.tenant.adminEmail);
        if (again.token) creds.adminSession = again.token;
      }
      if ((await t.request('GET', '/v1/persons?limit=1', { headers: bearer(creds.apiKey) })).status === 401) {
        const app = await t.request('POST', '/v1/applications', {
          headers: bearer(creds.adminSession),
          body: { name: 'fuzz key' },
        });
        if (app.status === 201) creds.apiKey = app.body.apiKey.key;
      }
    };

    pools.add('/v1/tenants/id', org.tenantId);
    pools.add('/v1/applications/id', victim.body.application.id);
    pools.add('/v1/applications/{id}/api-keys/id', victim.body.apiKey.id);
    pools.add('/v1/persons/id', person.body.id);
    for (const [key, values] of Object.entries({
      tenantSlug: [org.tenant.slug],
      externalId: ['fz-ext-1'],
      email: ['fuzz@example.com', org.tenant.adminEmail],
      password: [PASSWORD],
      frame: frames,
      frames,
    })) {
      for (const value of values) pools.add(key, value);
    }
    pools.harvest('/v1/persons', person.body);
    if (qr) pools.harvest('/v1/checkin/identities/{identityId}/qr-token', qr.body);
    console.log(
      `fuzz: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}${ONLY ? ` FUZZ_OPERATION=${ONLY}` : ''} (set these to replay) ` +
        `face engine: ${engine ? 'real' : 'none (503 engine_unavailable allowed)'}`,
    );
  }, 120_000);

  afterAll(async () => {
    process.off('uncaughtException', onCrash);
    for (const [id, codes] of byOperation) {
      console.log(`fuzz: ${id}: ${[...codes].map(([k, n]) => `${k} x${n}`).join(', ')}`);
    }
    console.log(
      `fuzz: ${counts.requests} requests in ${((Date.now() - started) / 1000).toFixed(0)} s: ` +
        `2xx ${counts['2xx']}, 3xx ${counts['3xx']}, 4xx ${counts['4xx']}, 5xx ${counts['5xx']}, timeouts ${counts.timeouts}`,
    );
    await t?.close();
    await engine?.close();
  });

  async function send(r: FuzzRequest, op: Operation): Promise<string | undefined> {
    counts.requests++;
    const crashesBefore = crashes.length;
    let res: Response;
    try {
      res = await fetch(t.url + r.url, {
        method: r.method,
        headers: r.headers,
        ...(r.body !== undefined ? { body: r.body } : {}),
        redirect: 'manual',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      counts.timeouts++;
      return `no answer: ${(error as Error).message}`;
    }
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    counts[`${String(res.status)[0]}xx` as '2xx']++;
    await new Promise((resolve) => setImmediate(resolve));
    if (crashes.length > crashesBefore) {
      return `uncaught exception in the server (it would end the process): ${crashes.at(-1)?.stack?.slice(0, 600)}`;
    }
    if (VERBOSE) {
      const codes = byOperation.get(op.operationId) ?? new Map<string, number>();
      const key = `${res.status}${res.status >= 400 ? ` ${/"code":"(\w+)"/.exec(text)?.[1]}` : ''}`;
      codes.set(key, (codes.get(key) ?? 0) + 1);
      byOperation.set(op.operationId, codes);
    }
    if (res.status < 300) {
      succeeded.add(op.operationId);
      if (type.startsWith('application/json')) pools.harvest(op.path, JSON.parse(text));
    }
    const requestId = res.headers.get('x-request-id') ?? '';
    if (res.status >= 500) {
      const engineDown = !engine && res.status === 503 && text.includes('"engine_unavailable"');
      if (!engineDown)
        return `${res.status} ${text.slice(0, 200)}\nserver: ${serverErrors.get(requestId) ?? '(no log line)'}`;
    }
    if (res.status >= 400) {
      if (!type.startsWith('application/problem+json'))
        return `${res.status} with content-type "${type}": ${text.slice(0, 200)}`;
      let problem: { code?: unknown; status?: unknown };
      try {
        problem = JSON.parse(text);
      } catch {
        return `${res.status} problem+json that is not JSON: ${text.slice(0, 200)}`;
      }
      if (!ERROR_CODES.includes(problem.code as never))
        return `${res.status} with unknown code ${String(problem.code)}`;
      if (problem.status !== res.status)
        return `${res.status} whose body says status ${String(problem.status)}`;
    }
    return undefined;
  }

  it(
    'answers every operation without a 5xx, and every error as problem+json with a known code',
    async () => {
      const cleanSchemas = new SchemaArbitraries(doc, pools, 0);
      const dirtySchemas = new SchemaArbitraries(doc, pools, 0.1);
      // Deletions last, sub-resources first, so that the rows other operations need still exist.
      const documented = operationsOf(doc).filter((op) => !ONLY || op.operationId === ONLY);
      const operations = [
        ...documented.filter((op) => op.method !== 'DELETE'),
        ...documented.filter((op) => op.method === 'DELETE').sort((a, b) => b.path.length - a.path.length),
      ];
      expect(operations.length).toBeGreaterThan(0);
      const failures: string[] = [];
      for (const op of operations) {
        await refreshCredentials();
        const details = await fc.check(
          fc.asyncProperty(
            fc.oneof(
              { weight: 3, arbitrary: requestArbitrary(op, cleanSchemas, pools, () => creds, true) },
              { weight: 7, arbitrary: requestArbitrary(op, dirtySchemas, pools, () => creds, false) },
            ),
            async (r) => {
              const problem = await send(r, op);
              if (problem) throw new Error(`${problem}\nrequest: ${describeRequest(r)}`);
            },
          ),
          {
            seed: SEED,
            numRuns: RUNS,
            interruptAfterTimeLimit: OPERATION_TIME_LIMIT_MS,
            markInterruptAsFailure: false,
          },
        );
        if (details.failed) {
          const error = details.errorInstance as Error | undefined;
          failures.push(
            `${op.operationId} (${op.method} ${op.path}), replay with FUZZ_SEED=${SEED} FUZZ_OPERATION=${op.operationId}:\n` +
              `${error?.message ?? fc.defaultReportMessage(details)}`,
          );
        }
      }
      const shallow = operations.filter((op) => !succeeded.has(op.operationId)).map((op) => op.operationId);
      console.log(
        `fuzz: ${operations.length} operations, ${failures.length} failing; never answered 2xx ` +
          `(so fuzzed at the edge only): ${shallow.join(', ') || 'none'}`,
      );
      expect(failures, failures.join('\n\n')).toEqual([]);
    },
    30 * 60_000,
  );
});
