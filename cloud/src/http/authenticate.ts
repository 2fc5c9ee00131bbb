// The one authentication middleware: resolves every request into `res.locals.actor`. It does not
// decide access; routes do, from their declared `auth` kinds.
import type { RequestHandler } from 'express';
import { safeEqual } from '../infra/crypto.js';
import type { Actor, ActorOf, CredentialVerifier } from './actor.js';
import { AppError } from './errors.js';

interface AuthOptions {
  /** The current value, or `current,previous` while devices are being moved to a new one. */
  internalSecret: string;
  verifier: CredentialVerifier;
  /** Resolves a device token (`x-device-token`, sent with the secret) into its device and tenant. */
  verifyDevice(token: string): Promise<ActorOf<'device'>>;
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
  return token.split('.').length === 3
    ? options.verifier.verifyJwt(token)
    : options.verifier.verifyApiKey(token);
}
