// The Portico client: the generated, typed openapi-fetch client (`api`) over the SDK's transport,
// with the credentials of an integrator (API key), of an admin (a session renewed from its refresh
// cookie when the 15-minute access token runs out) or of an edge device (secret and device token).
import type { Environment } from './generated/events.js';
import createClient, { type Client } from 'openapi-fetch';
import { ok } from './errors.js';
import type { components, paths } from './generated/openapi.js';
import { createResources, type Resources } from './generated/resources.js';
import { createCaller } from './resource-call.js';
import { createTransport, inCookiePath, type CredentialSource, type RetryOptions } from './transport.js';

export type Schemas = components['schemas'];
export type TokenResponse = Schemas['TokenResponse'];
export type MfaChallenge = Schemas['MfaChallenge'];

const REFRESH_COOKIE = 'portico_refresh';

export interface PorticoOptions {
  /** e.g. `https://portico.example.com` (no trailing path). */
  baseUrl: string;
  /** An application's `pk_live_…` / `pk_test_…` key. */
  apiKey?: string;
  /** An admin access token already held (otherwise `login`). */
  accessToken?: string;
  /**
   * `sandbox`: an admin session acts on the tenant's sandbox (sent as `x-portico-environment`). A
   * `pk_test_` key acts on it by itself; naming the other environment than a key's is refused (400).
   */
  environment?: Environment;
  /** An edge device: the platform's `x-internal-secret` and the device's own `x-device-token`. */
  device?: { internalSecret: string; token: string };
  /** Sent with every request, whatever the credential (a call's own `headers` come after). */
  headers?: Record<string, string>;
  retry?: RetryOptions;
  /** Defaults: the global fetch, setTimeout, Math.random (tests and custom runtimes replace them). */
  fetch?: typeof globalThis.fetch;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/**
 * The API's resources (`persons`, `enrollment`, `checkin`, `events`, `guests`, `applications`,
 * `tenants`, `checkins`, `webhooks`), generated from the OpenAPI document like Python's, and underneath
 * them every operation by its path (`api`).
 */
export interface Portico extends Resources {
  /** Every documented operation, typed from the OpenAPI document: `api.GET('/v1/persons', …)`. */
  api: Client<paths>;
  /** Admin login. With MFA on, answers the challenge: finish with `verifyMfa`. */
  login(email: string, password: string): Promise<TokenResponse | MfaChallenge>;
  verifyMfa(mfaTicket: string, code: string): Promise<void>;
  /** Renews the access token from the refresh cookie now (the SDK also does it on a 401). */
  refresh(): Promise<void>;
  logout(): Promise<void>;
  /** The current admin access token, if any. */
  readonly accessToken: string | undefined;
}

export function createPortico(options: PorticoOptions): Portico {
  const session: { loggedIn: boolean; accessToken?: string | undefined; refreshToken?: string | undefined } =
    {
      loggedIn: options.accessToken !== undefined,
      accessToken: options.accessToken,
    };
  let renewing: Promise<boolean> | undefined;

  const credentials: CredentialSource = {
    headers(url) {
      const headers: Record<string, string> = { ...options.headers };
      const token = session.accessToken ?? options.apiKey;
      if (token) {
        headers.authorization = `Bearer ${token}`;
        if (options.environment) headers['x-portico-environment'] = options.environment;
      } else if (options.device) {
        headers['x-internal-secret'] = options.device.internalSecret;
        headers['x-device-token'] = options.device.token;
      }
      if (inCookiePath(url) && session.refreshToken)
        headers.cookie = `${REFRESH_COOKIE}=${session.refreshToken}`;
      return headers;
    },
    async renew() {
      // Only an admin session renews (an API key's 401 is final); in a browser the cookie is invisible.
      if (!session.loggedIn || (!session.refreshToken && !inBrowser())) return false;
      // One refresh for every call that met the 401 together: the refresh token is single-use.
      renewing ??= refreshSession().finally(() => (renewing = undefined));
      return renewing;
    },
    observe(url, response) {
      if (!inCookiePath(url)) return;
      // Node reads Set-Cookie; a browser hides it and keeps the httpOnly cookie itself.
      for (const line of response.headers.getSetCookie?.() ?? []) {
        const m = new RegExp(`^${REFRESH_COOKIE}=([^;]*)`).exec(line);
        if (m) session.refreshToken = m[1] || undefined;
      }
    },
  };

  const transport = createTransport(credentials, options.retry ?? {}, {
    fetch: options.fetch ?? ((input) => globalThis.fetch(input)),
    sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    random: options.random ?? Math.random,
  });
  const api = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: transport,
    // Lets a browser send and keep the refresh cookie (scoped to /v1/auth on the service's origin).
    credentials: 'include',
  });

  async function refreshSession(): Promise<boolean> {
    const result = await api.POST('/v1/auth/refresh');
    if (!result.response.ok || !result.data) {
      session.accessToken = undefined;
      return false;
    }
    session.accessToken = result.data.accessToken;
    return true;
  }

  return {
    ...createResources(createCaller(api)),
    api,
    get accessToken() {
      return session.accessToken;
    },
    async login(email, password) {
      const answer = ok(await api.POST('/v1/auth/login', { body: { email, password } }));
      if ('accessToken' in answer)
        Object.assign(session, { loggedIn: true, accessToken: answer.accessToken });
      return answer;
    },
    async verifyMfa(mfaTicket, code) {
      const answer = ok(await api.POST('/v1/auth/mfa/verify', { body: { mfaTicket, code } }));
      if ('accessToken' in answer && typeof answer.accessToken === 'string') {
        Object.assign(session, { loggedIn: true, accessToken: answer.accessToken });
      }
    },
    async refresh() {
      if (!(await refreshSession())) throw new Error('The session could not be renewed: log in again');
    },
    async logout() {
      ok(await api.POST('/v1/auth/logout'));
      Object.assign(session, { loggedIn: false, accessToken: undefined, refreshToken: undefined });
    },
  };
}

const inBrowser = () => typeof (globalThis as { document?: unknown }).document !== 'undefined';
