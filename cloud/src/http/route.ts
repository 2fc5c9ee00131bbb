// A route is declared once: path, who may call it, its contract schemas and its handler. The same
// declaration mounts the Express handler (with validation) and documents the route in OpenAPI.
import type { Request, RequestHandler, Response, Router } from 'express';
import type { OpenAPIRegistry, RouteConfig, ZodContentObject } from '@asteasolutions/zod-to-openapi';
import { z, API_SCOPES, Problem, ROLE_SCOPES, type ApiScope, type ErrorCode } from '@portico/contract';
import type { Actor, ActorKind, ActorOf } from './actor.js';
import { AppError, invalidFields, type FieldError } from './errors.js';
import { isMultipart } from './upload.js';

type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';
type Schema = z.ZodType;
type Infer<S> = S extends z.ZodType ? z.infer<S> : undefined;

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Named examples of a body (e.g. one per member of a union). */
type Examples = Record<string, { summary: string; value: unknown }>;
type RequestType = 'application/json' | 'multipart/form-data';

export interface ResponseDoc {
  description: string;
  schema?: Schema;
  contentType?: string;
  examples?: Examples;
}

export interface RouteDef<
  K extends ActorKind = ActorKind,
  P = unknown,
  Q = unknown,
  B = unknown,
  U extends Schema | undefined = Schema | undefined,
> {
  method: Method;
  /** OpenAPI style: `/v1/persons/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** Caller kinds accepted; anyone else gets 401 (no credentials) or 403 (wrong kind). */
  auth: readonly K[];
  /**
   * What the caller must hold: an API key this scope (else 403 `insufficient_scope`), a tenant user a
   * role that grants it (`ROLE_SCOPES`, else 403 `forbidden`). A route that takes API keys, not the
   * public, and names no scope needs a key with every scope: a narrowed key reaches only what was
   * thought through for it.
   */
  scope?: ApiScope;
  /**
   * Open to an admin session held at the MFA setup (tenant setting `requireMfaForAdmins`); every other
   * route answers such a session 403 `mfa_setup_required`.
   */
  duringMfaSetup?: true;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * A file upload, documented as multipart/form-data; the handler reads `req`. Alone, it replaces the
   * JSON body; beside `body`, the route takes either, and `body` is undefined when a file was sent.
   */
  upload?: U;
  /** Named examples of the request body, by media type. */
  requestExamples?: Partial<Record<RequestType, Examples>>;
  /** Success responses by status. Error responses are documented from `errors` and the route's shape. */
  responses: Record<number, ResponseDoc>;
  /** Error codes this route can answer with beyond the ones implied by auth and validation. */
  errors?: readonly { status: number; code: ErrorCode; description: string }[];
  handler(input: {
    params: Infer<P>;
    query: Infer<Q>;
    /** Undefined when the route also takes an upload and a file was sent. */
    body: U extends Schema ? Infer<B> | undefined : Infer<B>;
    actor: ActorOf<K>;
    req: Request;
    res: Response;
  }): Promise<RouteResult | void>;
}

/** For routes anyone may call, authenticated or not (probes, public pages). */
export const ANY_CALLER = ['public', 'apiKey', 'adminSession', 'portal', 'device'] as const;

/** Identity function that lets TypeScript infer the schemas and the actor kinds of a route. */
export function defineRoute<
  const K extends ActorKind,
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
  U extends Schema | undefined = undefined,
>(def: RouteDef<K, P, Q, B, U>): RouteDef {
  return def as unknown as RouteDef;
}

/** Keys and paths are caller text: cut them, so an error never echoes a huge key back. */
const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

export function toFieldErrors(error: z.ZodError, where: string): FieldError[] {
  return error.issues.map((issue) => ({
    path: cut([where, ...issue.path.map(String)].join('.'), 200),
    message: issue.code === 'unrecognized_keys' ? unknownKeys(issue.keys) : issue.message,
  }));
}

/** One message per object, naming the first few unknown keys only (zod's own names them all). */
function unknownKeys(keys: readonly string[]): string {
  const named = keys.slice(0, 5).map((k) => JSON.stringify(cut(k, 40)));
  const more = keys.length - named.length;
  return `unknown key${keys.length > 1 ? 's' : ''} ${named.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

// A route that declares no query takes none.
const NO_QUERY = z.strictObject({}).transform(() => undefined);

/**
 * Query strings are read strictly: an unknown parameter (a typo, `q[]`, `q[$ne]`) is a 400, never
 * silently ignored.
 */
function strictQuery(schema: unknown): Schema {
  if (schema === undefined) return NO_QUERY;
  return schema instanceof z.ZodObject ? schema.strict() : (schema as Schema);
}

function parse(schema: unknown, value: unknown, where: string): unknown {
  if (!schema) return undefined;
  const result = (schema as Schema).safeParse(value);
  if (!result.success) {
    throw invalidFields(toFieldErrors(result.error, where));
  }
  return result.data;
}

export interface MountOptions {
  /** Resolves the caller into `res.locals.actor`; runs once the route has matched. */
  authenticate: RequestHandler;
  /** Parses the JSON body; runs after authentication, so an anonymous caller cannot make us parse. */
  parseBody: RequestHandler;
  /** Check every response body against its documented schema (on outside production). */
  checkResponses: boolean;
  /** Replays the stored answer of a POST's `Idempotency-Key` (http/idempotency.ts); runs after the body. */
  idempotency?: RequestHandler;
}

export function mountRoute(
  router: Router,
  registry: OpenAPIRegistry,
  def: RouteDef,
  options: MountOptions,
): void {
  const expressPath = def.path.replace(/\{(\w+)\}/g, ':$1');
  const query = strictQuery(def.query);
  // A route only the public may call reads no credentials: a stale Authorization header sent along (a
  // client refreshing its expired access token) must not turn it into a 401.
  const before = isPublicOnly(def) ? [options.parseBody] : [options.authenticate, options.parseBody];
  if (takesIdempotencyKey(def) && options.idempotency) {
    const idempotency = options.idempotency;
    // An upload's stream is read by its handler, so it cannot be hashed: a key is kept for JSON bodies only.
    before.push(
      def.upload
        ? (req, res, next) => (isMultipart(req) ? next() : idempotency(req, res, next))
        : idempotency,
    );
  }
  router[def.method](expressPath, ...before, async (req: Request, res: Response) => {
    res.locals.actor ??= { kind: 'public' };
    const actor = res.locals.actor as { kind: ActorKind };
    if (!def.auth.includes(actor.kind)) {
      // A device or portal route called with other credentials lacks its own: unauthenticated, not
      // forbidden (an admin's or integrator's credentials mean nothing there).
      const own = def.auth.length === 1 ? OWN_CREDENTIALS[def.auth[0]!] : undefined;
      throw actor.kind === 'public' || own
        ? new AppError(401, 'unauthorized', own?.message ?? 'Authentication required', {
            headers: { 'WWW-Authenticate': own?.challenge ?? 'Bearer' },
          })
        : new AppError(
            403,
            'forbidden',
            `This route does not accept ${describeActor(actor.kind)} credentials`,
          );
    }
    if ((actor as Actor).kind === 'adminSession' && (actor as ActorOf<'adminSession'>).mfaSetupRequired) {
      if (!def.duringMfaSetup) {
        throw new AppError(
          403,
          'mfa_setup_required',
          'This tenant requires MFA of owners and admins: set it up first (POST /v1/auth/mfa/setup, then /enable)',
        );
      }
    }
    checkScope(def, actor as Actor);
    const uploaded = def.upload !== undefined && isMultipart(req);
    // A body schema that accepts nothing (`.optional()`) lets a client send no body at all.
    if (def.body && !uploaded && !req.is('application/json') && !(isBodyless(req) && bodyIsOptional(def))) {
      throw new AppError(
        415,
        'unsupported_media_type',
        def.upload
          ? 'Send the body as application/json, or the file as multipart/form-data (field `file`)'
          : 'Send the body as application/json',
      );
    }
    const input = {
      params: parse(def.params, req.params, 'params'),
      query: parse(query, req.query, 'query'),
      body: uploaded ? undefined : parse(def.body, req.body, 'body'),
      actor,
      req,
      res,
    };
    const result = await def.handler(input as never);
    if (!result || res.headersSent) return;
    for (const [k, v] of Object.entries(result.headers ?? {})) res.setHeader(k, v);
    if (options.checkResponses) checkResponse(def, result);
    if (result.body === undefined) res.status(result.status).end();
    else res.status(result.status).json(result.body);
  });
  registry.registerPath(toOpenApi(def));
}

/** Caller kinds with credentials of their own: any other credentials on their routes are a 401. */
const OWN_CREDENTIALS: Partial<Record<ActorKind, { message: string; challenge: string }>> = {
  device: {
    message: 'This route takes device credentials: x-internal-secret and x-device-token',
    challenge: 'x-internal-secret',
  },
  portal: {
    message:
      'This route takes a portal session: sign in with the link e-mailed by /v1/portal/auth/magic-link',
    challenge: 'Bearer realm="portal"',
  },
};

function checkScope(def: RouteDef, actor: Actor): void {
  if (actor.kind === 'apiKey') {
    const needed: readonly ApiScope[] = def.scope
      ? [def.scope]
      : def.auth.includes('public' as never)
        ? []
        : API_SCOPES;
    const missing = needed.filter((scope) => !actor.scopes.includes(scope));
    if (missing.length > 0) {
      throw new AppError(403, 'insufficient_scope', `This API key lacks the scope ${missing.join(', ')}`, {
        extra: { missingScopes: missing },
      });
    }
  } else if (actor.kind === 'adminSession' && def.scope) {
    const granted: readonly ApiScope[] = ROLE_SCOPES[actor.role as keyof typeof ROLE_SCOPES] ?? [];
    if (!granted.includes(def.scope)) {
      throw new AppError(403, 'forbidden', `The ${actor.role} role may not do this (it needs ${def.scope})`);
    }
  }
}

/** POSTs with a JSON body or none (an upload's stream is read by its handler, so it is not hashed). */
const takesIdempotencyKey = (def: RouteDef) =>
  def.method === 'post' && (!def.upload || def.body !== undefined);

const IdempotencyHeaders = z.object({
  'Idempotency-Key': z
    .string()
    .min(1)
    .max(255)
    .optional()
    .openapi({
      description:
        'Any unique string (the SDKs send a UUID): the first answer to this key is kept for 24 h for this ' +
        'credential, and a retry with the same key, path and body gets it back (with `Idempotent-Replayed: ' +
        'true`) instead of doing the work twice. 5xx, 401, 403, 408 and 429 answers are not kept.',
      example: '5f1d7c1e-8a3b-4c56-9d2e-3b1f0a7c9e41',
    }),
});

function isBodyless(req: Request): boolean {
  return (
    req.headers['content-type'] === undefined &&
    req.headers['transfer-encoding'] === undefined &&
    Number(req.headers['content-length'] ?? 0) === 0
  );
}

function bodyIsOptional(def: RouteDef): boolean {
  return (def.body as Schema | undefined)?.safeParse(undefined).success ?? false;
}

function isPublicOnly(def: RouteDef): boolean {
  return def.auth.length === 1 && def.auth[0] === 'public';
}

function describeActor(kind: ActorKind): string {
  return {
    adminSession: 'admin session',
    apiKey: 'API key',
    portal: 'person portal',
    device: 'device',
    public: 'public',
  }[kind];
}

function checkResponse(def: RouteDef, result: RouteResult): void {
  const doc = def.responses[result.status];
  if (!doc) throw new Error(`${def.operationId} answered ${result.status}, which it does not document`);
  if (doc.schema && (doc.contentType ?? 'application/json') === 'application/json') {
    const parsed = doc.schema.safeParse(result.body);
    if (!parsed.success) {
      throw new Error(`${def.operationId} ${result.status} body breaks its schema: ${parsed.error.message}`);
    }
  }
}

const SECURITY: Record<Exclude<ActorKind, 'public'>, Record<string, string[]>> = {
  adminSession: { adminSession: [] },
  apiKey: { apiKey: [] },
  portal: { portalJwt: [] },
  device: { internalSecret: [], deviceToken: [] },
};

function problemResponse(description: string) {
  return { description, content: { 'application/problem+json': { schema: Problem } } };
}

function toOpenApi(def: RouteDef): RouteConfig {
  const responses: RouteConfig['responses'] = {};
  for (const [status, doc] of Object.entries(def.responses)) {
    responses[status] = doc.schema
      ? {
          description: doc.description,
          content: {
            [doc.contentType ?? 'application/json']: {
              schema: doc.schema,
              ...(doc.examples && { examples: doc.examples }),
            },
          },
        }
      : { description: doc.description };
  }
  const errors = new Map<number, string[]>();
  const addError = (status: number, text: string) =>
    errors.set(status, [...(errors.get(status) ?? []), text]);
  // Every route reads its query string strictly, so any route can answer this one.
  addError(
    400,
    def.params || def.query || def.body
      ? '`validation_failed`: a field is missing or wrong, or the query has an unknown parameter'
      : '`validation_failed`: the query has a parameter (this route takes none)',
  );
  if (def.body) {
    addError(400, '`malformed_json`: the body is not JSON');
    addError(413, '`payload_too_large`: the body is over the limit');
    addError(
      415,
      def.upload
        ? '`unsupported_media_type`: the body is neither application/json nor multipart/form-data'
        : '`unsupported_media_type`: the body is not application/json',
    );
  }
  if (!def.auth.includes('public' as never)) {
    addError(
      401,
      '`unauthorized` / `invalid_token` / `token_expired` / `invalid_api_key`: missing or bad credentials',
    );
    if (!(def.auth.length === 1 && OWN_CREDENTIALS[def.auth[0]!])) {
      addError(403, '`forbidden`: these credentials may not call this route');
    }
  } else if (!isPublicOnly(def)) {
    // A route that also takes the public still checks the credentials it is sent.
    addError(
      401,
      '`unauthorized` / `invalid_token` / `token_expired` / `invalid_api_key`: credentials were sent and are bad (without any, the call is the public’s)',
    );
  }
  // Every route that reads credentials refuses a wrong device secret (authenticate.ts).
  if (!isPublicOnly(def)) addError(403, '`forbidden`: a wrong `x-internal-secret`');
  if (def.auth.includes('apiKey' as never) && (def.scope || !def.auth.includes('public' as never))) {
    addError(
      403,
      `\`insufficient_scope\`: the API key lacks ${def.scope ? `the scope \`${def.scope}\`` : 'one of the scopes (this route needs them all)'}`,
    );
  }
  if (def.scope && def.auth.includes('adminSession' as never)) {
    addError(403, `\`forbidden\`: the user's role does not grant \`${def.scope}\``);
  }
  if (def.auth.includes('adminSession' as never) && !def.duringMfaSetup) {
    addError(
      403,
      '`mfa_setup_required`: the tenant requires MFA of owners and admins (`requireMfaForAdmins`) and this user has not set it up',
    );
  }
  if (takesIdempotencyKey(def)) {
    addError(
      409,
      '`idempotency_key_in_use`: a request with this `Idempotency-Key` is still running (retry after `Retry-After`)',
    );
    addError(409, '`idempotency_key_reused`: this `Idempotency-Key` was used with another path or body');
  }
  for (const e of def.errors ?? []) addError(e.status, `\`${e.code}\`: ${e.description}`);
  addError(500, '`internal_error`: details are logged, never returned');
  for (const [status, texts] of errors) responses[String(status)] = problemResponse(texts.join('; '));

  const kinds = def.auth.filter((k): k is Exclude<ActorKind, 'public'> => k !== 'public');
  const request: RouteConfig['request'] = {};
  if (def.params) request.params = def.params as never;
  if (def.query) request.query = def.query as never;
  if (takesIdempotencyKey(def)) request.headers = IdempotencyHeaders;
  const content: ZodContentObject = {};
  const examples = (type: RequestType) =>
    def.requestExamples?.[type] && { examples: def.requestExamples[type] };
  if (def.body) content['application/json'] = { schema: def.body as Schema, ...examples('application/json') };
  if (def.upload) content['multipart/form-data'] = { schema: def.upload, ...examples('multipart/form-data') };
  if (def.body || def.upload)
    request.body = { required: def.upload !== undefined || !bodyIsOptional(def), content };
  return {
    method: def.method,
    path: def.path,
    operationId: def.operationId,
    summary: def.summary,
    ...(def.description ? { description: def.description } : {}),
    tags: [def.tag],
    security: def.auth.includes('public' as never)
      ? []
      : kinds.map((k) => (k === 'apiKey' && def.scope ? { apiKey: [def.scope] } : SECURITY[k])),
    request,
    responses,
  };
}
