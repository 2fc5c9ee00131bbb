// Password reset by a single-use link: asked for by e-mail address (the same answer whether or not it
// belongs to a user; the lookup and the mail happen later, in a job, so neither the answer nor its time
// says which), or issued by the platform operator's CLI. Setting the new password ends every session.
import { PASSWORD_RESET_TTL_SECONDS, type ConsoleLanguage } from '@portico/contract';
import { AppError } from '../../http/errors.js';
import type { RateLimiter } from '../../http/rate-limit.js';
import type { RequestMeta } from '../../http/request-context.js';
import { hashToken, randomToken } from '../../infra/crypto.js';
import { newId, type Tx } from '../../infra/db/index.js';
import { recordAudit } from '../audit/record.js';
import { enqueueMail, enqueueSealedJob, openSealedJob, type JobRow } from '../privacy/jobs.js';
import { mailLanguage, passwordChangedMail, passwordResetLinkMail } from './mails.js';
import { hashPassword } from './passwords.js';
import type { AuthDeps } from './service.js';

export const RESET_LIMITS = {
  /** Links asked for one address (counted before the lookup, so known and unknown look alike). */
  perEmail: { limit: 5, windowMs: 3_600_000 },
  /** Links asked from one client address, whatever the e-mail. */
  perIp: { limit: 20, windowMs: 3_600_000 },
  /** Tries of a token (right or wrong) from one client address. */
  tokenTriesPerIp: { limit: 20, windowMs: 15 * 60_000 },
} as const;

/** A link the operator prints lasts longer: it is handed over by a person, not opened from a mail. */
export const OPERATOR_RESET_TTL_SECONDS = 24 * 3600;

/** The console page of a reset link; the token is in the fragment, so it never reaches a server log. */
export const resetLink = (publicUrl: string, token: string) =>
  `${publicUrl}/console#/reset-password?token=${encodeURIComponent(token)}`;

const invalidResetToken = () =>
  new AppError(400, 'invalid_reset_token', 'This reset link is unknown, used or expired; ask for a new one');

/** Ends every live session of a user (refresh families and their access tokens); answers how many. */
export async function endAllSessions(
  tx: Pick<Tx, 'refreshSession'>,
  userId: string,
  now: Date,
  reason: string,
): Promise<number> {
  const live = await tx.refreshSession.findMany({
    where: { userId, revokedAt: null, expiresAt: { gt: now } },
    distinct: ['familyId'],
    select: { familyId: true },
  });
  await tx.refreshSession.updateMany({
    where: { userId, revokedAt: null },
    data: { revokedAt: now, revokedReason: reason },
  });
  return live.length;
}

/** A new single-use reset token for `user`, stored hashed; the clear token is answered once. */
export async function createResetToken(
  tx: Pick<Tx, 'passwordReset'>,
  user: { id: string; tenantId: string },
  origin: 'user' | 'operator',
  now: Date,
  ttlSeconds: number,
): Promise<string> {
  const token = randomToken('pwr_');
  await tx.passwordReset.create({
    data: {
      id: newId(),
      tenantId: user.tenantId,
      userId: user.id,
      tokenHash: hashToken(token),
      origin,
      expiresAt: new Date(now.getTime() + ttlSeconds * 1000),
      createdAt: now,
    },
  });
  return token;
}

interface ResetJob {
  email: string;
  language?: ConsoleLanguage;
  ip: string | null;
  requestId: string | null;
}

export function createPasswordResetService(deps: AuthDeps, limiter: RateLimiter) {
  const { prisma } = deps.db;

  /** `POST /v1/auth/password/forgot`: counts the limits, queues the job, answers nothing about the address. */
  async function forgot(input: { email: string; language?: ConsoleLanguage | undefined }, meta: RequestMeta) {
    const email = input.email.trim().toLowerCase();
    await limiter.enforceAll(
      [
        { key: `password-reset:email:${hashToken(email)}`, rule: RESET_LIMITS.perEmail },
        { key: `password-reset:ip:${meta.ip}`, rule: RESET_LIMITS.perIp },
      ],
      'Too many reset links asked for; try again later',
    );
    const job: ResetJob = {
      email,
      ...(input.language ? { language: input.language } : {}),
      ip: meta.ip,
      requestId: meta.requestId,
    };
    await enqueueSealedJob(prisma, deps, {
      kind: 'auth.password_reset',
      data: job as unknown as Record<string, unknown>,
      runAt: deps.clock.now(),
    });
    deps.outbox.notify();
  }

  /** The `auth.password_reset` job: a user of an active tenant gets a link; anyone else nothing. */
  async function sendResetLink(job: JobRow): Promise<void> {
    const input = openSealedJob(deps, job) as ResetJob;
    const user = await prisma.user.findUnique({ where: { email: input.email }, include: { tenant: true } });
    if (!user || user.tenant.status !== 'active') return;
    const now = deps.clock.now();
    await prisma.$transaction(async (tx) => {
      const token = await createResetToken(tx, user, 'user', now, PASSWORD_RESET_TTL_SECONDS);
      const language = input.language ?? mailLanguage(user.language);
      const mail = passwordResetLinkMail(
        user.email,
        language,
        resetLink(deps.config.publicUrl, token),
        PASSWORD_RESET_TTL_SECONDS / 60,
      );
      await enqueueMail(tx, deps, mail, now);
      await recordAudit(tx, {
        tenantId: user.tenantId,
        actorType: 'public',
        actorId: user.id,
        action: 'auth.password.reset_requested',
        targetType: 'user',
        targetId: user.id,
        ip: input.ip,
        requestId: input.requestId,
      });
    });
    deps.outbox.notify();
  }

  /**
   * `POST /v1/auth/password/reset`: spends the token (once, even under a race), sets the password,
   * lifts a lockout, ends every session and every other pending link, audits and mails a confirmation.
   */
  async function reset(input: { token: string; password: string }, meta: RequestMeta): Promise<number> {
    await limiter.enforce(
      `password-reset:tries:${meta.ip}`,
      RESET_LIMITS.tokenTriesPerIp,
      'Too many attempts; try again later',
    );
    const now = deps.clock.now();
    const found = await prisma.passwordReset.findUnique({
      where: { tokenHash: hashToken(input.token) },
      include: { user: { include: { tenant: true } } },
    });
    if (!found || found.usedAt || found.expiresAt <= now) throw invalidResetToken();
    const { user } = found;
    if (user.tenant.status !== 'active') throw invalidResetToken();
    // Before the transaction: argon2 takes tens of milliseconds.
    const passwordHash = await hashPassword(input.password);
    const ended = await prisma.$transaction(async (tx) => {
      const spent = await tx.passwordReset.updateMany({
        where: { id: found.id, usedAt: null },
        data: { usedAt: now },
      });
      if (spent.count !== 1) throw invalidResetToken();
      await tx.passwordReset.updateMany({ where: { userId: user.id, usedAt: null }, data: { usedAt: now } });
      await tx.user.update({
        where: { id: user.id },
        data: { passwordHash, failedLogins: 0, lockedUntil: null },
      });
      const endedSessions = await endAllSessions(tx, user.id, now, 'password_reset');
      await recordAudit(tx, {
        tenantId: user.tenantId,
        actorType: 'public',
        actorId: user.id,
        action: 'auth.password.reset',
        targetType: 'user',
        targetId: user.id,
        metadata: { origin: found.origin, endedSessions },
        ip: meta.ip,
        requestId: meta.requestId,
      });
      await enqueueMail(
        tx,
        deps,
        passwordChangedMail(user.email, mailLanguage(user.language), endedSessions),
        now,
      );
      return endedSessions;
    });
    deps.outbox.notify();
    deps.sessionEnds.ended(user.id);
    return ended;
  }

  return { forgot, sendResetLink, reset };
}
