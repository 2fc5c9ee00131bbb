// The fetch every SDK call goes through: adds the credentials and the SDK's user agent, gives every POST
// an `Idempotency-Key` (the same on each retry, so the service does the work once), renews an expired
// admin session once, and retries what is safe to retry after the wait the service asked for
// (`Retry-After`) or, without one, after an exponential backoff with jitter: 429 and 503 (nothing was
// done), and connection failures, time-outs and other 5xx for requests that may be repeated (GET, PUT,
// DELETE, and POST with its key). openapi-fetch builds the requests on top of it.
import { PorticoConnectionError, PorticoTimeoutError, retryAfterMs } from './errors.js';
import { VERSION } from './version.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 3); 0 turns retrying off. */
  maxRetries?: number;
  /** Backoff without `Retry-After`: base * 2^attempt, with full jitter, capped (defaults 500 ms, 8 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** A `Retry-After` longer than this is not waited for: the 429/503 is thrown at once (default 60 s). */
  maxRetryAfterMs?: number;
  /** Each attempt is aborted after this long (default 60 s); the caller's own signal aborts it too. */
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 60_000;
export const IDEMPOTENCY_HEADER = 'idempotency-key';

export interface TransportDeps {
  fetch: typeof globalThis.fetch;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  /** A new `Idempotency-Key` (default `crypto.randomUUID()`). */
  newKey?: () => string;
}

/** Where the transport reads the credentials of each request (they change on login and refresh). */
export interface CredentialSource {
  /** Headers to add to a request to `url`: Authorization, a device's secret and token, the refresh cookie. */
  headers(url: string): Record<string, string>;
  /** Renews the session after a 401; true when a new access token is ready. */
  renew?(): Promise<boolean>;
  /** Sees every answer of the auth routes (to keep the refresh cookie they set). */
  observe?(url: string, response: Response): void;
}

/** Answers that say the request was not carried out: any method may be sent again. */
const NOT_DONE = new Set([429, 503]);
/** Answers after which the request may or may not have been done: only a repeatable request is resent. */
const MAYBE_DONE = new Set([500, 502, 504]);
const REPEATABLE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** `portico-sdk-typescript/0.1.0 node/20.19.0` (browsers keep their own User-Agent). */
const nodeVersion = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node;
export const USER_AGENT = `portico-sdk-typescript/${VERSION}${nodeVersion ? ` node/${nodeVersion}` : ''}`;
const inBrowser = () => typeof (globalThis as { document?: unknown }).document !== 'undefined';

export function createTransport(
  credentials: CredentialSource,
  retry: RetryOptions,
  deps: TransportDeps,
): (input: Request) => Promise<Response> {
  const maxRetries = retry.maxRetries ?? 3;
  const base = retry.baseDelayMs ?? 500;
  const cap = retry.maxDelayMs ?? 8_000;
  const maxRetryAfter = retry.maxRetryAfterMs ?? 60_000;
  const timeoutMs = retry.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const newKey = deps.newKey ?? (() => crypto.randomUUID());

  const send = async (request: Request): Promise<Response> => {
    // A clone per attempt: a request body can be read once.
    const attempt = new Request(request.clone(), { signal: abortAfter(request.signal, timeoutMs) });
    for (const [name, value] of Object.entries(credentials.headers(attempt.url))) {
      if (!attempt.headers.has(name)) attempt.headers.set(name, value);
    }
    if (!inBrowser() && !attempt.headers.has('user-agent')) attempt.headers.set('user-agent', USER_AGENT);
    let response: Response;
    try {
      response = await deps.fetch(attempt);
    } catch (error) {
      // The caller's own abort is theirs to handle; a time-out and a failed connection are the SDK's.
      if (request.signal.aborted) throw error;
      if ((error as Error)?.name === 'TimeoutError' || attempt.signal.aborted) {
        throw new PorticoTimeoutError(request.method, request.url, timeoutMs, error);
      }
      throw new PorticoConnectionError(request.method, request.url, error);
    }
    credentials.observe?.(attempt.url, response);
    return response;
  };

  return async (request: Request) => {
    // One key for every attempt of this POST (a caller's own key is kept): a retry is then safe.
    if (request.method === 'POST' && !request.headers.has(IDEMPOTENCY_HEADER)) {
      request.headers.set(IDEMPOTENCY_HEADER, newKey());
    }
    const repeatable = REPEATABLE_METHODS.has(request.method) || request.headers.has(IDEMPOTENCY_HEADER);
    let renewed = false;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await send(request);
      } catch (error) {
        const failed = error instanceof PorticoConnectionError || error instanceof PorticoTimeoutError;
        if (!failed || !repeatable || attempt >= maxRetries) throw error;
        await deps.sleep(backoff(attempt));
        continue;
      }
      if (response.status === 401 && !renewed && credentials.renew && !isSessionRoute(request.url)) {
        renewed = true;
        if (await credentials.renew()) {
          // The refused answer is dropped: free its connection before sending again.
          await response.body?.cancel();
          response = await send(request);
        }
      }
      if (!retryable(response, repeatable) || attempt >= maxRetries) return response;
      const asked = retryAfterMs(response.headers.get('retry-after'));
      if (asked !== undefined && asked > maxRetryAfter) return response;
      // The answer is dropped: free its connection before waiting.
      await response.body?.cancel();
      await deps.sleep(asked ?? backoff(attempt));
    }
  };

  function backoff(attempt: number): number {
    return Math.round(deps.random() * Math.min(cap, base * 2 ** attempt));
  }
}

function retryable(response: Response, repeatable: boolean): boolean {
  if (NOT_DONE.has(response.status)) return true;
  // The first request with this key still runs (409 `idempotency_key_in_use`): its answer comes soon.
  if (response.status === 409 && repeatable && response.headers.has('retry-after')) return true;
  return repeatable && MAYBE_DONE.has(response.status);
}

/**
 * The caller's signal or a timeout, whichever aborts first. Not `AbortSignal.any`: Node 20 holds its
 * sources weakly, so once the garbage collector has run, a timeout signal that nothing listens to is
 * gone and never fires (an attempt the peer never answers then waits for ever). Listening to the
 * timeout keeps it alive until it fires.
 */
function abortAfter(signal: AbortSignal, ms: number): AbortSignal {
  const controller = new AbortController();
  for (const source of [signal, AbortSignal.timeout(ms)]) {
    if (source.aborted) controller.abort(source.reason);
    else source.addEventListener('abort', () => controller.abort(source.reason), { once: true });
  }
  return controller.signal;
}

const SESSION_ROUTES = new Set([
  '/v1/auth/login',
  '/v1/auth/refresh',
  '/v1/auth/logout',
  '/v1/auth/mfa/verify',
]);

/** Login, refresh, logout and MFA carry their own credentials: a 401 there is the answer, not a stale token. */
export const isSessionRoute = (url: string) => SESSION_ROUTES.has(new URL(url).pathname);

/** Where the service reads and sets the refresh cookie (its `Path`). */
export const inCookiePath = (url: string) => new URL(url).pathname.startsWith('/v1/auth/');
