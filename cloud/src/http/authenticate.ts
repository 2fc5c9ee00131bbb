// The one authentication middleware: resolves every request into `res.locals.actor`. It does not
// decide access; routes do, from their declared `auth` kinds.
import type { RequestHandler } from 'express';
import { safeEqual } from '../infra/crypto.js';
import type { Actor, CredentialVerifier } from './actor.js';
import { AppError } from './errors.js';

export function authenticate(options: {
  internalSecret: string;
  verifier: CredentialVerifier;
}): RequestHandler {
  return async (req, res, next) => {
    res.locals.actor = await resolveActor(req.headers, options);
    next();
  };
}

async function resolveActor(
  headers: Record<string, string | string[] | undefined>,
  options: { internalSecret: string; verifier: CredentialVerifier },
): Promise<Actor> {
  const deviceSecret = headers['x-internal-secret'];
  const authorization = headers.authorization;
  if (typeof deviceSecret === 'string') {
    if (authorization)
      throw new AppError(400, 'validation_failed', 'Send either a bearer token or x-internal-secret');
    if (!safeEqual(deviceSecret, options.internalSecret)) {
      throw new AppError(401, 'unauthorized', 'Invalid x-internal-secret');
    }
    return { kind: 'device', tenantId: null };
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
