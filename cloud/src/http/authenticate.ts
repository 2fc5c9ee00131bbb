// The one authentication middleware: resolves every request into `res.locals.actor`. It does not
// decide access; routes do, from their declared `auth` kinds.
import type { RequestHandler } from 'express';
import { Environment, ENVIRONMENT_HEADER } from '@portico/contract';
import { safeEqual } from '../infra/crypto.js';
import type { Actor, ActorOf, CredentialVerifier } from './actor.js';
import { AppError, invalidFields } from './errors.js';

interface AuthOptions {
  /** The current value, or `current,previous` while devices are being moved to a new one. */
  internalSecret: string;
  verifier: CredentialVerifier;
  /** Resolves a device token (`x-device-token`, sent with the secret) into its device and tenant. */
  verifyDevice(token: string): Promise<ActorOf<'device'>>;
  /** The sandbox tenant of a live tenant, made on first use (modules/sandbox). */
  sandboxOf(liveTenantId: string): Promise<string>;
}

export function authenticate(options: AuthOptions): RequestHandler {
  return async (req, res, next) => {
    res.locals.actor = await resolveActor(req.headers, options);
    next();
  };
}

async function resolveActor(
  headers: Record<string, string | string[] | undefined>,
  options: AuthOptions,
): Promise<Actor> {
  const deviceSecret = headers['x-internal-secret'];
  const authorization = headers.authorization;
  if (typeof deviceSecret === 'string') {
    if (authorization)
      throw new AppError(400, 'validation_failed', 'Send either a bearer token or x-internal-secret');
    // Every accepted value is compared, so the time taken says nothing about which one matched.
    const accepted = options.internalSecret.split(',').map((s) => s.trim());
    const matches = accepted.map((secret) => secret.length > 0 && safeEqual(deviceSecret, secret));
    if (!matches.includes(true)) throw new AppError(403, 'forbidden', 'Invalid x-internal-secret');
    const deviceToken = headers['x-device-token'];
    if (typeof deviceToken !== 'string' || deviceToken.length === 0) {
      throw new AppError(
        401,
        'unauthorized',
        'Send the device token as x-device-token with x-internal-secret',
      );
    }
    return options.verifyDevice(deviceToken);
  }
  if (typeof authorization !== 'string') return { kind: 'public' };
  const match = /^Bearer\s+(\S+)$/i.exec(authorization);
  if (!match) throw new AppError(401, 'unauthorized', 'Authorization must be "Bearer <token>"');
  const token = match[1]!;
  // JWTs have three dot-separated parts; API keys have none.
  const actor =
    token.split('.').length === 3
      ? await options.verifier.verifyJwt(token)
      : await options.verifier.verifyApiKey(token);
  return actor.kind === 'portal' ? actor : inEnvironment(actor, headers[ENVIRONMENT_HEADER], options);
}

/**
 * Sandbox calls act on the live tenant's sandbox, a tenant of its own: an API key by its environment
 * (`pk_test_`), an admin session by the `x-portico-environment` switch. A key sent with a switch that
 * names the other environment is refused rather than silently acting where the caller did not mean to.
 */
async function inEnvironment(
  actor: ActorOf<'adminSession' | 'apiKey'>,
  header: string | string[] | undefined,
  options: AuthOptions,
): Promise<ActorOf<'adminSession' | 'apiKey'>> {
  const asked = header === undefined ? undefined : Environment.safeParse(header);
  if (asked && !asked.success) {
    throw invalidFields([{ path: `headers.${ENVIRONMENT_HEADER}`, message: 'must be "live" or "sandbox"' }]);
  }
  const environment = actor.kind === 'apiKey' ? actor.environment : (asked?.data ?? 'live');
  if (asked && asked.data !== environment) {
    throw invalidFields([
      {
        path: `headers.${ENVIRONMENT_HEADER}`,
        message: `this is a ${environment} API key: use a ${asked.data === 'sandbox' ? 'pk_test_' : 'pk_live_'} key`,
      },
    ]);
  }
  if (environment === 'live') return actor;
  return { ...actor, environment, tenantId: await options.sandboxOf(actor.liveTenantId) };
}
