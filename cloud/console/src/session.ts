// The admin's session: the SDK's typed client holding the access token, renewed from the httpOnly
// refresh cookie on a 401 (one renewal for every call that met it: the refresh token is single-use).
// Every call goes through it, the admin routes, the CSV export, the stream and images included.
import type { Environment } from '@portico/contract';
import { createPortico, ok, type Portico, type Schemas } from '@portico/sdk';

export type Me = Schemas['UserProfile'];

export interface Session {
  portico: Portico;
  api: Portico['api'];
  me: Me;
  /** `sandbox`: every call acts on the tenant's sandbox (the SDK sends the switch header). */
  environment: Environment;
}

export type SignInStep = { kind: 'signed-in'; session: Session } | { kind: 'mfa'; ticket: string };

const base = () => location.origin;

let expired: () => void = () => undefined;

/** `then` runs when the service refuses to renew the session (it ran out, or was ended elsewhere). */
export function onSessionExpired(then: () => void): void {
  expired = then;
}

/** The SDK's client on this origin; a refused renewal (401 from the refresh route) ends the session here. */
function porticoOf(accessToken?: string, environment: Environment = 'live'): Portico {
  return createPortico({
    baseUrl: base(),
    ...(accessToken ? { accessToken } : {}),
    ...(environment === 'sandbox' ? { environment } : {}),
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      if (res.status === 401 && new URL(res.url).pathname === '/v1/auth/refresh') expired();
      return res;
    },
  });
}

async function finish(portico: Portico): Promise<Session> {
  return { portico, api: portico.api, me: ok(await portico.api.GET('/v1/auth/me')), environment: 'live' };
}

/** The same session acting on the tenant's live data or on its sandbox. */
export function inEnvironment(session: Session, environment: Environment): Session {
  const portico = porticoOf(session.portico.accessToken, environment);
  return { ...session, portico, api: portico.api, environment };
}

export async function signIn(email: string, password: string): Promise<SignInStep> {
  const portico = porticoOf();
  const answer = await portico.login(email, password);
  if ('mfaRequired' in answer) return { kind: 'mfa', ticket: answer.mfaTicket };
  return { kind: 'signed-in', session: await finish(portico) };
}

export async function verifyMfa(ticket: string, code: string): Promise<Session> {
  const portico = porticoOf();
  await portico.verifyMfa(ticket, code);
  return finish(portico);
}

/** After a reload: a new access token from the refresh cookie, if the browser still holds one. */
export async function resume(): Promise<Session | null> {
  const res = await fetch(`${base()}/v1/auth/refresh`, { method: 'POST', credentials: 'same-origin' });
  if (!res.ok) return null;
  const { accessToken } = (await res.json()) as Schemas['TokenResponse'];
  return finish(porticoOf(accessToken));
}
