// Tenant credentials for the message bus. A client connects with its tenant's id as username and, as
// password, either a bus token (a short-lived JWT `GET /v1/admin/bus` hands to a signed-in user, for a
// browser) or an API key holding the `bus:subscribe` scope (for integrators' servers). Either binds the
// connection to that one tenant; the broker does the rest (infra/bus.ts).
import { jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../../infra/clock.js';
import type { BusGrant, TenantAuthenticator } from '../../infra/bus.js';
import type { Database } from '../../infra/db/index.js';
import { authenticateApiKey } from '../applications/keys.js';
import { JWT_ISSUER } from '../auth/tokens.js';

/** Audience and `type` of a bus token: never accepted as a session or portal token, nor they as one. */
const BUS_AUDIENCE = 'bus';
const ALGORITHM = 'HS256';
export const BUS_TOKEN_TTL_SECONDS = 15 * 60;

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** A bus token for `tenantId`, valid BUS_TOKEN_TTL_SECONDS from `now`; the broker closes its connection then. */
export async function signBusToken(
  key: Uint8Array,
  tenantId: string,
  now: Date,
): Promise<{ token: string; expiresAt: Date }> {
  const exp = seconds(now) + BUS_TOKEN_TTL_SECONDS;
  const token = await new SignJWT({ type: BUS_AUDIENCE })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setIssuer(JWT_ISSUER)
    .setAudience(BUS_AUDIENCE)
    .setSubject(tenantId)
    .setIssuedAt(seconds(now))
    .setExpirationTime(exp)
    .sign(key);
  return { token, expiresAt: new Date(exp * 1000) };
}

async function verifyBusToken(key: Uint8Array, token: string, now: Date): Promise<BusGrant | undefined> {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: [ALGORITHM],
      issuer: JWT_ISSUER,
      audience: BUS_AUDIENCE,
      currentDate: now,
      requiredClaims: ['exp', 'sub'],
    });
    if (payload.type !== BUS_AUDIENCE || typeof payload.sub !== 'string') return undefined;
    return { tenantId: payload.sub, expiresAt: new Date(payload.exp! * 1000) };
  } catch {
    return undefined;
  }
}

/**
 * Resolves a client's username (a tenant id) and password (a bus token or an API key with `bus:subscribe`)
 * into the tenant it may read; anything else, a mismatched username included, is refused.
 */
export function createBusAuthenticator(deps: {
  db: Database;
  clock: Clock;
  jwtKey: Uint8Array;
}): TenantAuthenticator {
  const activeTenant = async (id: string) =>
    (await deps.db.prisma.tenant.findUnique({ where: { id }, select: { status: true } }))?.status ===
    'active';
  return async (username, password) => {
    if (password.startsWith('pk_')) {
      const actor = await authenticateApiKey(deps, password).catch(() => undefined);
      if (!actor || !actor.scopes.includes('bus:subscribe')) return undefined;
      // A sandbox (pk_test_) key reads its sandbox tenant's topics, a live key the live tenant's.
      const tenantId =
        actor.environment === 'sandbox'
          ? (await deps.db.prisma.tenant.findFirst({ where: { sandboxOfId: actor.liveTenantId } }))?.id
          : actor.liveTenantId;
      return tenantId === username ? { tenantId } : undefined;
    }
    const grant = await verifyBusToken(deps.jwtKey, password, deps.clock.now());
    if (!grant || grant.tenantId !== username || !(await activeTenant(grant.tenantId))) return undefined;
    return grant;
  };
}
