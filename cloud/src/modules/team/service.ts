// The tenant's team: its users listed, invited by e-mail, their role changed, deactivated and
// reactivated, invitations resent. Owners and admins only (routes.ts); an admin never makes or changes
// an owner, the last active owner stays one, nobody deactivates themselves; every change is audited.
import {
  TEAM_INVITATION_TTL_DAYS,
  type AuditAction,
  type TeamMember,
  type TeamMemberStatus,
  type UserRole,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { Prisma, TeamInvitation, User } from '../../generated/prisma/client.js';
import { AppError, notFound } from '../../http/errors.js';
import { createRateLimiter, type RateLimitRule } from '../../http/rate-limit.js';
import { hashToken, randomToken } from '../../infra/crypto.js';
import { newId, type Tx } from '../../infra/db/index.js';
import { recordAudit } from '../audit/record.js';
import { enqueueMail } from '../privacy/jobs.js';
import { teamInvitationMail, type Language } from './mails.js';

export interface TeamContext {
  tenantId: string;
  userId: string;
  role: string;
  ip: string | null;
  requestId: string | null;
}

export type TeamDeps = Pick<
  AppDeps,
  'db' | 'clock' | 'config' | 'cipher' | 'outbox' | 'logger' | 'sessionEnds'
>;

const TTL_MS = TEAM_INVITATION_TTL_DAYS * 24 * 3600_000;
/** Invitation mails (invites and resends) per tenant, and resends per member. */
export const INVITE_LIMITS = {
  perTenant: { limit: 100, windowMs: 3600_000 } satisfies RateLimitRule,
  resendPerMember: { limit: 5, windowMs: 3600_000 } satisfies RateLimitRule,
};

/** The console's page that takes the mailed token (the fragment never reaches a server's log). */
export const invitationLink = (publicUrl: string, token: string) =>
  `${publicUrl}/console#/accept-invite?token=${encodeURIComponent(token)}`;

const ROLE_ORDER: Record<string, number> = { owner: 0, admin: 1, operator: 2 };

function toMember(user: User, pending: TeamInvitation | undefined, now: Date): TeamMember {
  const status = user.status as TeamMemberStatus;
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    role: user.role as UserRole,
    status,
    mfaEnabled: user.mfaEnabled,
    lastLoginAt: user.lastLoginAt?.toISOString() ?? null,
    createdAt: user.createdAt.toISOString(),
    invitation:
      status === 'invited' && pending
        ? {
            sentAt: pending.createdAt.toISOString(),
            expiresAt: pending.expiresAt.toISOString(),
            expired: pending.expiresAt <= now,
          }
        : null,
  };
}

const ownerOnly = () =>
  new AppError(403, 'owner_only', 'Only an owner may make, change or deactivate an owner');

export function createTeamService(deps: TeamDeps) {
  const { prisma } = deps.db;
  const limiter = createRateLimiter(deps.db, deps.clock);

  const audit = (
    tx: Pick<Tx, '$executeRaw'>,
    ctx: TeamContext,
    action: AuditAction,
    targetId: string,
    metadata: Prisma.InputJsonObject = {},
  ) =>
    recordAudit(tx, {
      tenantId: ctx.tenantId,
      actorType: 'adminSession',
      actorId: ctx.userId,
      action,
      targetType: 'user',
      targetId,
      metadata,
      ip: ctx.ip,
      requestId: ctx.requestId,
    });

  /** The newest link of an invited user that was neither used nor replaced. */
  const pendingOf = (tx: Pick<Tx, 'teamInvitation'>, userId: string) =>
    tx.teamInvitation.findFirst({
      where: { userId, usedAt: null, revokedAt: null },
      orderBy: { createdAt: 'desc' },
    });

  async function memberOf(tx: Pick<Tx, 'teamInvitation'>, user: User): Promise<TeamMember> {
    const pending = user.status === 'invited' ? await pendingOf(tx, user.id) : null;
    return toMember(user, pending ?? undefined, deps.clock.now());
  }

  /**
   * The member `id` of the caller's tenant, read under a lock on the tenant's row: team changes of one
   * tenant run one after the other, so two owners demoting each other cannot leave it without one.
   */
  async function lockedMember(tx: Tx, ctx: TeamContext, id: string): Promise<User> {
    await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${ctx.tenantId} FOR UPDATE`;
    const user = await tx.user.findFirst({ where: { id, tenantId: ctx.tenantId } });
    if (!user) throw notFound('Team member');
    return user;
  }

  /** An admin may not touch an owner, nor give the owner role. */
  function guardOwner(ctx: TeamContext, target: { role: string }, newRole?: string): void {
    if (ctx.role !== 'owner' && (target.role === 'owner' || newRole === 'owner')) throw ownerOnly();
  }

  /** 409 `last_owner` when `user` is the tenant's only active owner. */
  async function keepAnOwner(tx: Tx, user: User): Promise<void> {
    if (user.role !== 'owner' || user.status !== 'active') return;
    const others = await tx.user.count({
      where: { tenantId: user.tenantId, role: 'owner', status: 'active', id: { not: user.id } },
    });
    if (others === 0)
      throw new AppError(409, 'last_owner', 'This is the last active owner: make someone else owner first');
  }

  /** Ends every login of `userId` now: its refresh tokens, access tokens and pending MFA steps. */
  async function endSessions(tx: Tx, userId: string, reason: string, now: Date): Promise<number> {
    const ended = await tx.refreshSession.updateMany({
      where: { userId, revokedAt: null },
      data: { revokedAt: now, revokedReason: reason },
    });
    await tx.mfaTicket.updateMany({ where: { userId, usedAt: null }, data: { usedAt: now } });
    return ended.count;
  }

  /** A new link for `user` (the previous ones stop working); answers the clear token, once. */
  async function issueInvitation(tx: Tx, ctx: TeamContext, user: User, language: Language, now: Date) {
    await tx.teamInvitation.updateMany({
      where: { userId: user.id, usedAt: null, revokedAt: null },
      data: { revokedAt: now },
    });
    const token = randomToken('inv_');
    const row = await tx.teamInvitation.create({
      data: {
        id: newId(),
        tenantId: ctx.tenantId,
        userId: user.id,
        tokenHash: hashToken(token),
        language,
        invitedById: ctx.userId,
        expiresAt: new Date(now.getTime() + TTL_MS),
        createdAt: now,
      },
    });
    return { token, row };
  }

  /**
   * Queues the link's mail after the commit: the job runner sends it and retries a failed send, so a
   * mail server that is down (or refuses an address) never fails the invitation, which stays pending.
   */
  async function mailInvitation(
    ctx: TeamContext,
    user: User,
    issued: { token: string; row: TeamInvitation },
  ): Promise<void> {
    const [tenant, inviter] = await Promise.all([
      prisma.tenant.findUniqueOrThrow({ where: { id: ctx.tenantId } }),
      prisma.user.findUnique({ where: { id: ctx.userId } }),
    ]);
    await enqueueMail(
      prisma,
      deps,
      teamInvitationMail({
        to: user.email,
        language: issued.row.language as Language,
        tenantName: tenant.name,
        inviterName: inviter?.name || inviter?.email || tenant.name,
        role: user.role as UserRole,
        link: invitationLink(deps.config.publicUrl, issued.token),
        expiresAt: issued.row.expiresAt,
      }),
      deps.clock.now(),
    );
    deps.outbox.notify();
  }

  return {
    async list(ctx: TeamContext): Promise<{ items: TeamMember[] }> {
      const now = deps.clock.now();
      const users = await prisma.user.findMany({ where: { tenantId: ctx.tenantId } });
      const pending = await prisma.teamInvitation.findMany({
        where: { tenantId: ctx.tenantId, usedAt: null, revokedAt: null },
        orderBy: { createdAt: 'asc' },
      });
      const latest = new Map(pending.map((p) => [p.userId, p]));
      users.sort(
        (a, b) => (ROLE_ORDER[a.role] ?? 9) - (ROLE_ORDER[b.role] ?? 9) || a.email.localeCompare(b.email),
      );
      return { items: users.map((u) => toMember(u, latest.get(u.id), now)) };
    },

    async invite(
      ctx: TeamContext,
      input: { email: string; role: UserRole; language: Language },
    ): Promise<TeamMember> {
      if (input.role === 'owner' && ctx.role !== 'owner') throw ownerOnly();
      const email = input.email.trim().toLowerCase();
      const now = deps.clock.now();
      const taken = async () => {
        const existing = await prisma.user.findUnique({ where: { email }, select: { tenantId: true } });
        if (!existing) return null;
        return existing.tenantId === ctx.tenantId
          ? new AppError(409, 'already_member', 'This e-mail address is already a member of the team')
          : new AppError(409, 'email_in_use', 'This e-mail address already has an account elsewhere');
      };
      const before = await taken();
      if (before) throw before;
      await limiter.enforce(
        `team:invite:${ctx.tenantId}`,
        INVITE_LIMITS.perTenant,
        'Too many invitations sent',
      );
      let created: { user: User; issued: Awaited<ReturnType<typeof issueInvitation>> };
      try {
        created = await prisma.$transaction(async (tx) => {
          const user = await tx.user.create({
            data: {
              id: newId(),
              tenantId: ctx.tenantId,
              email,
              role: input.role,
              status: 'invited',
              passwordHash: null,
            },
          });
          const issued = await issueInvitation(tx, ctx, user, input.language, now);
          await audit(tx, ctx, 'team.member_invited', user.id, { email, role: input.role });
          return { user, issued };
        });
      } catch (error) {
        // Two invitations of one address at once: the unique e-mail lets one through.
        if ((error as { code?: string }).code === 'P2002') throw (await taken()) ?? error;
        throw error;
      }
      await mailInvitation(ctx, created.user, created.issued);
      return toMember(created.user, created.issued.row, now);
    },

    /** A role change ends the member's sessions, so the new role applies at once. */
    async changeRole(ctx: TeamContext, id: string, role: UserRole): Promise<TeamMember> {
      const now = deps.clock.now();
      const member = await prisma.$transaction(async (tx) => {
        const user = await lockedMember(tx, ctx, id);
        guardOwner(ctx, user, role);
        if (user.role === role) return memberOf(tx, user);
        if (role !== 'owner') await keepAnOwner(tx, user);
        const updated = await tx.user.update({ where: { id: user.id }, data: { role } });
        const endedSessions = await endSessions(tx, user.id, 'role_changed', now);
        await audit(tx, ctx, 'team.role_changed', user.id, { from: user.role, to: role, endedSessions });
        return memberOf(tx, updated);
      });
      deps.sessionEnds.ended(member.id);
      return member;
    },

    /** Ends the member's sessions and stops their sign-in (and a pending invitation's link). Idempotent. */
    async deactivate(ctx: TeamContext, id: string): Promise<TeamMember> {
      if (id === ctx.userId)
        throw new AppError(409, 'cannot_deactivate_self', 'You cannot deactivate your own account');
      const now = deps.clock.now();
      const member = await prisma.$transaction(async (tx) => {
        const user = await lockedMember(tx, ctx, id);
        guardOwner(ctx, user);
        if (user.status === 'deactivated') return memberOf(tx, user);
        await keepAnOwner(tx, user);
        const updated = await tx.user.update({
          where: { id: user.id },
          data: { status: 'deactivated', deactivatedAt: now },
        });
        const endedSessions = await endSessions(tx, user.id, 'deactivated', now);
        const revokedInvitations = await tx.teamInvitation.updateMany({
          where: { userId: user.id, usedAt: null, revokedAt: null },
          data: { revokedAt: now },
        });
        await audit(tx, ctx, 'team.member_deactivated', user.id, {
          previousStatus: user.status,
          endedSessions,
          revokedInvitations: revokedInvitations.count,
        });
        return memberOf(tx, updated);
      });
      deps.sessionEnds.ended(member.id);
      return member;
    },

    /** Back to `active`, or to `invited` for someone who never set a password (resend them a link). */
    async reactivate(ctx: TeamContext, id: string): Promise<TeamMember> {
      return prisma.$transaction(async (tx) => {
        const user = await lockedMember(tx, ctx, id);
        guardOwner(ctx, user);
        if (user.status !== 'deactivated') return memberOf(tx, user);
        const status = user.passwordHash ? 'active' : 'invited';
        const updated = await tx.user.update({
          where: { id: user.id },
          data: { status, deactivatedAt: null, failedLogins: 0, lockedUntil: null },
        });
        await audit(tx, ctx, 'team.member_reactivated', user.id, { status });
        return memberOf(tx, updated);
      });
    },

    /** A new link for an invited member; the previous link stops working. */
    async resend(ctx: TeamContext, id: string, language: Language | undefined): Promise<TeamMember> {
      const now = deps.clock.now();
      // Counted before the transaction: the limiter writes through its own connection.
      await limiter.enforceAll(
        [
          { key: `team:resend:${ctx.tenantId}:${id}`, rule: INVITE_LIMITS.resendPerMember },
          { key: `team:invite:${ctx.tenantId}`, rule: INVITE_LIMITS.perTenant },
        ],
        'Too many invitation mails',
      );
      const { user, issued } = await prisma.$transaction(async (tx) => {
        const user = await lockedMember(tx, ctx, id);
        guardOwner(ctx, user);
        if (user.status !== 'invited')
          throw new AppError(
            409,
            'not_invited',
            `The member is ${user.status}: there is no invitation to resend`,
          );
        const previous = await pendingOf(tx, user.id);
        const chosen = language ?? ((previous?.language as Language | undefined) || 'en');
        const issued = await issueInvitation(tx, ctx, user, chosen, now);
        await audit(tx, ctx, 'team.invitation_resent', user.id, { email: user.email });
        return { user, issued };
      });
      await mailInvitation(ctx, user, issued);
      return toMember(user, issued.row, now);
    },
  };
}

export type TeamService = ReturnType<typeof createTeamService>;
