// A route of the local API is declared once, as the cloud's are (cloud/src/http/route.ts): path, who
// may call it, its contract schemas and its handler, whose input is inferred from the schemas and whose
// answer is checked against the response schema by the compiler. The same declaration validates the
// request (api.ts) and documents the route at /docs-json.
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { AgentProblem as Problem, z } from '@portico/contract';

type Schema = z.ZodType;
type Infer<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteInput<P = unknown, Q = unknown, B = unknown> {
  params: Infer<P>;
  query: Infer<Q>;
  body: Infer<B>;
  staffToken: string | undefined;
  /** The caller is on this machine. */
  local: boolean;
}

export interface RouteDef<P = unknown, Q = unknown, B = unknown, R extends Schema = Schema> {
  method: 'get' | 'post' | 'delete';
  /** OpenAPI style: `/events/{token}/qr`. */
  path: string;
  summary: string;
  description?: string;
  /** Staff routes: callers on this machine only, and (but for opening one) a staff session. */
  staff?: 'open' | 'session';
  /** The success status: 200 unless said. */
  status?: 202;
  /** Admits or refuses someone: refused while the cloud refuses this device (403 `device_not_authorised`). */
  decides?: true;
  params?: P;
  query?: Q;
  body?: B;
  response: R;
  handler(input: RouteInput<P, Q, B>): Promise<z.output<R>>;
}

/** A declared route with its types erased, as the server holds them in one list. */
export interface Route extends Omit<RouteDef, 'params' | 'query' | 'body' | 'handler'> {
  params?: Schema;
  query?: Schema;
  body?: Schema;
  handler(input: RouteInput<Schema, Schema, Schema>): Promise<unknown>;
}

/** Identity function that lets TypeScript infer a route's input and answer from its schemas. */
export function defineRoute<
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
  R extends Schema = Schema,
>(def: RouteDef<P, Q, B, R>): Route {
  return def as unknown as Route;
}

export const STAFF_HEADER = 'x-staff-session';

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: Problem } },
});

/** The route's OpenAPI entry: its request, its answer, and the problems any route of its kind can answer. */
export function toOpenApi(r: Route): RouteConfig {
  return {
    method: r.method,
    path: r.path,
    summary: r.summary,
    ...(r.description && { description: r.description }),
    request: {
      ...(r.params && { params: r.params as never }),
      ...(r.query && { query: r.query as never }),
      ...(r.staff === 'session' && {
        headers: z.object({
          [STAFF_HEADER]: z.string().openapi({ description: 'The staff session token.' }),
        }),
      }),
      ...(r.body && { body: { content: { 'application/json': { schema: r.body } } } }),
    },
    responses: {
      [r.status ?? 200]: {
        description: r.status === 202 ? 'Accepted' : 'OK',
        content: { 'application/json': { schema: r.response } },
      },
      400: problem(
        '`validation_failed` (`errors` lists the fields), `invalid_nonce`, `no_frames`, `ambiguous_frames`, `malformed_json`',
      ),
      404: problem('`unknown_event`, `unknown_guest`, `unknown_attempt`, `not_found`'),
      403: problem(
        '`origin_not_allowed`: sent from a web page of another origin' +
          (r.decides
            ? '; `device_not_authorised`: the cloud refuses this device (revoked, or a wrong secret: `/status` `unauthorized` says which)'
            : ''),
      ),
      415: problem('`unsupported_media_type`: a body not sent as `application/json`'),
      421: problem('`host_not_allowed`: a Host header not on the allow-list (`AGENT_ALLOWED_HOSTS`)'),
      ...(r.staff && {
        401: problem('`wrong_pin`, `staff_session_required`'),
        403: problem(
          '`local_only`: the caller is not on this machine; `origin_not_allowed`: sent from a web page of another origin',
        ),
        429: problem('`staff_locked`: too many wrong PINs (`Retry-After`)'),
      }),
      409: problem('`replica_too_old`: face admission stopped; `too_many_frames`; `step_up_used`'),
      ...(r.path.startsWith('/step-up') && { 410: problem('`step_up_expired`') }),
      422: problem(
        'the face engine refused the frame (`no_face_detected`, …); `face_retake`: too poor to judge ' +
          '(`reasons`, `quality`)',
      ),
      500: problem('`internal_error`: logged by the agent with the `requestId`, never returned'),
      503: problem('`replica_empty`, `engine_unavailable`, `no_camera`'),
    },
  };
}

/** The path's parameters when `pathname` is a path of `pattern` (`/events/{token}/qr`), else null. */
export function match(pattern: string, pathname: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = pathname.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    if (w.startsWith('{')) params[w.slice(1, -1)] = decodeURIComponent(got[i]!);
    else if (w !== got[i]) return null;
  }
  return params;
}
