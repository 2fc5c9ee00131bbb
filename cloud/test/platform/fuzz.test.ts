// Property-based fuzzing of every operation the service documents in /docs-json, new routes included
// without a line here: requests built from each operation's own schemas, then spoiled (NUL bytes,
// unpaired surrogates, right-to-left text, emoji, very long strings, huge numbers, wrong types,
// missing and extra fields, malformed ids, broken escapes, odd content types), sent with and without
// valid credentials. Whatever the input: no 5xx, and every error is problem+json with a `code` the
// operation documents for that status. Valid requests, with 2xx bodies checked: contract-run.test.ts.
//
// Replay: the seed is printed; FUZZ_SEED=<seed> reruns the same inputs, FUZZ_RUNS=<n> sets the runs per
// operation, FUZZ_OPERATION=<operationId> limits the run to one operation.
import fc from 'fast-check';
import { ERROR_CODES } from '@portico/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaceEngine } from '@portico/face-engine';
import type { FaceService } from '../../src/infra/face.js';
import { integratorOf } from '../persons/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { base64, cleanPhotos, facelessPng, HAS_MODELS, sharedFaceEngine } from '../support/faces.js';
import { bearer, login, PASSWORD } from '../support/identity.js';
import {
  documentedCodes,
  hostileString,
  operationsOf,
  percentEncode,
  Pools,
  readAnswer,
  SchemaArbitraries,
  serialise,
  serverProbe,
  type OpenApiDoc,
  type Operation,
  type Parameter,
} from '../support/openapi-arbitraries.js';

/** What Node's HTTP parser answers before any route (the README documents them for every request). */
const HTTP_LAYER_CODES: Partial<Record<number, string>> = {
  400: 'malformed_request',
  408: 'request_timeout',
  431: 'headers_too_large',
};

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 30);
const ONLY = process.env.FUZZ_OPERATION;
const VERBOSE = process.env.FUZZ_VERBOSE === '1';
const REQUEST_TIMEOUT_MS = 20_000;
// fast-check shrinks a failure by sending more requests: bound the time one operation may take.
const OPERATION_TIME_LIMIT_MS = 60_000;

// ---------------------------------------------------------------------------------------------
// Requests.

interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

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
  const server = serverProbe();
  const counts = { requests: 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, timeouts: 0 };
  const started = Date.now();
  /** Operations that answered 2xx at least once: the fuzzer reached their logic, not only validation. */
  const succeeded = new Set<string>();
  /** FUZZ_VERBOSE=1: statuses and codes by operation. */
  const byOperation = new Map<string, Map<string, number>>();

  beforeAll(async () => {
    server.listen();
    let face: FaceService | undefined;
    if (HAS_MODELS) ({ engine, face } = await sharedFaceEngine(1));
    t = await createTestApp({ logger: server.logger, ...(face ? { face } : {}) });
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
    server.stop();
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
    const crashesBefore = server.crashes.length;
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
    const { type, text } = await readAnswer(res);
    counts[`${String(res.status)[0]}xx` as '2xx']++;
    await new Promise((resolve) => setImmediate(resolve));
    if (server.crashes.length > crashesBefore) {
      return `uncaught exception in the server (it would end the process): ${server.crashes.at(-1)?.stack?.slice(0, 600)}`;
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
        return `${res.status} ${text.slice(0, 200)}\nserver: ${server.errors.get(requestId) ?? '(no log line)'}`;
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
      // A dot segment (`..`, `%2e%2e`) is resolved by the client: another route answers it.
      const otherRoute = /\/(\.|%2e){1,2}(\/|\?|$)/i.test(r.url);
      if (
        !otherRoute &&
        !documentedCodes(op, res.status).has(problem.code as string) &&
        HTTP_LAYER_CODES[res.status] !== problem.code
      )
        return `${res.status} with code ${String(problem.code)}, which ${op.operationId} does not document for ${res.status}: ${text.slice(0, 200)}`;
      if (problem.status !== res.status)
        return `${res.status} whose body says status ${String(problem.status)}`;
    }
    return undefined;
  }

  it(
    'answers every operation without a 5xx, and every error as problem+json with a code it documents',
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
