import {
  LoginRequest,
  LoginResponse,
  MfaCodeRequest,
  MfaEnabled,
  MfaEnableRequest,
  MfaSetupResponse,
  MfaState,
  MfaVerifyRequest,
  MfaVerifyResponse,
  PASSWORD_RESET_TTL_SECONDS,
  PasswordForgotAccepted,
  PasswordForgotRequest,
  PasswordResetDone,
  PasswordResetRequest,
  ProductList,
  RecoveryCodes,
  RecoveryCodesRequest,
  RecoveryCodesState,
  TokenResponse,
  UserProfile,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { AppError, invalidFields } from '../../http/errors.js';
import { createRateLimiter } from '../../http/rate-limit.js';
import { requestMeta } from '../../http/request-context.js';
import { defineRoute } from '../../http/route.js';
import { clearedRefreshCookie, readRefreshCookie, refreshCookie, requireOwnOrigin } from './cookie.js';
import { createMfaService } from './mfa.js';
import { createPasswordResetService, OPERATOR_RESET_TTL_SECONDS, RESET_LIMITS } from './password-reset.js';
import { createAuthService, type IssuedSession } from './service.js';

const TAG = 'Authentication';
const LIFETIMES =
  'Access token: HS256 JWT, 15 minutes (`expiresIn` 900). Refresh token: opaque, in the httpOnly cookie ' +
  '`portico_refresh` (Path=/v1/auth, SameSite=Strict, Secure outside development), 30 days from login, ' +
  'rotated on every refresh without extending those 30 days.';

const ORIGIN_RULE =
  'From a browser it is taken only from the service’s own pages: an `Origin` other than `PUBLIC_URL`’s ' +
  '(or the request’s own host), `Origin: null` or `Sec-Fetch-Site: cross-site` is 403 `forbidden`, and the ' +
  'cookie is left untouched.';
const ORIGIN_ERROR = {
  status: 403,
  code: 'forbidden',
  description: 'sent by a page of another origin',
} as const;

export function authRoutes(deps: AppDeps) {
  const limiter = createRateLimiter(deps.db, deps.clock);
  const auth = createAuthService(deps, limiter);
  const mfa = createMfaService(deps, auth, limiter);
  const passwords = createPasswordResetService(deps, limiter);
  const secureCookie = deps.config.env !== 'development' && deps.config.env !== 'test';
  const withCookie = (session: IssuedSession) => ({
    status: 200,
    body: session.tokens,
    headers: {
      'Set-Cookie': refreshCookie(
        session.refreshToken,
        session.refreshExpiresAt,
        deps.clock.now(),
        secureCookie,
      ),
    },
  });

  return [
    defineRoute({
      method: 'post',
      path: '/v1/auth/login',
      operationId: 'authLogin',
      summary: 'Log in with e-mail and password',
      description:
        `Without MFA: 200 \`TokenResponse\` and a \`Set-Cookie: portico_refresh=…\`. ${LIFETIMES}\n\n` +
        'With MFA on: 200 `MfaChallenge` `{ mfaRequired: true, mfaTicket, expiresIn: 300 }`, no token and ' +
        'no cookie; send the ticket and a TOTP code to `POST /v1/auth/mfa/verify` within 5 minutes.\n\n' +
        'An owner or admin of a tenant that requires MFA (`requireMfaForAdmins`) who has not set it up gets ' +
        'a session held at the setup: `user.mfaSetupRequired: true`, and only `GET /v1/auth/me`, ' +
        '`POST /v1/auth/mfa/setup`, `POST /v1/auth/mfa/enable` and `POST /v1/auth/logout` answer it (others: ' +
        '403 `mfa_setup_required`) until MFA is on.\n\n' +
        'Abuse limits: 5 failed logins per e-mail and client address in 15 minutes, then 429 `rate_limited`; ' +
        '50 attempts per client address in 15 minutes; 10 consecutive failures lock the account for 15 ' +
        'minutes (429 `account_locked`). 429 answers carry `Retry-After` (seconds). An unknown e-mail and a ' +
        'wrong password get the same 401 `invalid_credentials`, in the same time.',
      tag: TAG,
      auth: ['public'],
      body: LoginRequest,
      responses: { 200: { description: 'Tokens, or an MFA challenge', schema: LoginResponse } },
      errors: [
        { status: 401, code: 'invalid_credentials', description: 'e-mail or password wrong' },
        { status: 429, code: 'rate_limited', description: 'too many attempts; see Retry-After' },
        {
          status: 429,
          code: 'account_locked',
          description: 'account locked after repeated failures; see Retry-After',
        },
      ],
      handler: async ({ body, req, res }) => {
        const outcome = await auth.login(body, requestMeta(req, res));
        if (outcome.kind === 'mfa') {
          return {
            status: 200,
            body: { mfaRequired: true, mfaTicket: outcome.mfaTicket, expiresIn: outcome.expiresIn },
          };
        }
        return withCookie(outcome.session);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/refresh',
      operationId: 'authRefresh',
      summary: 'Renew the access token from the refresh cookie',
      description:
        `Reads the \`portico_refresh\` cookie (an Authorization header, even a stale one, is ignored), answers a new access token and ` +
        `sets a new refresh cookie; the old refresh token is spent. ${LIFETIMES}\n\n` +
        'Presenting a refresh token that was already rotated means it was copied: the whole session family ' +
        'is revoked (every refresh token and access token of that login stops working) and the answer is ' +
        `401 \`refresh_token_reused\`.\n\n${ORIGIN_RULE}`,
      tag: TAG,
      auth: ['public'],
      responses: {
        200: { description: 'A new access token; a new refresh cookie is set', schema: TokenResponse },
      },
      errors: [
        ORIGIN_ERROR,
        { status: 401, code: 'unauthorized', description: 'no refresh cookie' },
        { status: 401, code: 'invalid_token', description: 'unknown or revoked refresh token' },
        { status: 401, code: 'token_expired', description: 'the 30-day session is over' },
        {
          status: 401,
          code: 'refresh_token_reused',
          description: 'the token was already rotated; session revoked',
        },
      ],
      handler: async ({ req, res }) => {
        requireOwnOrigin(req, deps.config.publicUrl);
        try {
          return withCookie(await auth.refresh(readRefreshCookie(req.headers.cookie), requestMeta(req, res)));
        } catch (err) {
          if (err instanceof AppError && err.status === 401) {
            throw new AppError(err.status, err.code, err.message, {
              ...err.details,
              headers: { ...err.details.headers, 'Set-Cookie': clearedRefreshCookie(secureCookie) },
            });
          }
          throw err;
        }
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/logout',
      operationId: 'authLogout',
      summary: 'Log out: revoke the session',
      description:
        'Revokes the session family of the refresh cookie (or, without a cookie, of the bearer access ' +
        'token): its refresh tokens and its access tokens stop working at once. Clears the cookie. ' +
        `Always 204, also when there was nothing to revoke. ${ORIGIN_RULE}`,
      tag: TAG,
      auth: ['public', 'adminSession'],
      duringMfaSetup: true,
      responses: { 204: { description: 'Logged out; the cookie is cleared' } },
      errors: [ORIGIN_ERROR],
      handler: async ({ actor, req, res }) => {
        requireOwnOrigin(req, deps.config.publicUrl);
        await auth.logout(
          {
            refreshToken: readRefreshCookie(req.headers.cookie),
            sessionId: actor.kind === 'adminSession' ? actor.sessionId : undefined,
          },
          requestMeta(req, res),
        );
        return { status: 204, headers: { 'Set-Cookie': clearedRefreshCookie(secureCookie) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/auth/me',
      operationId: 'authMe',
      summary: 'Profile of the logged-in user',
      description:
        'The user, their role, their tenant, whether MFA is on and whether the session is held at the MFA ' +
        'setup (`mfaSetupRequired`).',
      tag: TAG,
      auth: ['adminSession'],
      duringMfaSetup: true,
      responses: { 200: { description: 'The profile', schema: UserProfile } },
      handler: async ({ actor }) => ({ status: 200, body: await auth.me(actor.userId) }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/auth/products',
      operationId: 'authProducts',
      summary: 'Products the user can open (SSO hub)',
      description:
        'The products of the single-sign-on hub the caller’s role may open: `admin-console` and ' +
        '`checkin-kiosk` for every role (owner, admin, operator), `developer-api` (applications, API keys, ' +
        'webhook settings, API reference) for owner and admin. Each item carries the URL to open.',
      tag: TAG,
      auth: ['adminSession'],
      responses: { 200: { description: 'The products, in display order', schema: ProductList } },
      handler: async ({ actor }) => ({ status: 200, body: { items: auth.products(actor.role) } }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/mfa/setup',
      operationId: 'authMfaSetup',
      summary: 'Start TOTP setup: secret, otpauth URI and QR code',
      description:
        'Generates a new TOTP secret (RFC 6238: SHA-1, 6 digits, 30 s) and answers it with its ' +
        '`otpauth://` URI and a PNG QR code (data URL). MFA is not on yet: confirm with ' +
        '`POST /v1/auth/mfa/enable`. Calling it again replaces a pending secret. 409 when MFA is already on.',
      tag: TAG,
      auth: ['adminSession'],
      duringMfaSetup: true,
      responses: { 200: { description: 'Scan the QR code or type the secret', schema: MfaSetupResponse } },
      errors: [{ status: 409, code: 'conflict', description: 'MFA is already enabled' }],
      handler: async ({ actor, req, res }) => ({
        status: 200,
        body: await mfa.setup(actor.userId, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/mfa/enable',
      operationId: 'authMfaEnable',
      summary: 'Turn MFA on with a code from the new secret',
      description:
        'Confirms the secret of `mfa/setup` with a current code; from then on login asks for a code. ' +
        'A code is accepted once (replays are 401 `invalid_mfa_code`); one 30 s step of clock drift is ' +
        'tolerated. 10 wrong codes in 15 minutes give 429 `rate_limited`.\n\n' +
        'With `endOtherSessions: true` every other session of the user ends at once (their refresh and ' +
        'access tokens stop working; `endedSessions` says how many); the calling session stays. Offer it ' +
        'when MFA is turned on because a password may be known to someone else. Default false.\n\n' +
        'The answer carries the first ten recovery codes (`recoveryCodes`), shown this once: each stands in ' +
        'for a code from the authenticator at one sign-in, if it is lost.',
      tag: TAG,
      auth: ['adminSession'],
      duringMfaSetup: true,
      body: MfaEnableRequest,
      responses: { 200: { description: 'MFA is on', schema: MfaEnabled } },
      errors: [
        { status: 401, code: 'invalid_mfa_code', description: 'wrong or already used code' },
        { status: 409, code: 'conflict', description: 'no pending setup, or MFA already on' },
        { status: 429, code: 'rate_limited', description: 'too many wrong codes' },
      ],
      handler: async ({ actor, body, req, res }) => {
        const on = await mfa.enable(actor, body, requestMeta(req, res));
        return { status: 200, body: { mfaEnabled: true, ...on } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/mfa/verify',
      operationId: 'authMfaVerify',
      summary: 'Verify a TOTP code (second login step, or a re-check in a session)',
      description:
        'With `mfaTicket` (from the login answer, valid 5 minutes, single use): checks the code and ' +
        `answers the session exactly like a login without MFA (TokenResponse + refresh cookie). ${LIFETIMES} ` +
        'Five wrong codes kill the ticket (429 `rate_limited`; log in again).\n\n' +
        'A lost authenticator: send `recoveryCode` (one of the ten recovery codes) in place of `code`, with ' +
        'the ticket. It is spent (a second use is 401 `invalid_mfa_code`), audited ' +
        '(`auth.mfa.recovery_code_used`) and the user is mailed that it was used and how many are left. Wrong ' +
        'recovery codes count like wrong TOTP codes.\n\n' +
        'Without `mfaTicket`, with a session access token: checks the code of the logged-in user and ' +
        'answers `{ verified: true, verifiedAt }` (a step-up check before a sensitive action).\n\n' +
        'Either way a code is accepted once, and 10 wrong codes per user in 15 minutes give 429 ' +
        '`rate_limited` with `Retry-After`.',
      tag: TAG,
      auth: ['public', 'adminSession'],
      body: MfaVerifyRequest,
      responses: {
        200: {
          description: 'Session tokens (ticket) or a confirmation (session)',
          schema: MfaVerifyResponse,
        },
      },
      errors: [
        { status: 401, code: 'invalid_mfa_code', description: 'wrong or already used code' },
        { status: 401, code: 'invalid_token', description: 'unknown, used or expired ticket' },
        { status: 409, code: 'conflict', description: 'session re-check for a user without MFA' },
        { status: 429, code: 'rate_limited', description: 'too many wrong codes; see Retry-After' },
      ],
      handler: async ({ actor, body, req, res }) => {
        const meta = requestMeta(req, res);
        if (body.mfaTicket) return withCookie(await mfa.redeemTicket(body.mfaTicket, body, meta));
        if (actor.kind !== 'adminSession') {
          throw invalidFields([{ path: 'body.mfaTicket', message: 'Required without a session token' }]);
        }
        const at = await mfa.verifyInSession(actor.userId, body.code ?? '', meta);
        return { status: 200, body: { verified: true, verifiedAt: at.toISOString() } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/auth/mfa/disable',
      operationId: 'authMfaDisable',
      summary: 'Turn MFA off (needs a current code)',
      description:
        'Body `{ code }` (JSON, on DELETE) with a current code; removes the secret and the recovery codes. ' +
        'Same replay and rate-limit rules as `mfa/enable`.',
      tag: TAG,
      auth: ['adminSession'],
      body: MfaCodeRequest,
      responses: { 200: { description: 'MFA is off', schema: MfaState } },
      errors: [
        { status: 401, code: 'invalid_mfa_code', description: 'wrong or already used code' },
        { status: 409, code: 'conflict', description: 'MFA is not enabled' },
        { status: 429, code: 'rate_limited', description: 'too many wrong codes' },
      ],
      handler: async ({ actor, body, req, res }) => {
        await mfa.disable(actor.userId, body.code, requestMeta(req, res));
        return { status: 200, body: { mfaEnabled: false } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/auth/mfa/recovery-codes',
      operationId: 'authRecoveryCodesState',
      summary: 'How many recovery codes are left',
      description:
        'The unused recovery codes of the signed-in user (never the codes themselves: only their hashes are ' +
        'kept) and when the set was made. `remaining: 0` with MFA on: make a new set.',
      tag: TAG,
      auth: ['adminSession'],
      responses: { 200: { description: 'The count', schema: RecoveryCodesState } },
      handler: async ({ actor }) => ({ status: 200, body: await mfa.recoveryState(actor.userId) }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/mfa/recovery-codes',
      operationId: 'authRecoveryCodesRegenerate',
      summary: 'Make a new set of ten recovery codes',
      description:
        'With MFA on and a fresh proof (`code`: a current TOTP code, or `password`), answers ten new ' +
        'single-use recovery codes, shown this once; the earlier set stops working at once. Audited ' +
        '(`auth.mfa.recovery_codes_generated`). Wrong codes or passwords count against the same 10 in 15 ' +
        'minutes as wrong TOTP codes.',
      tag: TAG,
      auth: ['adminSession'],
      body: RecoveryCodesRequest,
      responses: { 200: { description: 'The new codes', schema: RecoveryCodes } },
      errors: [
        { status: 401, code: 'invalid_mfa_code', description: 'wrong or already used TOTP code' },
        { status: 401, code: 'invalid_credentials', description: 'wrong password' },
        { status: 409, code: 'conflict', description: 'MFA is not on' },
        { status: 429, code: 'rate_limited', description: 'too many wrong codes or passwords' },
      ],
      handler: async ({ actor, body, req, res }) => ({
        status: 200,
        body: await mfa.regenerateRecoveryCodes(actor.userId, body, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/password/forgot',
      operationId: 'authPasswordForgot',
      summary: 'Ask for a password-reset link by e-mail',
      description:
        'Always 202 with the same body, whether or not the address belongs to a user (the look-up and the ' +
        'mail happen afterwards, in the background). A user of an active tenant is mailed a link to ' +
        `the console’s reset page that works once, for ${PASSWORD_RESET_TTL_SECONDS / 60} minutes (only the ` +
        'SHA-256 of its token is stored), in `language` or else the user’s last console language. A reset ' +
        'does not touch MFA: a user with MFA still needs a code (or a recovery code) to sign in.\n\n' +
        `Limits: ${RESET_LIMITS.perEmail.limit} requests per address and ${RESET_LIMITS.perIp.limit} per client ` +
        'address an hour, then 429 `rate_limited` with `Retry-After` (counted before the look-up, so known and ' +
        'unknown addresses are limited alike).',
      tag: TAG,
      auth: ['public'],
      body: PasswordForgotRequest,
      responses: {
        202: { description: 'Accepted (same answer for any address)', schema: PasswordForgotAccepted },
      },
      errors: [{ status: 429, code: 'rate_limited', description: 'too many requests; see Retry-After' }],
      handler: async ({ body, req, res }) => {
        await passwords.forgot(body, requestMeta(req, res));
        return {
          status: 202,
          body: {
            message: `If the address belongs to an account, a reset link is on its way; it works once, for ${PASSWORD_RESET_TTL_SECONDS / 60} minutes.`,
          },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/password/reset',
      operationId: 'authPasswordReset',
      summary: 'Set a new password with a reset link’s token',
      description:
        'Spends the token of a reset link (mailed by `password/forgot`, valid ' +
        `${PASSWORD_RESET_TTL_SECONDS / 60} minutes, or printed by the operator’s ` +
        `\`portico user reset-password\`, valid ${OPERATOR_RESET_TTL_SECONDS / 3600} hours) and sets the ` +
        'password (12 to 256 characters). Every session of the user ends (refresh and access tokens stop ' +
        'working; `endedSessions` says how many), other pending links die, a lockout after failed sign-ins ' +
        'is lifted, and the user is mailed a confirmation. Audited `auth.password.reset`. MFA is unchanged.\n\n' +
        `${RESET_LIMITS.tokenTriesPerIp.limit} tries per client address in 15 minutes, then 429 \`rate_limited\`.`,
      tag: TAG,
      auth: ['public'],
      body: PasswordResetRequest,
      responses: { 200: { description: 'The password is changed', schema: PasswordResetDone } },
      errors: [
        { status: 400, code: 'invalid_reset_token', description: 'unknown, used or expired link' },
        { status: 429, code: 'rate_limited', description: 'too many tries; see Retry-After' },
      ],
      handler: async ({ body, req, res }) => {
        const endedSessions = await passwords.reset(body, requestMeta(req, res));
        return { status: 200, body: { passwordChanged: true, endedSessions } };
      },
    }),
  ];
}
