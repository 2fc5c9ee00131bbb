// The bearer-credential verifier the authentication middleware uses: session JWTs (checked against
// their login session, so logout and theft detection end them at once), portal JWTs and API keys.
import { TENANT_SETTINGS_DEFAULTS } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { CredentialVerifier } from '../../http/actor.js';
import type { PrismaClient } from '../../infra/db/index.js';
import { authenticateApiKey } from '../applications/keys.js';
import { invalidToken, verifyToken } from './tokens.js';

/** The login session (refresh family) behind an admin token while it lasts: not revoked, not expired. */
export function liveAdminSession(
  prisma: PrismaClient,
  session: { sessionId: string; userId: string },
  now: Date,
) {
  return prisma.refreshSession.findFirst({
    where: { familyId: session.sessionId, userId: session.userId, revokedAt: null, expiresAt: { gt: now } },
    select: { tenantId: true },
  });
}

/**
 * The same read as `liveAdminSession`, also saying whether the user is held at the MFA setup: an owner
 * or admin without MFA in a tenant whose setting `requireMfaForAdmins` is on. One statement.
 */
async function adminSessionState(
  prisma: PrismaClient,
  session: { sessionId: string; userId: string; role: string },
  now: Date,
): Promise<{ tenantId: string; mfaSetupRequired: boolean } | null> {
  const rows = await prisma.$queryRaw<{ tenantId: string; mfaEnabled: boolean; required: boolean }[]>`
    SELECT rs.tenant_id AS "tenantId", u.mfa_enabled AS "mfaEnabled",
           COALESCE((t.settings->>'requireMfaForAdmins')::boolean, ${TENANT_SETTINGS_DEFAULTS.requireMfaForAdmins})
             AS "required"
    FROM refresh_sessions rs
    JOIN users u ON u.id = rs.user_id
    JOIN tenants t ON t.id = rs.tenant_id
    WHERE rs.family_id = ${session.sessionId} AND rs.user_id = ${session.userId}
      AND rs.revoked_at IS NULL AND rs.expires_at > ${now}
    LIMIT 1`;
  const row = rows[0];
  if (!row) return null;
  const manager = session.role === 'owner' || session.role === 'admin';
  return { tenantId: row.tenantId, mfaSetupRequired: manager && row.required && !row.mfaEnabled };
}

/** A portal session's `lastSeenAt` is written at most this often (it is shown in the session list). */
const PORTAL_SEEN_EVERY_MS = 60_000;

export function createCredentialVerifier(
  deps: Pick<AppDeps, 'db' | 'clock' | 'secrets'>,
): CredentialVerifier {
  const { prisma } = deps.db;
  return {
    async verifyJwt(token) {
      const now = deps.clock.now();
      const claims = await verifyToken(deps.secrets.jwtKey, token, now);
      if (claims.type === 'admin') {
        // One indexed read per admin call: a revoked family (logout, reuse detected) stops its access
        // tokens now rather than when they expire. The tenant is the session's: a token whose claim
        // names another tenant was not issued by this service's login and is refused.
        const live = await adminSessionState(
          prisma,
          { sessionId: claims.sid, userId: claims.sub, role: claims.role },
          now,
        );
        if (!live) throw invalidToken('The session of this token has ended');
        if (live.tenantId !== claims.tid) throw invalidToken('The token does not match its session');
        return {
          kind: 'adminSession',
          tenantId: live.tenantId,
          liveTenantId: live.tenantId,
          environment: 'live',
          userId: claims.sub,
          role: claims.role,
          sessionId: claims.sid,
          ...(live.mfaSetupRequired ? { mfaSetupRequired: true } : {}),
        };
      }
      const session = await prisma.portalSession.findUnique({ where: { tokenId: claims.jti } });
      if (!session || session.accountId !== claims.sub || session.revokedAt || session.expiresAt <= now) {
        throw invalidToken('The portal session of this token has ended');
      }
      if (now.getTime() - session.lastSeenAt.getTime() > PORTAL_SEEN_EVERY_MS) {
        await prisma.portalSession.update({ where: { id: session.id }, data: { lastSeenAt: now } });
      }
      return { kind: 'portal', accountId: claims.sub, sessionId: session.id };
    },
    verifyApiKey: (key) => authenticateApiKey(deps, key),
  };
}
