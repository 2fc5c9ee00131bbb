// The contract run: every operation of the running service's /docs-json (routes added later
// included) receives requests it should accept, generated from its documented request schemas, with
// path parameters naming real resources made in a set-up phase and the credentials it documents
// (contract-recipes.ts says how, per operation). Each 2xx body must match its documented response
// schema (ajv, JSON Schema 2020-12, the OpenAPI document as the source), each error must be
// problem+json with a `code` the operation documents for that status, and nothing may answer 5xx.
// It fails when an operation never answered 2xx (except the few listed with the reason) or has no
// recipe. The hostile side of the same document is fuzz.test.ts.
//
// CONTRACT_RUNS=<n> sets the requests per operation, CONTRACT_SEED=<n> replays a run,
// CONTRACT_OPERATION=<operationId>[,<operationId>…] limits it to those operations, CONTRACT_VERBOSE=1 prints every answer
// that is not 2xx with its request.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import type { FaceEngine } from '@portico/face-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaceService } from '../../src/infra/face.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { HAS_MODELS, sharedFaceEngine } from '../support/faces.js';
import {
  documentedCodes,
  operationsOf,
  percentEncode,
  Pools,
  readAnswer,
  SchemaArbitraries,
  serverProbe,
  type OpenApiDoc,
  type Operation,
} from '../support/openapi-arbitraries.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import {
  CALLER_OF_SCHEME,
  createFixtures,
  fixtureKey,
  type Caller,
  type Fixtures,
} from './contract-fixtures.js';
import { RECIPES, type Parts, type Recipe } from './contract-recipes.js';

const SEED = Number(process.env.CONTRACT_SEED ?? 20_261_123);
const RUNS = Number(process.env.CONTRACT_RUNS ?? 4);
const ONLY = process.env.CONTRACT_OPERATION;
const VERBOSE = process.env.CONTRACT_VERBOSE === '1';
const REQUEST_TIMEOUT_MS = 20_000;

/** The callers an operation documents (its security alternatives); the public when it has none. */
function callersOf(op: Operation): Caller[] {
  const callers = op.accepts.map((scheme) => CALLER_OF_SCHEME[scheme] ?? 'public');
  return callers.length ? [...new Set(callers)] : ['public'];
}

/** A validator per documented response schema, refs pointing into the document's components. */
function responseValidators(doc: OpenApiDoc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat('binary', true);
  const retarget = (schema: unknown) =>
    JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"components#/$defs/'));
  ajv.addSchema({ $id: 'components', $defs: retarget(doc.components.schemas) });
  const cache = new Map<string, ReturnType<typeof ajv.compile>>();
  return (op: Operation, status: number, schema: unknown) => {
    const key = `${op.operationId} ${status}`;
    let validate = cache.get(key);
    if (!validate) {
      validate = ajv.compile(retarget(schema));
      cache.set(key, validate);
    }
    return validate;
  };
}

/** A query value as a client writes it; numbers in decimal digits (the service refuses `1e-7`). */
function queryText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && !Number.isInteger(v)) return v.toFixed(12).replace(/\.?0+$/, '');
  return JSON.stringify(v);
}

interface Generated {
  query: Record<string, string>;
  body: unknown;
  forwardedFor: string;
}

/** The generated part of an operation's requests: query values and JSON body from its schemas. */
function generatedParts(op: Operation, schemas: SchemaArbitraries): fc.Arbitrary<Generated> {
  // A cursor is opaque: one the API did not issue is refused, so the generated requests start at page
  // one, and a request after an answer with `nextCursor` asks for that page.
  const queryParams = op.parameters.filter((p) => p.in === 'query' && p.name !== 'cursor');
  const query = fc
    .tuple(
      ...queryParams.map((p) => {
        const value = schemas.value(p.schema, p.name).map((v) => [p.name, queryText(v)] as [string, string]);
        return p.required ? value : fc.option(value, { nil: undefined });
      }),
    )
    .map((pairs) => Object.fromEntries(pairs.filter((p): p is [string, string] => p !== undefined)));
  const jsonSchema = op.bodyTypes['application/json'];
  const body = jsonSchema ? schemas.value(jsonSchema, 'body') : fc.constant(undefined);
  return fc.record({ query, body, forwardedFor: fc.ipV4() });
}

interface Tally {
  requests: number;
  byStatus: Map<string, number>;
  /** Time spent on the operation, its recipe's set-up included. */
  ms: number;
  /** The query of the next page, when the last answer had one: the next request follows it. */
  nextPage?: Record<string, string>;
  /** Requests that followed a `nextCursor`. */
  pages: number;
  /** Who called. */
  callers: Caller[];
}

describe('the contract, run with valid requests over every documented operation', () => {
  let t: TestApp & { smtp: SmtpSink };
  let engine: FaceEngine | undefined;
  let doc: OpenApiDoc;
  let f: Fixtures;
  let receiver: WebhookReceiver;
  const server = serverProbe();
  const tallies = new Map<string, Tally>();
  const started = Date.now();

  beforeAll(async () => {
    server.listen();
    let face: FaceService | undefined;
    if (HAS_MODELS) ({ engine, face } = await sharedFaceEngine(1));
    const smtp = await startSmtpSink();
    receiver = await startWebhookReceiver();
    const app = await createTestApp({
      env: { SMTP_URL: smtp.url, PUBLIC_URL: 'https://portico.example.com' },
      logger: server.logger,
      ...(face ? { face } : {}),
    });
    const close = app.close;
    t = Object.assign(app, {
      smtp,
      async close() {
        await close();
        await smtp.close();
      },
    });
    doc = (await t.request('GET', '/docs-json')).body as OpenApiDoc;
    f = await createFixtures(t, Boolean(engine), receiver.url);
    console.log(
      `contract: CONTRACT_SEED=${SEED} CONTRACT_RUNS=${RUNS}${ONLY ? ` CONTRACT_OPERATION=${ONLY}` : ''} ` +
        `set-up ${((Date.now() - started) / 1000).toFixed(1)} s, face engine: ${engine ? 'real' : 'none'}`,
    );
  }, 180_000);

  afterAll(async () => {
    server.stop();
    await t?.close();
    await receiver?.close();
    await engine?.close();
  });

  it('documents a recipe for every operation, and every recipe names an operation', () => {
    const documented = operationsOf(doc).map((op) => op.operationId);
    expect(
      documented.filter((id) => !RECIPES[id]),
      'operations without a recipe',
    ).toEqual([]);
    expect(
      Object.keys(RECIPES).filter((id) => !documented.includes(id)),
      'recipes of no operation',
    ).toEqual([]);
  });

  it(
    'answers every operation 2xx with its documented body, errors with documented codes, never 5xx',
    async () => {
      const schemas = new SchemaArbitraries(doc, new Pools(), 0);
      const validatorFor = responseValidators(doc);
      const operations = operationsOf(doc).filter((op) => !ONLY || ONLY.split(',').includes(op.operationId));
      const failures: string[] = [];

      for (const [index, op] of operations.entries()) {
        // An operation without a recipe (the test above fails) still runs as documented, with the fixtures.
        const recipe = RECIPES[op.operationId] ?? {};
        const tally: Tally = { requests: 0, byStatus: new Map(), ms: 0, pages: 0, callers: [] };
        const opStarted = Date.now();
        tallies.set(op.operationId, tally);
        // The recipe's caller, else each caller kind the operation documents in turn.
        const documentedCallers = callersOf(op);
        const callers = recipe.as ? [recipe.as] : documentedCallers;
        tally.callers = callers;
        if (!documentedCallers.includes(callers[0]!) && !documentedCallers.includes('public')) {
          failures.push(`${op.operationId}: its recipe calls as ${recipe.as}, which it does not document`);
          continue;
        }
        const samples = fc.sample(generatedParts(op, schemas), { seed: SEED + index, numRuns: RUNS });
        // A list's first request asks for pages of one, unfiltered, so that the next requests follow
        // its cursor.
        if (op.parameters.some((p) => p.name === 'cursor') && op.parameters.some((p) => p.name === 'limit'))
          samples[0]!.query = { limit: '1' };
        for (const [i, generated] of samples.entries()) {
          let prepared: Partial<Parts>;
          try {
            prepared = (await recipe.prepare?.(f)) ?? {};
          } catch (error) {
            failures.push(`${op.operationId}: its recipe's set-up failed: ${(error as Error).message}`);
            break;
          }
          const as = callers[i % callers.length]!;
          const problem = await send(op, as, generated, prepared, recipe, tally, validatorFor);
          if (problem) failures.push(`${op.operationId} (${op.method} ${op.path}): ${problem}`);
        }
        tally.ms = Date.now() - opStarted;
      }

      // The counts, per operation and in total.
      const total = { requests: 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
      for (const [id, tally] of tallies) {
        const statuses = [...tally.byStatus].sort(([a], [b]) => a.localeCompare(b));
        console.log(
          `contract: ${id}: ${tally.requests} requests as ${tally.callers.join(' and ')} in ${tally.ms} ms` +
            `${tally.pages ? ` (${tally.pages} of them next pages)` : ''}: ` +
            statuses.map(([k, n]) => `${k} x${n}`).join(', '),
        );
        total.requests += tally.requests;
        for (const [k, n] of statuses) total[`${k[0]}xx` as '2xx'] += n;
      }
      console.log(
        `contract: ${operations.length} operations, ${total.requests} requests in ${((Date.now() - started) / 1000).toFixed(0)} s: ` +
          `2xx ${total['2xx']}, 3xx ${total['3xx']}, 4xx ${total['4xx']}, 5xx ${total['5xx']}`,
      );

      const reached = (id: string) =>
        [...(tallies.get(id)?.byStatus.keys() ?? [])].some((k) => k.startsWith('2'));
      const excused = (id: string) =>
        RECIPES[id]?.no2xx ?? (RECIPES[id]?.faces && !engine ? 'no face models here' : undefined);
      for (const op of operations) {
        const reason = excused(op.operationId);
        if (reason) console.log(`contract: ${op.operationId} is not expected to answer 2xx: ${reason}`);
        else if (!reached(op.operationId)) failures.push(`${op.operationId} never answered 2xx`);
        if (RECIPES[op.operationId]?.no2xx && reached(op.operationId))
          failures.push(
            `${op.operationId} answered 2xx although its recipe says it cannot: update the recipe`,
          );
      }
      expect(failures, failures.join('\n\n')).toEqual([]);
    },
    15 * 60_000,
  );

  async function send(
    op: Operation,
    as: Caller,
    generated: Generated,
    prepared: Partial<Parts>,
    recipe: Recipe,
    tally: Tally,
    validatorFor: ReturnType<typeof responseValidators>,
  ): Promise<string | undefined> {
    const pathParams = op.parameters.filter((p) => p.in === 'path');
    const params: Record<string, string> = {};
    for (const p of pathParams) {
      const value = prepared.params?.[p.name] ?? f.params[fixtureKey(op.path, p.name)];
      if (value === undefined)
        return `no fixture for the path parameter ${p.name} (${fixtureKey(op.path, p.name)})`;
      params[p.name] = value;
    }
    const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => percentEncode(params[name]!));
    // The page after the last one answered, with the query that answered it; else a generated query.
    const pageQuery = tally.nextPage ?? {
      ...(recipe.query ? recipe.query(generated.query) : generated.query),
      ...prepared.query,
    };
    if (tally.nextPage) tally.pages++;
    tally.nextPage = undefined;
    const query = new URLSearchParams(pageQuery).toString();
    let body: string | undefined;
    const headers: Record<string, string> = {
      ...f.credentials[as],
      'x-forwarded-for': generated.forwardedFor,
      ...prepared.headers,
    };
    if (prepared.raw) {
      body = prepared.raw.text;
      headers['content-type'] = prepared.raw.type;
    } else if (generated.body !== undefined || prepared.body) {
      const base = (generated.body ?? {}) as Record<string, unknown>;
      body = JSON.stringify({ ...(recipe.body ? recipe.body(base, f) : base), ...prepared.body });
      headers['content-type'] = 'application/json';
    }
    const url = `${path}${query ? `?${query}` : ''}`;
    const describe = () => `\nrequest: ${op.method} ${url} as ${as} body=${body?.slice(0, 400) ?? '(none)'}`;

    tally.requests++;
    const crashesBefore = server.crashes.length;
    let res: Response;
    try {
      res = await fetch(t.url + url, {
        method: op.method,
        headers,
        ...(body !== undefined ? { body } : {}),
        redirect: 'manual',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      return `no answer: ${(error as Error).message}${describe()}`;
    }
    const { type, text } = await readAnswer(res);
    let code: string | undefined;
    if (res.status >= 400) {
      try {
        code = (JSON.parse(text) as { code?: string }).code;
      } catch {
        code = undefined;
      }
    }
    const key = code ? `${res.status} ${code}` : String(res.status);
    tally.byStatus.set(key, (tally.byStatus.get(key) ?? 0) + 1);
    if (VERBOSE && res.status >= 300)
      console.log(`contract: ${op.operationId} ${res.status}: ${text.slice(0, 500)}${describe()}`);
    await new Promise((resolve) => setImmediate(resolve));
    if (server.crashes.length > crashesBefore)
      return `uncaught exception in the server: ${server.crashes.at(-1)?.stack?.slice(0, 600)}${describe()}`;

    if (res.status >= 500) {
      // Without the face models the face operations answer 503 as documented (checked below).
      const engineDown = !engine && res.status === 503 && recipe.faces;
      if (!engineDown) {
        const logged = server.errors.get(res.headers.get('x-request-id') ?? '') ?? '(no log line)';
        return `${res.status} ${text.slice(0, 300)}\nserver: ${logged}${describe()}`;
      }
    }
    const documented = op.responses[String(res.status)];
    if (!documented)
      return `answered ${res.status}, which it does not document: ${text.slice(0, 300)}${describe()}`;
    // Errors are problem+json; a probe documents a 503 with a body of its own.
    if (res.status >= 400 && documented.content?.['application/problem+json']) {
      if (type !== 'application/problem+json')
        return `${res.status} as "${type}", not problem+json${describe()}`;
      if (!code || !documentedCodes(op, res.status).has(code))
        return `${res.status} with code ${code}, which it does not document for ${res.status} (${[...documentedCodes(op, res.status)].join(', ')}): ${text.slice(0, 300)}${describe()}`;
      return undefined;
    }
    const media = documented.content ?? {};
    if (Object.keys(media).length === 0) {
      if (text.length > 0 && res.status !== 303)
        return `${res.status} with a body although it documents none${describe()}`;
      return undefined;
    }
    const range = Object.keys(media).find(
      (m) => m === type || (m.endsWith('/*') && type.startsWith(m.slice(0, -1))),
    );
    if (!range)
      return `${res.status} as "${type}", documented: ${Object.keys(media).join(', ')}${describe()}`;
    const schema = media[range]!.schema;
    if (type === 'application/json' && schema) {
      const validate = validatorFor(op, res.status, schema);
      const parsed = JSON.parse(text) as { nextCursor?: unknown };
      if (!validate(parsed))
        return `${res.status} body breaks its documented schema: ${JSON.stringify(validate.errors?.slice(0, 5))}\nbody: ${text.slice(0, 400)}${describe()}`;
      if (typeof parsed.nextCursor === 'string' && op.parameters.some((p) => p.name === 'cursor'))
        tally.nextPage = { ...pageQuery, cursor: parsed.nextCursor };
    }
    return undefined;
  }
});
