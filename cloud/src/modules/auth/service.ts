// Tenant-user sessions: password login (with lockout and rate limits), refresh-token rotation with
// theft detection, logout, profile and the product list of the SSO hub.
import {
  ACCESS_TOKEN_TTL_SECONDS,
  MFA_TICKET_TTL_SECONDS,
  REFRESH_TOKEN_TTL_SECONDS,
  type Product,
  type TokenResponse,
  type UserProfile,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { createRateLimiter, rateLimited, type RateLimiter } from '../../http/rate-limit.js';
import { hashToken, randomToken } from '../../infra/crypto.js';
import { newId, type Tx } from '../../infra/db/index.js';
import type { Tenant, User } from '../../generated/prisma/client.js';
import { tenantSettingsOf } from '../tenants/settings.js';
import type { RequestMeta } from '../../http/request-context.js';
import { recordAudit } from '../audit/record.js';
import { verifyPassword } from './passwords.js';
import { signAdminToken, invalidToken } from './tokens.js';
import type { AuditAction } from '@portico/contract';

export type AuthDeps = Pick<
  AppDeps,
  'db' | 'clock' | 'secrets' | 'cipher' | 'config' | 'outbox' | 'sessionEnds'
>;

/** An owner or admin without MFA in a tenant that requires it (setting `requireMfaForAdmins`). */
export function mfaSetupRequired(
  user: Pick<User, 'role' | 'mfaEnabled'> & { tenant: Pick<Tenant, 'settings'> },
) {
  const manager = user.role === 'owner' || user.role === 'admin';
  return manager && !user.mfaEnabled && tenantSettingsOf(user.tenant.settings).requireMfaForAdmins;
}

/** Who is asking, for rate-limit keys and the audit trail (never secrets). */
const WINDOW_MS = 15 * 60_000;
export const LOGIN_LIMITS = {
  /** Failed logins for one e-mail from one address. */
  perIpAndEmail: { limit: 5, windowMs: WINDOW_MS },
  /** All login attempts from one address (credential stuffing over many e-mails). */
  perIp: { limit: 50, windowMs: WINDOW_MS },
  /** Consecutive failures (any address) that lock the account, and for how long. */
  lockAfterFailures: 10,
  lockMs: WINDOW_MS,
} as const;

/** Equalises the time of an unknown e-mail with a wrong password (same argon2id parameters). */
const DUMMY_HASH =
  '$argon2id$v=19$m=19456,t=2,p=1$SNjc7VP1lL9E426gMyiGwA$B/Hb3+0rcCiFTqt6gLFYffrYbQibPMmoV6CpRbOc8Rc';

const invalidCredentials = () => new AppError(401, 'invalid_credentials', 'E-mail or password is wrong');

export interface IssuedSession {
  tokens: TokenResponse;
  refreshToken: string;
  refreshExpiresAt: Date;
}

export type LoginOutcome =
  { kind: 'session'; session: IssuedSession } | { kind: 'mfa'; mfaTicket: string; expiresIn: number };

export function createAuthService(
  deps: AuthDeps,
  limiter: RateLimiter = createRateLimiter(deps.db, deps.clock),
) {
  const { prisma } = deps.db;

  async function profile(user: User & { tenant: Tenant }): Promise<UserProfile> {
    return {
      id: user.id,
      email: user.email,
      name: user.name,
      role: user.role as UserProfile['role'],
      mfaEnabled: user.mfaEnabled,
      mfaSetupRequired: mfaSetupRequired(user),
      tenant: { id: user.tenant.id, slug: user.tenant.slug, name: user.tenant.name },
      lastLoginAt: user.lastLoginAt?.toISOString() ?? null,
      createdAt: user.createdAt.toISOString(),
    };
  }

  /** The end of a successful login (with or without MFA): a new session and its audit row. */
  async function completeLogin(
    tx: Tx,
    user: User & { tenant: Tenant },
    meta: RequestMeta,
    mfa: boolean,
  ): Promise<IssuedSession> {
    const issued = await startSession(tx, user, meta);
    await recordAudit(tx, {
      tenantId: user.tenantId,
      actorType: 'public',
      actorId: user.id,
      action: 'auth.login.succeeded',
      targetType: 'user',
      targetId: user.id,
      metadata: { mfa },
      ip: meta.ip,
      requestId: meta.requestId,
    });
    return issued;
  }

  /** The token answer of a login or refresh: a fresh access token of session `familyId`, and the profile. */
  async function tokensFor(
    user: User & { tenant: Tenant },
    familyId: string,
    now: Date,
  ): Promise<TokenResponse> {
    const accessToken = await signAdminToken(
      deps.secrets.jwtKey,
      { sub: user.id, tid: user.tenantId, role: user.role, sid: familyId },
      now,
    );
    return {
      accessToken,
      tokenType: 'Bearer',
      expiresIn: ACCESS_TOKEN_TTL_SECONDS,
      user: await profile(user),
    };
  }

  /** A new refresh-token family plus its first access token; written inside the caller's transaction. */
  async function startSession(
    tx: Tx,
    user: User & { tenant: Tenant },
    meta: RequestMeta,
  ): Promise<IssuedSession> {
    const now = deps.clock.now();
    const familyId = newId();
    const refreshToken = randomToken('rt_');
    const refreshExpiresAt = new Date(now.getTime() + REFRESH_TOKEN_TTL_SECONDS * 1000);
    await tx.refreshSession.create({
      data: {
        id: newId(),
        userId: user.id,
        tenantId: user.tenantId,
        familyId,
        tokenHash: hashToken(refreshToken),
        expiresAt: refreshExpiresAt,
        userAgent: meta.userAgent?.slice(0, 512) ?? null,
        ip: meta.ip,
      },
    });
    const updated = await tx.user.update({
      where: { id: user.id },
      data: { lastLoginAt: now, failedLogins: 0, lockedUntil: null },
      include: { tenant: true },
    });
    return { tokens: await tokensFor(updated, familyId, now), refreshToken, refreshExpiresAt };
  }

  async function login(
    input: { email: string; password: string; language?: string | undefined },
    meta: RequestMeta,
  ): Promise<LoginOutcome> {
    const email = input.email.trim().toLowerCase();
    const now = deps.clock.now();
    const ipEmailKey = `login:ip-email:${meta.ip}:${email}`;
    const blocked = await limiter.peek(ipEmailKey, LOGIN_LIMITS.perIpAndEmail);
    if (!blocked.allowed)
      throw rateLimited(blocked.retryAfterSeconds, 'Too many failed logins; try again later');
    await limiter.enforce(
      `login:ip:${meta.ip}`,
      LOGIN_LIMITS.perIp,
      'Too many login attempts from this address',
    );

    const user = await prisma.user.findUnique({ where: { email }, include: { tenant: true } });
    const audit = (action: AuditAction, metadata: Record<string, string | number | boolean>) =>
      recordAudit(prisma, {
        tenantId: user?.tenantId ?? null,
        actorType: 'public',
        actorId: user?.id ?? null,
        action,
        targetType: 'user',
        ...(user ? { targetId: user.id } : {}),
        metadata: { email, ...metadata },
        ip: meta.ip,
        requestId: meta.requestId,
      });

    if (user?.lockedUntil && user.lockedUntil > now) {
      await audit('auth.login.failed', { reason: 'account_locked' });
      const retryAfterSeconds = Math.ceil((user.lockedUntil.getTime() - now.getTime()) / 1000);
      throw rateLimited(
        retryAfterSeconds,
        'The account is locked after repeated failed logins',
        'account_locked',
      );
    }
    const passwordOk = await verifyPassword(user?.passwordHash ?? DUMMY_HASH, input.password);
    // Only an active user signs in: a deactivated one (modules/team) is refused like a wrong password.
    if (!user || !passwordOk || user.tenant.status !== 'active' || user.status !== 'active') {
      await limiter.consume(ipEmailKey, LOGIN_LIMITS.perIpAndEmail);
      if (user && !passwordOk) {
        const { failedLogins } = await prisma.user.update({
          where: { id: user.id },
          data: { failedLogins: { increment: 1 } },
        });
        if (failedLogins >= LOGIN_LIMITS.lockAfterFailures) {
          await prisma.user.update({
            where: { id: user.id },
            data: { failedLogins: 0, lockedUntil: new Date(now.getTime() + LOGIN_LIMITS.lockMs) },
          });
          await audit('auth.account.locked', { failedLogins });
        }
      }
      const reason = !user
        ? 'unknown_email'
        : !passwordOk
          ? 'wrong_password'
          : user.status !== 'active'
            ? `user_${user.status}`
            : 'tenant_suspended';
      await audit('auth.login.failed', { reason });
      throw invalidCredentials();
    }
    await limiter.reset(ipEmailKey);
    // The console's language becomes the language of the mails this user receives.
    if (input.language && input.language !== user.language) {
      await prisma.user.update({ where: { id: user.id }, data: { language: input.language } });
      user.language = input.language;
    }

    if (user.mfaEnabled) {
      const mfaTicket = randomToken('mfa_');
      await prisma.$transaction(async (tx) => {
        await tx.mfaTicket.create({
          data: {
            id: newId(),
            tenantId: user.tenantId,
            userId: user.id,
            tokenHash: hashToken(mfaTicket),
            expiresAt: new Date(now.getTime() + MFA_TICKET_TTL_SECONDS * 1000),
          },
        });
        await tx.user.update({ where: { id: user.id }, data: { failedLogins: 0 } });
        await recordAudit(tx, {
          tenantId: user.tenantId,
          actorType: 'public',
          actorId: user.id,
          action: 'auth.login.mfa_required',
          targetType: 'user',
          targetId: user.id,
          ip: meta.ip,
          requestId: meta.requestId,
        });
      });
      return { kind: 'mfa', mfaTicket, expiresIn: MFA_TICKET_TTL_SECONDS };
    }
    const session = await prisma.$transaction((tx) => completeLogin(tx, user, meta, false));
    return { kind: 'session', session };
  }

  /**
   * Rotates a refresh token. A token that was already rotated is a stolen copy (or the thief's
   * victim): the whole family is revoked and every access token of it stops working.
   */
  async function refresh(refreshToken: string | undefined, meta: RequestMeta): Promise<IssuedSession> {
    if (!refreshToken) throw new AppError(401, 'unauthorized', `No refresh cookie`);
    const now = deps.clock.now();
    const current = await prisma.refreshSession.findUnique({
      where: { tokenHash: hashToken(refreshToken) },
      include: { user: { include: { tenant: true } } },
    });
    if (!current) throw invalidToken('Unknown refresh token');
    if (current.revokedAt) throw invalidToken('The session has ended');
    if (current.expiresAt <= now)
      throw new AppError(401, 'token_expired', 'The session has expired; log in again');

    const result = await prisma.$transaction(async (tx) => {
      // Conditional update: of two concurrent uses of one token, exactly one wins the rotation.
      const claimed = await tx.refreshSession.updateMany({
        where: { id: current.id, rotatedAt: null, revokedAt: null },
        data: { rotatedAt: now },
      });
      if (claimed.count === 0) {
        await tx.refreshSession.updateMany({
          where: { familyId: current.familyId, revokedAt: null },
          data: { revokedAt: now, revokedReason: 'reuse_detected' },
        });
        await recordAudit(tx, {
          tenantId: current.tenantId,
          actorType: 'public',
          actorId: current.userId,
          action: 'auth.refresh.reuse_detected',
          targetType: 'session',
          targetId: current.familyId,
          ip: meta.ip,
          requestId: meta.requestId,
        });
        return null;
      }
      if (current.user.tenant.status !== 'active') return 'suspended' as const;
      const next = randomToken('rt_');
      const nextId = newId();
      await tx.refreshSession.create({
        data: {
          id: nextId,
          userId: current.userId,
          tenantId: current.tenantId,
          familyId: current.familyId,
          tokenHash: hashToken(next),
          // Absolute lifetime: rotation never extends the family.
          expiresAt: current.expiresAt,
          userAgent: meta.userAgent?.slice(0, 512) ?? null,
          ip: meta.ip,
        },
      });
      await tx.refreshSession.update({ where: { id: current.id }, data: { replacedById: nextId } });
      return next;
    });
    if (result === null) {
      deps.sessionEnds.ended(current.userId);
      throw new AppError(
        401,
        'refresh_token_reused',
        'This refresh token was already used; the session is revoked',
      );
    }
    if (result === 'suspended') throw invalidToken('The tenant is suspended');
    return {
      tokens: await tokensFor(current.user, current.familyId, now),
      refreshToken: result,
      refreshExpiresAt: current.expiresAt,
    };
  }

  /** Ends the session family of the refresh cookie, or else of the caller's access token. Idempotent. */
  async function logout(
    input: { refreshToken?: string; sessionId?: string },
    meta: RequestMeta,
  ): Promise<void> {
    const now = deps.clock.now();
    let session: { familyId: string; tenantId: string; userId: string } | null = null;
    if (input.refreshToken) {
      session = await prisma.refreshSession.findUnique({
        where: { tokenHash: hashToken(input.refreshToken) },
      });
    }
    if (!session && input.sessionId) {
      session = await prisma.refreshSession.findFirst({ where: { familyId: input.sessionId } });
    }
    if (!session) return;
    const { familyId, tenantId, userId } = session;
    await prisma.$transaction(async (tx) => {
      const revoked = await tx.refreshSession.updateMany({
        where: { familyId, revokedAt: null },
        data: { revokedAt: now, revokedReason: 'logout' },
      });
      if (revoked.count > 0) {
        await recordAudit(tx, {
          tenantId,
          actorType: 'adminSession',
          actorId: userId,
          action: 'auth.logout',
          targetType: 'session',
          targetId: familyId,
          ip: meta.ip,
          requestId: meta.requestId,
        });
      }
    });
    deps.sessionEnds.ended(userId);
  }

  async function me(userId: string): Promise<UserProfile> {
    const user = await prisma.user.findUnique({ where: { id: userId }, include: { tenant: true } });
    if (!user) throw invalidToken('The user of this token no longer exists');
    return profile(user);
  }

  function products(role: string): Product[] {
    return PRODUCTS(deps.config.publicUrl).filter((p) => p.roles.includes(role as Product['roles'][number]));
  }

  return { login, refresh, logout, me, products, completeLogin, profile };
}

export type AuthService = ReturnType<typeof createAuthService>;

/** The products of the SSO hub and the roles that may open each. */
export const PRODUCTS = (publicUrl: string): Product[] => [
  {
    id: 'admin-console',
    name: 'Admin console',
    description: 'Persons, events, guests, enrollment and check-in history of the tenant.',
    url: `${publicUrl}/admin`,
    roles: ['owner', 'admin', 'operator'],
  },
  {
    id: 'checkin-kiosk',
    name: 'Check-in kiosk',
    description: 'Facial and QR check-in at an event entrance.',
    url: `${publicUrl}/kiosk`,
    roles: ['owner', 'admin', 'operator'],
  },
  {
    id: 'developer-api',
    name: 'Developer API',
    description: 'Applications, API keys, webhook settings and the API reference.',
    url: `${publicUrl}/docs`,
    roles: ['owner', 'admin'],
  },
];
