// TOTP second factor (RFC 6238: SHA-1, 6 digits, 30 s, one step of clock drift either way). The
// secret is encrypted at rest; the last accepted time step is stored so a code cannot be replayed.
// Recovery codes (recovery-codes.ts) stand in for a lost authenticator at the sign-in's second step.
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import type { MfaSetupResponse, RecoveryCodes } from '@portico/contract';
import { AppError } from '../../http/errors.js';
import { createRateLimiter, rateLimited, type RateLimiter } from '../../http/rate-limit.js';
import { hashToken } from '../../infra/crypto.js';
import type { User } from '../../generated/prisma/client.js';
import { recordAudit } from '../audit/record.js';
import { enqueueMail } from '../privacy/jobs.js';
import { mailLanguage, recoveryCodeUsedMail } from './mails.js';
import { verifyPassword } from './passwords.js';
import { issueRecoveryCodes, recoveryCodesState, spendRecoveryCode } from './recovery-codes.js';
import type { RequestMeta } from '../../http/request-context.js';
import type { AuthDeps, AuthService, IssuedSession } from './service.js';
import { invalidToken } from './tokens.js';
import type { AuditAction } from '@portico/contract';

const ISSUER = 'Portico';
const PERIOD_SECONDS = 30;
export const MFA_LIMITS = {
  /** Wrong codes on one ticket before it dies. */
  perTicket: 5,
  /** Wrong codes for one user, across tickets and sessions. */
  perUser: { limit: 10, windowMs: 15 * 60_000 },
} as const;

const secretContext = (userId: string) => `user:${userId}:mfa-secret`;
const conflict = (message: string) => new AppError(409, 'conflict', message);

export function createMfaService(
  deps: AuthDeps,
  auth: AuthService,
  limiter: RateLimiter = createRateLimiter(deps.db, deps.clock),
) {
  const { prisma } = deps.db;
  const userKey = (userId: string) => `mfa:user:${userId}`;

  async function loadUser(userId: string) {
    const user = await prisma.user.findUnique({ where: { id: userId }, include: { tenant: true } });
    if (!user) throw invalidToken('The user of this token no longer exists');
    return user;
  }

  /**
   * Checks a code and claims its time step in one conditional write, so the same code (or an older
   * one) is refused the second time even when two requests race. Wrong codes count against the user.
   */
  async function checkCode(user: User, code: string): Promise<'ok' | 'invalid' | 'replayed'> {
    const gate = await limiter.peek(userKey(user.id), MFA_LIMITS.perUser);
    if (!gate.allowed) throw rateLimited(gate.retryAfterSeconds, 'Too many wrong codes; try again later');
    if (!user.mfaSecretEnc) return 'invalid';
    const secret = deps.cipher.decryptString(user.mfaSecretEnc, secretContext(user.id));
    const epoch = Math.floor(deps.clock.now().getTime() / 1000);
    const result = await verify({
      secret,
      token: code,
      epoch,
      period: PERIOD_SECONDS,
      epochTolerance: PERIOD_SECONDS,
    });
    let outcome: 'ok' | 'invalid' | 'replayed' = 'invalid';
    if (result.valid) {
      const step = BigInt(Math.floor(epoch / PERIOD_SECONDS) + result.delta);
      const claimed = await prisma.user.updateMany({
        where: { id: user.id, OR: [{ mfaLastStep: null }, { mfaLastStep: { lt: step } }] },
        data: { mfaLastStep: step },
      });
      outcome = claimed.count === 1 ? 'ok' : 'replayed';
    }
    if (outcome !== 'ok') await limiter.consume(userKey(user.id), MFA_LIMITS.perUser);
    return outcome;
  }

  const wrongCode = (outcome: 'invalid' | 'replayed') =>
    new AppError(
      401,
      'invalid_mfa_code',
      outcome === 'replayed' ? 'This code was already used; wait for the next one' : 'The code is wrong',
    );

  async function audit(
    user: User,
    action: AuditAction,
    meta: RequestMeta,
    metadata: Record<string, string | number> = {},
    actorType: 'adminSession' | 'public' = 'adminSession',
  ) {
    await recordAudit(prisma, {
      tenantId: user.tenantId,
      actorType,
      actorId: user.id,
      action,
      targetType: 'user',
      targetId: user.id,
      metadata,
      ip: meta.ip,
      requestId: meta.requestId,
    });
  }

  /** A new (not yet enabled) secret; replaces any earlier pending one. 409 when MFA is already on. */
  async function setup(userId: string, meta: RequestMeta): Promise<MfaSetupResponse> {
    const user = await loadUser(userId);
    if (user.mfaEnabled) throw conflict('MFA is already enabled; disable it first');
    const secret = generateSecret();
    await prisma.user.update({
      where: { id: user.id },
      data: { mfaSecretEnc: deps.cipher.encryptString(secret, secretContext(user.id)), mfaLastStep: null },
    });
    await audit(user, 'auth.mfa.setup_started', meta);
    const otpauthUri = generateURI({ issuer: ISSUER, label: user.email, secret, period: PERIOD_SECONDS });
    const qrCodeDataUrl = await QRCode.toDataURL(otpauthUri, {
      type: 'image/png',
      errorCorrectionLevel: 'M',
    });
    return { secret, otpauthUri, qrCodeDataUrl };
  }

  /**
   * Turns MFA on and makes the first set of recovery codes; with `endOtherSessions` every other session
   * of the user ends in the same transaction (whoever may have logged in with a leaked password is out).
   * Answers how many sessions ended and the codes, to be shown once.
   */
  async function enable(
    session: { userId: string; sessionId: string },
    input: { code: string; endOtherSessions: boolean },
    meta: RequestMeta,
  ): Promise<{ endedSessions: number; recoveryCodes: RecoveryCodes }> {
    const user = await loadUser(session.userId);
    const { code } = input;
    if (user.mfaEnabled) throw conflict('MFA is already enabled');
    if (!user.mfaSecretEnc) throw conflict('Call POST /v1/auth/mfa/setup first');
    const outcome = await checkCode(user, code);
    if (outcome !== 'ok') {
      await audit(user, 'auth.mfa.verify_failed', meta, { step: 'enable', reason: outcome });
      throw wrongCode(outcome);
    }
    const now = deps.clock.now();
    let codes: string[] = [];
    const ended = await prisma.$transaction(async (tx) => {
      await tx.user.update({ where: { id: user.id }, data: { mfaEnabled: true } });
      codes = await issueRecoveryCodes(tx, user, now);
      if (!input.endOtherSessions) return 0;
      const others = await tx.refreshSession.findMany({
        where: {
          userId: user.id,
          familyId: { not: session.sessionId },
          revokedAt: null,
          expiresAt: { gt: now },
        },
        distinct: ['familyId'],
        select: { familyId: true },
      });
      await tx.refreshSession.updateMany({
        where: { familyId: { in: others.map((o) => o.familyId) }, revokedAt: null },
        data: { revokedAt: now, revokedReason: 'mfa_enabled' },
      });
      return others.length;
    });
    if (ended > 0) deps.sessionEnds.ended(user.id);
    await audit(user, 'auth.mfa.enabled', meta, { endedSessions: String(ended) });
    await audit(user, 'auth.mfa.recovery_codes_generated', meta, { count: codes.length });
    return { endedSessions: ended, recoveryCodes: { codes, generatedAt: now.toISOString() } };
  }

  /**
   * A new set of recovery codes (the old set stops working), for a signed-in user with MFA on who
   * proves again that they are at the keyboard: a current TOTP code or their password.
   */
  async function regenerateRecoveryCodes(
    userId: string,
    proof: { code?: string | undefined; password?: string | undefined },
    meta: RequestMeta,
  ): Promise<RecoveryCodes> {
    const user = await loadUser(userId);
    if (!user.mfaEnabled) throw conflict('MFA is not enabled; recovery codes come with it');
    if (proof.code !== undefined) {
      const outcome = await checkCode(user, proof.code);
      if (outcome !== 'ok') {
        await audit(user, 'auth.mfa.verify_failed', meta, { step: 'recovery_codes', reason: outcome });
        throw wrongCode(outcome);
      }
    } else {
      const gate = await limiter.peek(userKey(user.id), MFA_LIMITS.perUser);
      if (!gate.allowed)
        throw rateLimited(gate.retryAfterSeconds, 'Too many wrong attempts; try again later');
      if (!user.passwordHash || !(await verifyPassword(user.passwordHash, proof.password ?? ''))) {
        await limiter.consume(userKey(user.id), MFA_LIMITS.perUser);
        await audit(user, 'auth.mfa.verify_failed', meta, {
          step: 'recovery_codes',
          reason: 'wrong_password',
        });
        throw new AppError(401, 'invalid_credentials', 'The password is wrong');
      }
    }
    const now = deps.clock.now();
    const codes = await prisma.$transaction((tx) => issueRecoveryCodes(tx, user, now));
    await audit(user, 'auth.mfa.recovery_codes_generated', meta, { count: codes.length });
    return { codes, generatedAt: now.toISOString() };
  }

  async function recoveryState(userId: string) {
    const user = await loadUser(userId);
    return recoveryCodesState(prisma, user.id);
  }

  async function disable(userId: string, code: string, meta: RequestMeta): Promise<void> {
    const user = await loadUser(userId);
    if (!user.mfaEnabled) throw conflict('MFA is not enabled');
    const outcome = await checkCode(user, code);
    if (outcome !== 'ok') {
      await audit(user, 'auth.mfa.verify_failed', meta, { step: 'disable', reason: outcome });
      throw wrongCode(outcome);
    }
    await prisma.$transaction([
      prisma.user.update({
        where: { id: user.id },
        data: { mfaEnabled: false, mfaSecretEnc: null, mfaLastStep: null },
      }),
      prisma.mfaRecoveryCode.deleteMany({ where: { userId: user.id } }),
    ]);
    await audit(user, 'auth.mfa.disabled', meta);
  }

  /** Re-checks a code inside a session (step-up before a sensitive action). */
  async function verifyInSession(userId: string, code: string, meta: RequestMeta): Promise<Date> {
    const user = await loadUser(userId);
    if (!user.mfaEnabled) throw conflict('MFA is not enabled');
    const outcome = await checkCode(user, code);
    if (outcome !== 'ok') {
      await audit(user, 'auth.mfa.verify_failed', meta, { step: 'session', reason: outcome });
      throw wrongCode(outcome);
    }
    await audit(user, 'auth.mfa.verified', meta);
    return deps.clock.now();
  }

  /**
   * A recovery code in place of a TOTP code: counted against the same per-user limit when wrong; when
   * right, spent, and its use mailed to the user with the number left. Answers the codes left.
   */
  async function checkRecoveryCode(
    user: User,
    code: string,
  ): Promise<{ outcome: 'ok'; left: number } | { outcome: 'invalid' }> {
    const gate = await limiter.peek(userKey(user.id), MFA_LIMITS.perUser);
    if (!gate.allowed) throw rateLimited(gate.retryAfterSeconds, 'Too many wrong codes; try again later');
    const left = await spendRecoveryCode(prisma, user.id, code, deps.clock.now());
    if (left === null) {
      await limiter.consume(userKey(user.id), MFA_LIMITS.perUser);
      return { outcome: 'invalid' };
    }
    return { outcome: 'ok', left };
  }

  /** Second step of login: redeems the ticket with a TOTP or recovery code and starts the session. */
  async function redeemTicket(
    ticketToken: string,
    proof: { code?: string | undefined; recoveryCode?: string | undefined },
    meta: RequestMeta,
  ): Promise<IssuedSession> {
    const now = deps.clock.now();
    const ticket = await prisma.mfaTicket.findUnique({
      where: { tokenHash: hashToken(ticketToken) },
      include: { user: { include: { tenant: true } } },
    });
    if (!ticket || ticket.usedAt || ticket.expiresAt <= now) {
      throw invalidToken('The MFA ticket is unknown, used or expired; log in again');
    }
    const user = ticket.user;
    const recovery =
      proof.recoveryCode !== undefined ? await checkRecoveryCode(user, proof.recoveryCode) : undefined;
    const outcome = recovery ? recovery.outcome : await checkCode(user, proof.code ?? '');
    if (outcome !== 'ok') {
      const { attempts } = await prisma.mfaTicket.update({
        where: { id: ticket.id },
        data: { attempts: { increment: 1 } },
      });
      await audit(
        user,
        'auth.mfa.verify_failed',
        meta,
        { step: 'login', reason: recovery ? 'invalid_recovery_code' : outcome },
        'public',
      );
      if (attempts >= MFA_LIMITS.perTicket) {
        await prisma.mfaTicket.update({ where: { id: ticket.id }, data: { usedAt: now } });
        throw rateLimited(
          Math.ceil((ticket.expiresAt.getTime() - now.getTime()) / 1000),
          'Too many wrong codes; this ticket is no longer valid, log in again',
        );
      }
      throw recovery
        ? new AppError(401, 'invalid_mfa_code', 'The recovery code is wrong or was already used')
        : wrongCode(outcome);
    }
    const session = await prisma.$transaction(async (tx) => {
      const used = await tx.mfaTicket.updateMany({
        where: { id: ticket.id, usedAt: null },
        data: { usedAt: now },
      });
      if (used.count === 0) throw invalidToken('The MFA ticket was already used');
      if (recovery?.outcome === 'ok') {
        await recordAudit(tx, {
          tenantId: user.tenantId,
          actorType: 'public',
          actorId: user.id,
          action: 'auth.mfa.recovery_code_used',
          targetType: 'user',
          targetId: user.id,
          metadata: { remaining: recovery.left },
          ip: meta.ip,
          requestId: meta.requestId,
        });
        await enqueueMail(
          tx,
          deps,
          recoveryCodeUsedMail(user.email, mailLanguage(user.language), recovery.left),
          now,
        );
      }
      return auth.completeLogin(tx, user, meta, true);
    });
    if (recovery) deps.outbox.notify();
    return session;
  }

  return {
    setup,
    enable,
    disable,
    verifyInSession,
    redeemTicket,
    regenerateRecoveryCodes,
    recoveryState,
  };
}
