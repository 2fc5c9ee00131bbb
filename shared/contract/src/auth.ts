// Wire types of `/v1/auth/*`: login, refresh, logout, profile, products, TOTP MFA and its recovery
// codes, and the password reset.
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
/** MFA recovery codes come in sets of ten; a new set replaces the old one. */
export const RECOVERY_CODE_COUNT = 10;
/** A password-reset link works once, for 30 minutes. */
export const PASSWORD_RESET_TTL_SECONDS = 30 * 60;

export const ConsoleLanguage = z.enum(['en', 'pt-BR']).openapi('ConsoleLanguage', {
  description: 'A language of the console and of the mails a user receives.',
  example: 'pt-BR',
});
export type ConsoleLanguage = z.infer<typeof ConsoleLanguage>;

/** A password a user chooses (reset, invitation): 12 to 256 characters, as `portico tenant create` asks. */
export const NewPassword = Text.min(12, 'at least 12 characters')
  .max(256)
  .openapi({ description: '12 to 256 characters.', example: 'correct horse battery staple' });

export const UserRole = z
  .enum(['owner', 'admin', 'operator'])
  .openapi({ description: '`owner` and `admin` manage the tenant; `operator` runs check-in.' });
export type UserRole = z.infer<typeof UserRole>;

export const LoginRequest = z
  .strictObject({
    email: z.email().max(320).openapi({ example: 'admin@demo.portico.local' }),
    password: Text.min(1).max(256).openapi({ example: 'correct horse battery staple' }),
    language: ConsoleLanguage.optional().openapi({
      description:
        'The console’s language: kept on the user, it is the language of the mails they receive (recovery ' +
        'code used, password changed, MFA reset). Without it the last one sent stays (default `en`).',
    }),
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
    mfaSetupRequired: z.boolean().openapi({
      description:
        'true when the tenant requires MFA of owners and admins (setting `requireMfaForAdmins`) and this ' +
        'owner or admin has not turned it on: the session may then only set MFA up (`GET /v1/auth/me`, ' +
        '`POST /v1/auth/mfa/setup`, `POST /v1/auth/mfa/enable`, `POST /v1/auth/logout`); every other ' +
        'route answers 403 `mfa_setup_required`. Once MFA is on, the same session may do everything.',
    }),
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

export const RecoveryCode = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z2-9]{4}-?[a-z2-9]{4}-?[a-z2-9]{4}-?[a-z2-9]{4}$/, 'a recovery code: xxxx-xxxx-xxxx-xxxx')
  .openapi({
    description:
      'One of the ten recovery codes shown when MFA was turned on (or last regenerated): 16 characters in ' +
      'groups of four, dashes optional, any case. Each works once.',
    example: 'k7mq-2xzp-9rtc-h4wd',
  });

export const MfaVerifyRequest = z
  .strictObject({
    mfaTicket: Text.min(1)
      .max(200)
      .optional()
      .openapi({ description: 'Ticket from the login answer. Omit it to re-check a code inside a session.' }),
    code: TotpCode.optional().openapi({ description: 'The current TOTP code; or send `recoveryCode`.' }),
    recoveryCode: RecoveryCode.optional().openapi({
      description:
        'With `mfaTicket` only, in place of `code`: a recovery code for a lost authenticator. It is spent, ' +
        'the use is audited (`auth.mfa.recovery_code_used`) and mailed to the user with the codes left.',
    }),
  })
  .refine((b) => (b.code === undefined) !== (b.recoveryCode === undefined), {
    message: 'send either code or recoveryCode',
    path: ['code'],
  })
  .refine((b) => b.recoveryCode === undefined || b.mfaTicket !== undefined, {
    message: 'a recovery code is taken at sign-in only (with mfaTicket)',
    path: ['recoveryCode'],
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

export const RecoveryCodes = z
  .object({
    codes: z
      .array(z.string())
      .length(RECOVERY_CODE_COUNT)
      .openapi({
        description:
          'Ten single-use recovery codes, shown this once (only their hashes are kept). Any earlier set no ' +
          'longer works.',
        example: ['k7mq-2xzp-9rtc-h4wd'],
      }),
    generatedAt: Timestamp,
  })
  .openapi('RecoveryCodes');
export type RecoveryCodes = z.infer<typeof RecoveryCodes>;

export const MfaEnabled = MfaState.extend({
  endedSessions: z
    .number()
    .int()
    .openapi({ description: 'Other sessions of the user ended by `endOtherSessions` (0 without it).' }),
  recoveryCodes: RecoveryCodes,
}).openapi('MfaEnabled');

export const RecoveryCodesRequest = z
  .strictObject({
    code: TotpCode.optional(),
    password: Text.min(1)
      .max(256)
      .optional()
      .openapi({ description: 'The user’s password, in place of `code`.' }),
  })
  .refine((b) => (b.code === undefined) !== (b.password === undefined), {
    message: 'send either code or password',
    path: ['code'],
  })
  .openapi('RecoveryCodesRequest', {
    description:
      'A fresh proof that the signed-in user is at the keyboard: a current TOTP code or the password.',
  });

export const RecoveryCodesState = z
  .object({
    remaining: z
      .number()
      .int()
      .openapi({ description: 'Unused codes of the current set (0 to 10).', example: 9 }),
    generatedAt: Timestamp.nullable().openapi({ description: 'When the current set was made; null: none.' }),
  })
  .openapi('RecoveryCodesState');

export const PasswordForgotRequest = z
  .strictObject({
    email: z.email().max(320).openapi({ example: 'admin@demo.portico.local' }),
    language: ConsoleLanguage.optional().openapi({
      description: 'Language of the mail (default: the user’s last console language, else `en`).',
    }),
  })
  .openapi('PasswordForgotRequest');

export const PasswordForgotAccepted = z
  .object({
    message: z.string().openapi({
      example:
        'If the address belongs to an account, a reset link is on its way; it works once, for 30 minutes.',
    }),
  })
  .openapi('PasswordForgotAccepted');

export const PasswordResetRequest = z
  .strictObject({
    token: Text.min(1)
      .max(200)
      .openapi({ description: 'The token of the mailed (or operator-issued) link.' }),
    password: NewPassword,
  })
  .openapi('PasswordResetRequest');

export const PasswordResetDone = z
  .object({
    passwordChanged: z.literal(true),
    endedSessions: z
      .number()
      .int()
      .openapi({ description: 'Sessions of the user that the reset ended (all of them).', example: 1 }),
  })
  .openapi('PasswordResetDone');

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
