// Wire types of `/v1/auth/*`: login, refresh, logout, profile, products and TOTP MFA.
import { Id, Text, Timestamp } from './common.js';
import { z } from './zod.js';

/** Access tokens (session JWTs) live 15 minutes. */
export const ACCESS_TOKEN_TTL_SECONDS = 900;
/** A refresh-token family (one login) lives 30 days, absolute: rotation does not extend it. */
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
/** The MFA ticket handed out by a password login of an MFA user lives 5 minutes. */
export const MFA_TICKET_TTL_SECONDS = 300;
/** Name of the httpOnly refresh cookie. */
export const REFRESH_COOKIE_NAME = 'portico_refresh';

export const UserRole = z
  .enum(['owner', 'admin', 'operator'])
  .openapi({ description: '`owner` and `admin` manage the tenant; `operator` runs check-in.' });
export type UserRole = z.infer<typeof UserRole>;

export const LoginRequest = z
  .strictObject({
    email: z.email().max(320).openapi({ example: 'admin@demo.portico.local' }),
    password: Text.min(1).max(256).openapi({ example: 'correct horse battery staple' }),
  })
  .openapi('LoginRequest');
export type LoginRequest = z.infer<typeof LoginRequest>;

export const UserProfile = z
  .object({
    id: Id,
    email: z.string(),
    name: z.string().nullable(),
    role: UserRole,
    mfaEnabled: z.boolean().openapi({ description: 'Whether login asks for a TOTP code.' }),
    tenant: z.object({ id: Id, slug: z.string(), name: z.string() }),
    lastLoginAt: Timestamp.nullable(),
    createdAt: Timestamp,
  })
  .openapi('UserProfile');
export type UserProfile = z.infer<typeof UserProfile>;

export const TokenResponse = z
  .object({
    accessToken: z
      .string()
      .openapi({ description: 'HS256 JWT; send as `Authorization: Bearer <accessToken>`.' }),
    tokenType: z.literal('Bearer'),
    expiresIn: z
      .number()
      .int()
      .openapi({ description: 'Seconds until the access token expires (900).', example: 900 }),
    user: UserProfile,
  })
  .openapi('TokenResponse');
export type TokenResponse = z.infer<typeof TokenResponse>;

export const MfaChallenge = z
  .object({
    mfaRequired: z.literal(true),
    mfaTicket: z.string().openapi({
      description: 'Single-use ticket; redeem it with a TOTP code at `POST /v1/auth/mfa/verify`.',
    }),
    expiresIn: z
      .number()
      .int()
      .openapi({ description: 'Seconds the ticket stays valid (300).', example: 300 }),
  })
  .openapi('MfaChallenge');
export type MfaChallenge = z.infer<typeof MfaChallenge>;

export const LoginResponse = z.union([TokenResponse, MfaChallenge]).openapi('LoginResponse');
export type LoginResponse = z.infer<typeof LoginResponse>;

export const TotpCode = z
  .string()
  .regex(/^\d{6}$/, 'six digits')
  .openapi({ description: 'Current 6-digit TOTP code (RFC 6238, SHA-1, 30 s).', example: '123456' });

export const MfaCodeRequest = z.strictObject({ code: TotpCode }).openapi('MfaCodeRequest');

export const MfaEnableRequest = z
  .strictObject({
    code: TotpCode,
    endOtherSessions: z
      .boolean()
      .default(false)
      .openapi({
        description:
          'true: also end every other session of this user (their refresh and access tokens stop working ' +
          'at once), e.g. when MFA is turned on because a password may have leaked. The calling session stays.',
      }),
  })
  .openapi('MfaEnableRequest');

export const MfaVerifyRequest = z
  .strictObject({
    mfaTicket: Text.min(1)
      .max(200)
      .optional()
      .openapi({ description: 'Ticket from the login answer. Omit it to re-check a code inside a session.' }),
    code: TotpCode,
  })
  .openapi('MfaVerifyRequest');
export type MfaVerifyRequest = z.infer<typeof MfaVerifyRequest>;

export const MfaVerified = z
  .object({ verified: z.literal(true), verifiedAt: Timestamp })
  .openapi('MfaVerified', { description: 'Answer to a session re-check (no ticket): the code was right.' });

export const MfaVerifyResponse = z.union([TokenResponse, MfaVerified]).openapi('MfaVerifyResponse');

export const MfaSetupResponse = z
  .object({
    secret: z
      .string()
      .openapi({ description: 'Base32 TOTP secret, for manual entry.', example: 'JBSWY3DPEHPK3PXP' }),
    otpauthUri: z.string().openapi({ example: 'otpauth://totp/Portico:admin%40demo.portico.local?secret=…' }),
    qrCodeDataUrl: z
      .string()
      .openapi({ description: 'PNG QR code of `otpauthUri`, as a `data:image/png;base64,` URL.' }),
  })
  .openapi('MfaSetupResponse');
export type MfaSetupResponse = z.infer<typeof MfaSetupResponse>;

export const MfaState = z.object({ mfaEnabled: z.boolean() }).openapi('MfaState');

export const MfaEnabled = MfaState.extend({
  endedSessions: z
    .number()
    .int()
    .openapi({ description: 'Other sessions of the user ended by `endOtherSessions` (0 without it).' }),
}).openapi('MfaEnabled');

export const Product = z
  .object({
    id: z.enum(['admin-console', 'checkin-kiosk', 'developer-api']),
    name: z.string(),
    description: z.string(),
    url: z.string().openapi({ description: 'Where the SSO hub sends the user.' }),
    roles: z.array(UserRole).openapi({ description: 'Roles that may open the product.' }),
  })
  .openapi('Product');
export type Product = z.infer<typeof Product>;

export const ProductList = z.object({ items: z.array(Product) }).openapi('ProductList');
export type ProductList = z.infer<typeof ProductList>;
