// Session and portal JWTs: HS256 only (pinned on verify), issuer `portico`, and an audience plus a
// `type` claim that keep an admin token and a portal token from ever standing in for each other.
import { errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { ACCESS_TOKEN_TTL_SECONDS } from '@portico/contract';
import { AppError } from '../../http/errors.js';

export const JWT_ISSUER = 'portico';
export const ADMIN_AUDIENCE = 'admin';
export const PORTAL_AUDIENCE = 'person_portal';
const ALGORITHM = 'HS256';

export interface AdminClaims {
  type: typeof ADMIN_AUDIENCE;
  sub: string;
  tid: string;
  role: string;
  /** Refresh-token family: the login session this token belongs to. */
  sid: string;
}

export interface PortalClaims {
  type: typeof PORTAL_AUDIENCE;
  sub: string;
  /** Portal session id. */
  sid: string;
  jti: string;
}

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

export function signAdminToken(
  key: Uint8Array,
  claims: Omit<AdminClaims, 'type'>,
  now: Date,
): Promise<string> {
  return new SignJWT({ type: ADMIN_AUDIENCE, tid: claims.tid, role: claims.role, sid: claims.sid })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setIssuer(JWT_ISSUER)
    .setAudience(ADMIN_AUDIENCE)
    .setSubject(claims.sub)
    .setIssuedAt(seconds(now))
    .setExpirationTime(seconds(now) + ACCESS_TOKEN_TTL_SECONDS)
    .sign(key);
}

/** For the person portal's magic-link flow (issued by the portal module). */
export function signPortalToken(
  key: Uint8Array,
  claims: Omit<PortalClaims, 'type'>,
  now: Date,
  ttlSeconds: number,
): Promise<string> {
  return new SignJWT({ type: PORTAL_AUDIENCE, sid: claims.sid })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setIssuer(JWT_ISSUER)
    .setAudience(PORTAL_AUDIENCE)
    .setSubject(claims.sub)
    .setJti(claims.jti)
    .setIssuedAt(seconds(now))
    .setExpirationTime(seconds(now) + ttlSeconds)
    .sign(key);
}

/** Signature, algorithm, issuer, audience, expiry and claim shapes; 401 `token_expired` / `invalid_token`. */
export async function verifyToken(
  key: Uint8Array,
  token: string,
  now: Date,
): Promise<AdminClaims | PortalClaims> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, key, {
      algorithms: [ALGORITHM],
      issuer: JWT_ISSUER,
      audience: [ADMIN_AUDIENCE, PORTAL_AUDIENCE],
      currentDate: now,
      requiredClaims: ['exp', 'sub', 'iat'],
    }));
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired)
      throw new AppError(401, 'token_expired', 'The access token has expired');
    throw invalidToken();
  }
  const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);
  if (aud.length !== 1) throw invalidToken();
  if (payload.type === ADMIN_AUDIENCE && aud[0] === ADMIN_AUDIENCE) {
    const [sub, tid, role, sid] = [str(payload.sub), str(payload.tid), str(payload.role), str(payload.sid)];
    if (sub && tid && role && sid) return { type: ADMIN_AUDIENCE, sub, tid, role, sid };
  }
  if (payload.type === PORTAL_AUDIENCE && aud[0] === PORTAL_AUDIENCE) {
    const [sub, sid, jti] = [str(payload.sub), str(payload.sid), str(payload.jti)];
    if (sub && sid && jti) return { type: PORTAL_AUDIENCE, sub, sid, jti };
  }
  throw invalidToken();
}

export const invalidToken = (message = 'The bearer token is not valid') =>
  new AppError(401, 'invalid_token', message);
