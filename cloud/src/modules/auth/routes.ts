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
  ProductList,
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
      description: 'The user, their role, their tenant and whether MFA is on.',
      tag: TAG,
      auth: ['adminSession'],
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
        'when MFA is turned on because a password may be known to someone else. Default false.',
      tag: TAG,
      auth: ['adminSession'],
      body: MfaEnableRequest,
      responses: { 200: { description: 'MFA is on', schema: MfaEnabled } },
      errors: [
        { status: 401, code: 'invalid_mfa_code', description: 'wrong or already used code' },
        { status: 409, code: 'conflict', description: 'no pending setup, or MFA already on' },
        { status: 429, code: 'rate_limited', description: 'too many wrong codes' },
      ],
      handler: async ({ actor, body, req, res }) => {
        const endedSessions = await mfa.enable(actor, body, requestMeta(req, res));
        return { status: 200, body: { mfaEnabled: true, endedSessions } };
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
        if (body.mfaTicket) return withCookie(await mfa.redeemTicket(body.mfaTicket, body.code, meta));
        if (actor.kind !== 'adminSession') {
          throw invalidFields([{ path: 'body.mfaTicket', message: 'Required without a session token' }]);
        }
        const at = await mfa.verifyInSession(actor.userId, body.code, meta);
        return { status: 200, body: { verified: true, verifiedAt: at.toISOString() } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/auth/mfa/disable',
      operationId: 'authMfaDisable',
      summary: 'Turn MFA off (needs a current code)',
      description:
        'Body `{ code }` (JSON, on DELETE) with a current code; removes the secret. Same replay and ' +
        'rate-limit rules as `mfa/enable`.',
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
  ];
}
