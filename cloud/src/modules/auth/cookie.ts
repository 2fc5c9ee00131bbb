// The refresh cookie: httpOnly, SameSite=Strict, scoped to `/v1/auth` (refresh and logout), `Secure`
// everywhere except development and test (plain-http localhost).
import { REFRESH_COOKIE_NAME } from '@portico/contract';
import type { Request } from 'express';
import { AppError } from '../../http/errors.js';

export const REFRESH_COOKIE_PATH = '/v1/auth';

export function refreshCookie(token: string, expiresAt: Date, now: Date, secure: boolean): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - now.getTime()) / 1000));
  return [
    `${REFRESH_COOKIE_NAME}=${token}`,
    `Path=${REFRESH_COOKIE_PATH}`,
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${maxAge}`,
    `Expires=${expiresAt.toUTCString()}`,
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

export function clearedRefreshCookie(secure: boolean): string {
  return [
    `${REFRESH_COOKIE_NAME}=`,
    `Path=${REFRESH_COOKIE_PATH}`,
    'HttpOnly',
    'SameSite=Strict',
    'Max-Age=0',
    'Expires=Thu, 01 Jan 1970 00:00:00 GMT',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

/** The refresh token from a `Cookie` header, if any. */
export function readRefreshCookie(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === REFRESH_COOKIE_NAME) {
      const value = part.slice(eq + 1).trim();
      return value.length > 0 ? value : undefined;
    }
  }
  return undefined;
}

/**
 * Routes that act on the refresh cookie take browser requests only from this service's own pages: an
 * `Origin` other than the public URL's (or the request's own host), `Origin: null`, or
 * `Sec-Fetch-Site: cross-site` is 403 `forbidden` before the cookie is read. Callers that send neither
 * header (scripts, the SDK) are not browsers and carry no ambient cookie, so they pass.
 */
export function requireOwnOrigin(req: Request, publicUrl: string): void {
  const origin = req.headers.origin;
  const own = new Set([new URL(publicUrl).origin]);
  const host = req.headers.host;
  if (host) own.add(`${req.protocol}://${host}`.toLowerCase());
  const crossSite = req.headers['sec-fetch-site'] === 'cross-site';
  if ((origin !== undefined && !own.has(origin.toLowerCase())) || crossSite) {
    throw new AppError(403, 'forbidden', 'This call is taken only from the service’s own pages (Origin)');
  }
}
