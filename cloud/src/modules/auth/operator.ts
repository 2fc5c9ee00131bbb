// The platform operator's way back in for a locked-out user (`pnpm portico user reset-mfa|reset-password`):
// audited as the operator's, mailed to the user (the mail is queued; the running service sends it).
import type { Cipher } from '../../infra/crypto.js';
import type { Clock } from '../../infra/clock.js';
import type { Database } from '../../infra/db/index.js';
import { recordAudit } from '../audit/record.js';
import { enqueueMail } from '../privacy/jobs.js';
import { mailLanguage, mfaResetByOperatorMail, resetByOperatorMail } from './mails.js';
import { createResetToken, endAllSessions, OPERATOR_RESET_TTL_SECONDS, resetLink } from './password-reset.js';

export class OperatorError extends Error {}

interface OperatorDeps {
  db: Pick<Database, 'prisma'>;
  cipher: Cipher;
  clock: Clock;
}

async function userByEmail(deps: OperatorDeps, email: string) {
  const address = email.trim().toLowerCase();
  if (!address) throw new OperatorError('--email is required');
  const user = await deps.db.prisma.user.findUnique({ where: { email: address } });
  if (!user) throw new OperatorError(`No user with e-mail ${address}`);
  return user;
}

/**
 * Turns MFA off for the user: the TOTP secret and the recovery codes are deleted, so the next sign-in
 * takes the password alone (and, where the tenant requires MFA, leads to its setup). Sessions stay.
 */
export async function resetMfa(deps: OperatorDeps, email: string) {
  const user = await userByEmail(deps, email);
  const now = deps.clock.now();
  await deps.db.prisma.$transaction(async (tx) => {
    await tx.user.update({
      where: { id: user.id },
      data: { mfaEnabled: false, mfaSecretEnc: null, mfaLastStep: null },
    });
    const codes = await tx.mfaRecoveryCode.deleteMany({ where: { userId: user.id } });
    await recordAudit(tx, {
      tenantId: user.tenantId,
      actorType: 'operator',
      actorId: null,
      action: 'auth.mfa.reset_by_operator',
      targetType: 'user',
      targetId: user.id,
      metadata: { wasEnabled: user.mfaEnabled, recoveryCodesDeleted: codes.count },
    });
    await enqueueMail(tx, deps, mfaResetByOperatorMail(user.email, mailLanguage(user.language)), now);
  });
  return { email: user.email, userId: user.id, tenantId: user.tenantId, mfaWasEnabled: user.mfaEnabled };
}

/**
 * Ends every session of the user and issues a one-time reset link (24 hours) for the operator to hand
 * over; the password itself is chosen by the user on the link's page, so the operator never knows it.
 * A lockout after failed sign-ins is lifted. The user is mailed that it happened (not the link).
 */
export async function resetPassword(deps: OperatorDeps & { publicUrl: string }, email: string) {
  const user = await userByEmail(deps, email);
  const now = deps.clock.now();
  const { token, endedSessions } = await deps.db.prisma.$transaction(async (tx) => {
    const endedSessions = await endAllSessions(tx, user.id, now, 'operator_reset');
    await tx.passwordReset.updateMany({ where: { userId: user.id, usedAt: null }, data: { usedAt: now } });
    await tx.user.update({ where: { id: user.id }, data: { failedLogins: 0, lockedUntil: null } });
    const token = await createResetToken(tx, user, 'operator', now, OPERATOR_RESET_TTL_SECONDS);
    await recordAudit(tx, {
      tenantId: user.tenantId,
      actorType: 'operator',
      actorId: null,
      action: 'auth.password.reset_link_issued',
      targetType: 'user',
      targetId: user.id,
      metadata: { endedSessions },
    });
    await enqueueMail(tx, deps, resetByOperatorMail(user.email, mailLanguage(user.language)), now);
    return { token, endedSessions };
  });
  return {
    email: user.email,
    userId: user.id,
    tenantId: user.tenantId,
    resetLink: resetLink(deps.publicUrl, token),
    expiresAt: new Date(now.getTime() + OPERATOR_RESET_TTL_SECONDS * 1000).toISOString(),
    endedSessions,
  };
}
