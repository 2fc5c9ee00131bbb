// The fetch every SDK call goes through: adds the credentials, renews an expired admin session once,
// and retries 429 and 503 answers after the wait the service asked for (`Retry-After`) or, without
// one, after an exponential backoff with jitter. openapi-fetch builds the requests on top of it.
import { retryAfterMs } from './errors.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 3); 0 turns retrying off. */
  maxRetries?: number;
  /** Backoff without `Retry-After`: base * 2^attempt, with full jitter, capped (defaults 500 ms, 8 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** A `Retry-After` longer than this is not waited for: the 429/503 is thrown at once (default 60 s). */
  maxRetryAfterMs?: number;
  /** Each attempt is aborted after this long (default: no limit but the caller's own signal). */
  timeoutMs?: number;
}

export interface TransportDeps {
  fetch: typeof globalThis.fetch;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
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

const RETRYABLE = new Set([429, 503]);

export function createTransport(
  credentials: CredentialSource,
  retry: RetryOptions,
  deps: TransportDeps,
): (input: Request) => Promise<Response> {
  const maxRetries = retry.maxRetries ?? 3;
  const base = retry.baseDelayMs ?? 500;
  const cap = retry.maxDelayMs ?? 8_000;
  const maxRetryAfter = retry.maxRetryAfterMs ?? 60_000;

  const send = async (request: Request): Promise<Response> => {
    // A clone per attempt: a request body can be read once.
    let attempt = request.clone();
    for (const [name, value] of Object.entries(credentials.headers(attempt.url))) {
      if (!attempt.headers.has(name)) attempt.headers.set(name, value);
    }
    if (retry.timeoutMs !== undefined) {
      attempt = new Request(attempt, { signal: abortAfter(request.signal, retry.timeoutMs) });
    }
    const response = await deps.fetch(attempt);
    credentials.observe?.(attempt.url, response);
    return response;
  };

  return async (request: Request) => {
    let renewed = false;
    for (let attempt = 0; ; attempt++) {
      let response = await send(request);
      if (response.status === 401 && !renewed && credentials.renew && !isSessionRoute(request.url)) {
        renewed = true;
        if (await credentials.renew()) {
          // The refused answer is dropped: free its connection before sending again.
          await response.body?.cancel();
          response = await send(request);
        }
      }
      if (!RETRYABLE.has(response.status) || attempt >= maxRetries) return response;
      const asked = retryAfterMs(response.headers.get('retry-after'));
      if (asked !== undefined && asked > maxRetryAfter) return response;
      const wait = asked ?? Math.round(deps.random() * Math.min(cap, base * 2 ** attempt));
      // The answer is dropped: free its connection before waiting.
      await response.body?.cancel();
      await deps.sleep(wait);
    }
  };
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
