// The bearer-credential verifier the authentication middleware uses: session JWTs (checked against
// their login session, so logout and theft detection end them at once), portal JWTs and API keys.
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
        const live = await liveAdminSession(prisma, { sessionId: claims.sid, userId: claims.sub }, now);
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
