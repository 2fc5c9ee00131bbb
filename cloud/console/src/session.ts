// The admin's session: the SDK's typed client holding the access token, renewed from the httpOnly
// refresh cookie on a 401 (one renewal for every call that met it: the refresh token is single-use).
// Every call goes through it, the admin routes, the CSV export, the stream and images included.
import type { ConsoleLanguage, Environment } from '@portico/contract';
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

/** The console's language goes along: the service mails this user in it. */
export async function signIn(
  email: string,
  password: string,
  language: ConsoleLanguage,
): Promise<SignInStep> {
  const answer = ok(await porticoOf().api.POST('/v1/auth/login', { body: { email, password, language } }));
  if ('mfaRequired' in answer) return { kind: 'mfa', ticket: answer.mfaTicket };
  return { kind: 'signed-in', session: await finish(porticoOf(answer.accessToken)) };
}

/** The second step with a TOTP code, or with a recovery code in its place (a lost authenticator). */
export async function verifyMfa(
  ticket: string,
  proof: { code: string } | { recoveryCode: string },
): Promise<Session> {
  const answer = ok(
    await porticoOf().api.POST('/v1/auth/mfa/verify', { body: { mfaTicket: ticket, ...proof } }),
  );
  if (!('accessToken' in answer)) throw new Error('The service did not start a session');
  return finish(porticoOf(answer.accessToken));
}

/** Asks for a reset link (the service answers the same for any address). */
export async function forgotPassword(email: string, language: ConsoleLanguage): Promise<void> {
  ok(await porticoOf().api.POST('/v1/auth/password/forgot', { body: { email, language } }));
}

/** Sets the password with a reset link's token; every session of the account ends. */
export async function resetPassword(token: string, password: string): Promise<void> {
  ok(await porticoOf().api.POST('/v1/auth/password/reset', { body: { token, password } }));
}

/** After a reload: a new access token from the refresh cookie, if the browser still holds one. */
export async function resume(): Promise<Session | null> {
  const res = await fetch(`${base()}/v1/auth/refresh`, { method: 'POST', credentials: 'same-origin' });
  if (!res.ok) return null;
  const { accessToken } = (await res.json()) as Schemas['TokenResponse'];
  return finish(porticoOf(accessToken));
}
