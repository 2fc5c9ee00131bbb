// The invitee's side of a team invitation: the mailed link is read (whose team, which role), then
// accepted with a name and a password, which signs the new member in. A link is looked up by the
// SHA-256 of its token (the token itself is never stored, compared or logged) and claimed by a
// conditional update, so it works once even when sent twice at the same moment.
import type { UserRole } from '@portico/contract';
import type { TeamInvitation, Tenant, User } from '../../generated/prisma/client.js';
import { AppError } from '../../http/errors.js';
import { createRateLimiter, type RateLimitRule } from '../../http/rate-limit.js';
import type { RequestMeta } from '../../http/request-context.js';
import { hashToken } from '../../infra/crypto.js';
import { recordAudit } from '../audit/record.js';
import { hashPassword } from '../auth/passwords.js';
import { createAuthService, type AuthDeps, type IssuedSession } from '../auth/service.js';
import type { Language } from './mails.js';

/** Reads and acceptances of invitation links per client address (guessing a token is hopeless anyway). */
export const ACCEPT_LIMIT: RateLimitRule = { limit: 30, windowMs: 15 * 60_000 };

const invalid = () =>
  new AppError(
    404,
    'invitation_invalid',
    'This invitation link is not valid: it was used, replaced or withdrawn',
  );
const expired = () =>
  new AppError(410, 'invitation_expired', 'This invitation link has expired: ask for a new one');

type Found = TeamInvitation & { user: User; tenant: Tenant };

export function createInvitationAcceptance(deps: AuthDeps) {
  const { prisma } = deps.db;
  const limiter = createRateLimiter(deps.db, deps.clock);
  const auth = createAuthService(deps, limiter);

  /** The link's invitation while it can still be accepted; 404 `invitation_invalid`, 410 `invitation_expired`. */
  async function usable(token: string, meta: RequestMeta): Promise<Found> {
    await limiter.enforce(`team:accept:ip:${meta.ip}`, ACCEPT_LIMIT, 'Too many invitation links tried');
    const found = await prisma.teamInvitation.findUnique({
      where: { tokenHash: hashToken(token) },
      include: { user: true, tenant: true },
    });
    if (!found || found.usedAt || found.revokedAt) throw invalid();
    if (found.user.status !== 'invited' || found.tenant.status !== 'active') throw invalid();
    if (found.expiresAt <= deps.clock.now()) throw expired();
    return found;
  }

  return {
    async preview(token: string, meta: RequestMeta) {
      const found = await usable(token, meta);
      return {
        email: found.user.email,
        role: found.user.role as UserRole,
        tenant: { name: found.tenant.name },
        expiresAt: found.expiresAt.toISOString(),
        language: found.language as Language,
      };
    },

    /**
     * Sets the name and password, spends the link and starts the member's first session (a login's:
     * when the tenant requires MFA of admins, that session first has to set it up).
     */
    async accept(
      input: { token: string; name: string; password: string },
      meta: RequestMeta,
    ): Promise<IssuedSession> {
      const found = await usable(input.token, meta);
      const passwordHash = await hashPassword(input.password);
      const now = deps.clock.now();
      return prisma.$transaction(async (tx) => {
        const claimed = await tx.teamInvitation.updateMany({
          where: { id: found.id, usedAt: null, revokedAt: null, expiresAt: { gt: now } },
          data: { usedAt: now },
        });
        const activated = await tx.user.updateMany({
          where: { id: found.userId, status: 'invited' },
          data: { name: input.name, passwordHash, status: 'active' },
        });
        if (claimed.count === 0 || activated.count === 0) throw invalid();
        await recordAudit(tx, {
          tenantId: found.tenantId,
          actorType: 'public',
          actorId: found.userId,
          action: 'team.invitation_accepted',
          targetType: 'user',
          targetId: found.userId,
          metadata: { role: found.user.role },
          ip: meta.ip,
          requestId: meta.requestId,
        });
        const user = await tx.user.findUniqueOrThrow({
          where: { id: found.userId },
          include: { tenant: true },
        });
        return auth.completeLogin(tx, user, meta, false);
      });
    },
  };
}
