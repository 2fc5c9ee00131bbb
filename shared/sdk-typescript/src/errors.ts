// Every error the service answers is problem+json (RFC 9457) with a stable `code`; the SDK surfaces it
// as one error class so callers branch on `code`, never on message text.
import type { components } from './generated/openapi.js';

export type Problem = components['schemas']['Problem'];
export type ErrorCode = Problem['code'];

export class PorticoError extends Error {
  override readonly name = 'PorticoError';
  readonly status: number;
  /** Stable snake_case code from the documented list (`ErrorCode`). */
  readonly code: ErrorCode;
  readonly problem: Problem;
  /** Seconds the service asked to wait (429 and 503 answers), when it said. */
  readonly retryAfter: number | undefined;

  constructor(problem: Problem, retryAfter?: number) {
    super(problem.detail ? `${problem.title}: ${problem.detail}` : problem.title);
    this.status = problem.status;
    this.code = problem.code;
    this.problem = problem;
    this.retryAfter = retryAfter;
  }

  get requestId(): string | undefined {
    return this.problem.requestId;
  }
}

/** An answer that is not problem+json (a proxy's HTML page, a cut connection): no `code` to give. */
export class PorticoHttpError extends Error {
  override readonly name = 'PorticoHttpError';
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`HTTP ${status}${body ? `: ${body.slice(0, 200)}` : ''}`);
  }
}

/** No answer: the connection failed or dropped (after the SDK's retries, when the request could be repeated). */
export class PorticoConnectionError extends Error {
  override readonly name = 'PorticoConnectionError';
  constructor(
    readonly method: string,
    readonly url: string,
    cause: unknown,
  ) {
    super(`${method} ${url}: connection failed (${(cause as Error)?.message ?? String(cause)})`, { cause });
  }
}

/** No answer within `retry.timeoutMs` (default 60 s), after the SDK's retries when it could repeat the request. */
export class PorticoTimeoutError extends Error {
  override readonly name = 'PorticoTimeoutError';
  constructor(
    readonly method: string,
    readonly url: string,
    readonly timeoutMs: number,
    cause: unknown,
  ) {
    super(`${method} ${url}: no answer within ${timeoutMs} ms (timeout)`, { cause });
  }
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

interface Result<D> {
  data?: D;
  error?: unknown;
  response: Response;
}

/**
 * The data of an openapi-fetch result, or the service's problem thrown as a `PorticoError`:
 * `const person = ok(await portico.api.POST('/v1/persons', { body }))`.
 */
export function ok<R extends Result<unknown>>(result: R): Exclude<R['data'], undefined> {
  if (result.response.ok) return result.data as Exclude<R['data'], undefined>;
  throw errorOf(result.response, result.error);
}

export function errorOf(response: Response, body: unknown): Error {
  const after = retryAfterMs(response.headers.get('retry-after'));
  if (isProblem(body)) return new PorticoError(body, after === undefined ? undefined : after / 1000);
  return new PorticoHttpError(response.status, typeof body === 'string' ? body : JSON.stringify(body ?? ''));
}

function isProblem(body: unknown): body is Problem {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as Problem).code === 'string' &&
    typeof (body as Problem).status === 'number' &&
    typeof (body as Problem).title === 'string'
  );
}
