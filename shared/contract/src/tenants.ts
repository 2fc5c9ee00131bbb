// Wire types of `/v1/tenants/{id}` and its settings. The settings defaults live here so every
// package (cloud, agent, kiosk) agrees on them.
import {
  FACE_LINE_DEFAULTS,
  LIVENESS_CHALLENGE_DEFAULT,
  LIVENESS_CHALLENGE_MODES,
  PASSIVE_LIVE_LINE,
} from '@portico/checkin-policy';
import { Id, Text, Timestamp } from './common.js';
import { z } from './zod.js';

/** The languages person-facing pages and mails speak. */
export const PERSON_LOCALES = ['en', 'pt-BR'] as const;
export const PersonLocale = z.enum(PERSON_LOCALES).openapi('PersonLocale', {
  description: 'A language of the person-facing pages and mails: `en` or `pt-BR`.',
});
export type PersonLocale = z.infer<typeof PersonLocale>;

/** Second factors that settle a face between the refuse and the accept line (a step-up). */
export const STEP_UP_FACTORS = ['qr', 'staff', 'document_last4', 'birth_date'] as const;
export const StepUpFactor = z.enum(STEP_UP_FACTORS).openapi('StepUpFactor', {
  description:
    'A second factor bound to the candidate: `qr` the candidate’s own identity QR token or their guest ' +
    'invitation’s link token; `staff` a staff confirmation at the door (API-key, admin or device callers ' +
    'only); `document_last4` the last 4 digits of the candidate’s document; `birth_date` their birth date.',
});
export type StepUpFactor = z.infer<typeof StepUpFactor>;

/**
 * Which data a call acts on. A tenant's sandbox is a tenant of its own, linked to its live tenant:
 * `pk_test_` keys, and admin sessions that send `x-portico-environment: sandbox`, act on it.
 */
export const Environment = z.enum(['live', 'sandbox']);
export type Environment = z.infer<typeof Environment>;

/** The admin session's sandbox switch: `sandbox` acts on the tenant's sandbox, `live` (or none) on live. */
export const ENVIRONMENT_HEADER = 'x-portico-environment';

export const Tenant = z
  .object({
    id: Id.openapi({
      description:
        'A sandbox has an id of its own (its webhooks and bus topics carry it); paths take either.',
    }),
    slug: z.string().openapi({
      description:
        'Used in public paths, e.g. `/v1/public/checkin/{tenantSlug}/…`. A sandbox answers its live tenant’s ' +
        'slug: the same paths reach the sandbox with a sandbox credential.',
    }),
    name: z.string(),
    status: z.enum(['active', 'suspended']),
    environment: Environment,
    sandboxOf: Id.nullable().openapi({ description: 'A sandbox’s live tenant; null for a live tenant.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi('Tenant');
export type Tenant = z.infer<typeof Tenant>;

export const Sandbox = z
  .object({
    tenantId: Id.openapi({
      description: 'The sandbox’s own tenant id: its webhooks and bus topics carry it.',
    }),
    liveTenantId: Id,
    createdAt: Timestamp,
    webhookSecret: z.string().openapi({
      description:
        'The secret that signs the sandbox’s webhooks (`X-Service-Signature`), its own, not the live one.',
      example: 'whsec_…',
    }),
  })
  .openapi('Sandbox');
export type Sandbox = z.infer<typeof Sandbox>;

export const SandboxReset = z
  .object({
    tenantId: Id,
    resetAt: Timestamp,
    erased: z
      .object({
        persons: z.number().int(),
        events: z.number().int(),
        guests: z.number().int(),
        checkIns: z.number().int(),
        images: z.number().int(),
        devices: z.number().int(),
      })
      .openapi({ description: 'What the reset erased (everything else of the sandbox went with it).' }),
  })
  .openapi('SandboxReset');
export type SandboxReset = z.infer<typeof SandboxReset>;

export const TenantPatch = z
  .strictObject({ name: Text.trim().min(1).max(200) })
  .partial()
  .openapi('TenantPatch', {
    description: 'Only the display name can change; the slug is fixed (public URLs use it).',
  });
export type TenantPatch = z.infer<typeof TenantPatch>;

export const AgePolicy = z
  .strictObject({
    minimumAge: z
      .number()
      .int()
      .min(0)
      .max(150)
      .nullable()
      .openapi({ description: 'Minimum age in whole years; null means no age rule.', example: 18 }),
    belowMinimum: z.enum(['deny', 'require_guardian_consent']).openapi({
      description:
        'What happens to a person under `minimumAge`. `deny`: registering them (a birthDate under the age) is ' +
        '400 `age_below_minimum`, and so is enrolling their face. `require_guardian_consent`: they may be ' +
        'registered, but enrolling their face needs `guardianConsent` (else 400 `guardian_consent_required`). ' +
        'With a `minimumAge` set, enrolling a person without a birthDate is 400 `birth_date_required`.',
    }),
  })
  .openapi('AgePolicy');
export type AgePolicy = z.infer<typeof AgePolicy>;

/** Who may register a person at the tenant without credentials (`POST /v1/public/onboarding/register`). */
export const SELF_REGISTRATION_MODES = ['off', 'invitation', 'open_verified'] as const;
export const SelfRegistration = z.enum(SELF_REGISTRATION_MODES).openapi({
  description:
    'Public self-registration (`POST /v1/public/onboarding/register`). `off` (the default for new ' +
    'tenants): refused with 403 `self_registration_off`; persons come from the tenant (console, API, ' +
    'import) and enroll through the links it sends. `invitation`: only with a guest invitation of one of ' +
    'the tenant’s events (`invitation: { eventToken, guestToken }`, from the invitation the guest received ' +
    'by e-mail); the person is linked to that guest, and enrollment links keep working. `open_verified`: ' +
    'anyone, but the enrollment token is never in the answer: it is e-mailed to the address given, so ' +
    'only the holder of that mailbox can enroll a face. Tenants that existed before this setting were ' +
    'moved to `open_verified`.',
});
export type SelfRegistration = z.infer<typeof SelfRegistration>;

/** The most an API key's check-in limit may be set to: the tenant's own ceiling of identify a minute. */
export const API_KEY_CHECKINS_MAX = 1_200;

export const TenantSettings = z
  .strictObject({
    webhookUrl: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .nullable()
      .openapi({
        description:
          'http(s) URL receiving the signed webhook POSTs; null turns webhooks off. Loopback, private and ' +
          'link-local hosts are refused (SSRF) unless the operator allows them.',
        example: 'https://hooks.example.com/portico',
      }),
    geofenceRadiusMetros: z
      .number()
      .min(0)
      .max(100_000)
      .openapi({ description: 'Default geofence radius of an event, in metres.', example: 200 }),
    age_policy: AgePolicy,
    selfRegistration: SelfRegistration,
    biometricQualityLevel: z
      .number()
      .min(0)
      .max(1)
      .openapi({ description: 'Minimum face quality (0.0–1.0) accepted at enrollment.', example: 0.5 }),
    matchThreshold: z
      .number()
      .min(0)
      .max(1)
      .openapi({
        description:
          'Accept line (0.0–1.0) on the calibrated match score: a face at or above it is admitted on its own. ' +
          'Higher admits fewer strangers and sends more enrolled people to step-up. Between `stepUpThreshold` ' +
          'and this line a second factor decides (`step_up_required`). Measured rates at the default: see README.',
        example: FACE_LINE_DEFAULTS.matchThreshold,
      }),
    stepUpThreshold: z
      .number()
      .min(0)
      .max(1)
      .openapi({
        description:
          'Refuse line (0.0–1.0, at most `matchThreshold`, else 400 `validation_failed`): below it a face is ' +
          'refused (`not_recognised`); from it up to `matchThreshold` identify answers `step_up_required` and ' +
          'the person completes the check-in with one of `stepUpFactors`. Equal to `matchThreshold`: no step-up.',
        example: FACE_LINE_DEFAULTS.stepUpThreshold,
      }),
    probeQualityMin: z
      .number()
      .min(0)
      .max(1)
      .openapi({
        description:
          'Quality floor of a check-in photo (0.0–1.0, from face size, sharpness, light and pose): below it ' +
          'identify decides nothing and answers 422 `face_retake` with what to fix; 0 judges every photo.',
        example: FACE_LINE_DEFAULTS.probeQualityMin,
      }),
    stepUpFactors: z
      .array(StepUpFactor)
      .min(1)
      .max(STEP_UP_FACTORS.length)
      .refine((f) => new Set(f).size === f.length, 'each factor once')
      .openapi({
        description:
          'The second factors a step-up accepts (default `["qr", "staff"]`). A short code (`document_last4`, ' +
          '`birth_date`) is weaker than a QR token: anyone who knows the person may know it.',
        example: ['qr', 'staff'],
      }),
    livenessThreshold: z
      .number()
      .min(0)
      .max(1)
      .openapi({ description: 'Minimum passive-liveness score (0.0–1.0) for a live face.', example: 0.5 }),
    requireLiveness: z.boolean().openapi({ description: 'Refuse a facial check-in that fails liveness.' }),
    livenessChallenge: z.enum(LIVENESS_CHALLENGE_MODES).openapi({
      description:
        'When a device asks the person at the door for the active challenge (blink or turn the head), with ' +
        '`requireLiveness`. `when_uncertain` (default): the kiosk first takes two frames as the person comes ' +
        `into view; every one scoring at least ${PASSIVE_LIVE_LINE} on the passive model, and not one still ` +
        'picture repeated, passes without the challenge; all under `livenessThreshold` fail; anything else ' +
        'asks for the challenge. `always`: every face performs it (about 3 s more per person), for venues ' +
        'that must stop replayed video at any cost. The API’s own identify is not affected.',
    }),
    allowDuplicateFaces: z
      .boolean()
      .openapi({ description: 'Allow enrolling a face that already matches another person of the tenant.' }),
    qrTokenTtlHours: z
      .number()
      .int()
      .min(1)
      .max(87_600)
      .openapi({
        description:
          'Lifetime of a QR check-in token, in hours from its creation (1 to 87600, default 720 = 30 days). ' +
          'An expired token is refused with 410 `qr_token_expired`; reading the identity’s token again issues ' +
          'a new one (rotation). A change applies to existing tokens too.',
        example: 720,
      }),
    qrRepeatWindowMinutes: z
      .number()
      .int()
      .min(0)
      .max(1_440)
      .openapi({
        description:
          'A QR token admitted again within this many minutes (same event, or no event) records nothing new ' +
          'and answers the earlier check-in with `alreadyCheckedIn: true` (0 to 1440, default 5; 0 records ' +
          'every scan).',
        example: 5,
      }),
    syncCheckinImages: z.boolean().openapi({
      description:
        'Edge devices upload the frame of each face decision with it (`SyncItem.frame`), stored encrypted as ' +
        'a check-in image like an online identification’s. Default false: frames never leave the device, and ' +
        'a frame sent anyway is not stored (the check-in is).',
    }),
    refreshTemplates: z.boolean().openapi({
      description:
        'Default false. On: a facial check-in admitted on the face alone (no step-up) with a calibrated score ' +
        'at least 0.1 above `matchThreshold` refreshes the person’s template, which becomes the mean of their ' +
        'enrollment photos and their last 2 such check-ins. Those check-in face embeddings are kept as template ' +
        'data (encrypted, at most 2 per person, audited as `face_template.refreshed`) until the next one ' +
        'replaces them, a re-enrollment, or the person’s deletion, anonymisation or biometric withdrawal. ' +
        'Turning it off stops refreshes; the kept ones stay until then.',
    }),
    identifyCallers: z.enum(['credentialed', 'anonymous_with_challenge']).openapi({
      description:
        'Who may call `POST /v1/public/checkin/{tenantSlug}/identify`. `credentialed` (default): API keys with ' +
        'the `checkin` scope only (devices decide on their own replica and sync); a call without credentials is ' +
        '403 `anonymous_identify_not_allowed`, since anyone with a photo of an enrolled person could otherwise ' +
        'check them in. `anonymous_with_challenge`: web callers without credentials too, each with a fresh ' +
        'liveness nonce that asks for an active challenge (`blink` or `turn_head`): identify takes the 3 to 8 ' +
        'frames that show it (`frames`, judged together as the device agent judges its own; a still photo ' +
        'repeated fails) and answers the outcome only (no person, no scores, no candidate).',
    }),
    apiKeyCheckinsPerMinute: z
      .number()
      .int()
      .min(10)
      .max(API_KEY_CHECKINS_MAX)
      .openapi({
        description:
          'Calls a minute one API key may make to each public check-in route (identify, liveness challenge, ' +
          'step-up, QR), counted per key, whatever address it calls from (10 to 1200, default 900: a server ' +
          'identifying 10 people a second, with room for retries and uneven timing). The tenant’s ceiling of ' +
          '1,200 identifications a minute across all its callers stays; over either limit is 429 ' +
          '`rate_limited` with `Retry-After`. Callers without credentials are limited per address instead.',
        example: 900,
      }),
    requireMfaForAdmins: z.boolean().openapi({
      description:
        'Default false. On: an owner or admin without MFA may sign in only to set it up: their session answers ' +
        '`mfaSetupRequired: true` in `GET /v1/auth/me` (and in the login answer’s `user`) and may call only ' +
        '`GET /v1/auth/me`, `POST /v1/auth/mfa/setup`, `POST /v1/auth/mfa/enable` and `POST /v1/auth/logout`; ' +
        'anything else is 403 `mfa_setup_required`. Operators are not affected. Turning it on is refused ' +
        '(409 `conflict`) to a user whose own MFA is off, so nobody locks themselves into the setup by accident.',
    }),
    defaultLocale: PersonLocale.openapi({
      description:
        'The language guests and persons are served in when an event does not name its own ' +
        '(`branding.locale`): their invitation, check-in and enrollment pages and the mails sent to them ' +
        '(invitation, enrollment link). Default `en`.',
      example: 'pt-BR',
    }),
  })
  .openapi('TenantSettings');
export type TenantSettings = z.infer<typeof TenantSettings>;

export const TENANT_SETTINGS_DEFAULTS: TenantSettings = {
  webhookUrl: null,
  geofenceRadiusMetros: 200,
  age_policy: { minimumAge: null, belowMinimum: 'deny' },
  selfRegistration: 'off',
  biometricQualityLevel: 0.5,
  matchThreshold: FACE_LINE_DEFAULTS.matchThreshold,
  stepUpThreshold: FACE_LINE_DEFAULTS.stepUpThreshold,
  probeQualityMin: FACE_LINE_DEFAULTS.probeQualityMin,
  stepUpFactors: ['qr', 'staff'],
  livenessThreshold: 0.5,
  requireLiveness: true,
  livenessChallenge: LIVENESS_CHALLENGE_DEFAULT,
  allowDuplicateFaces: false,
  qrTokenTtlHours: 720,
  qrRepeatWindowMinutes: 5,
  syncCheckinImages: false,
  refreshTemplates: false,
  identifyCallers: 'credentialed',
  requireMfaForAdmins: false,
  defaultLocale: 'en',
  apiKeyCheckinsPerMinute: 900,
};

/** Partial update: only the fields sent change; `age_policy` is merged field by field; unknown fields are a 400. */
export const TenantSettingsPatch = TenantSettings.extend({ age_policy: AgePolicy.partial() })
  .partial()
  .openapi('TenantSettingsPatch');
export type TenantSettingsPatch = z.infer<typeof TenantSettingsPatch>;
