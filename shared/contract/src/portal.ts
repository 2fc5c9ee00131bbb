// Wire types of the person portal (`/v1/me`, `/v1/portal/auth/*`, contract 4.9) and of the data
// protection flows (deletion request, data export, contract 4.10). A portal account is one verified
// e-mail address; it spans every tenant that holds a person with that address.
import { Id, PageQuery, pageOf, Text, Timestamp } from './common.js';
import { GuestStatus } from './event-guests.js';
import { FaceFrame } from './onboarding.js';
import { z } from './zod.js';

/** Lifetime of an e-mailed sign-in link. */
export const MAGIC_LINK_TTL_SECONDS = 15 * 60;
/** Lifetime of a portal JWT and of its session (there is no refresh: the person asks for a new link). */
export const PORTAL_TOKEN_TTL_SECONDS = 3600;
/** Lifetime of the e-mailed token that confirms a deletion request. */
export const DELETION_CONFIRM_TTL_SECONDS = 24 * 3600;
/** Lifetime of an export's signed download link (the archive is erased when it lapses). */
export const DATA_EXPORT_TTL_SECONDS = 7 * 24 * 3600;

export const PortalEmail = Text.trim()
  .toLowerCase()
  .pipe(z.email().max(320))
  // The pipe hides the e-mail check from the OpenAPI generator: state it.
  .openapi({ format: 'email', example: 'ana@example.com' });

export const MagicLinkRequest = z
  .strictObject({
    email: PortalEmail,
    language: z
      .enum(['en', 'pt-BR'])
      .optional()
      .openapi({ description: 'Language of the e-mail (default: the account’s preference, else `en`).' }),
  })
  .openapi('MagicLinkRequest');
export type MagicLinkRequest = z.infer<typeof MagicLinkRequest>;

export const MagicLinkAccepted = z
  .object({
    message: z.string().openapi({
      example: 'If the address is known, a sign-in link is on its way; it is valid for 15 minutes.',
    }),
  })
  .openapi('MagicLinkAccepted');

export const MagicLinkVerifyQuery = z.object({
  token: Text.min(1)
    .max(200)
    .openapi({ description: 'The `token` of the e-mailed link.', example: 'ml_...' }),
});

export const PortalTokenResponse = z
  .object({
    accessToken: z.string().openapi({ description: 'Portal JWT (`type: person_portal`).' }),
    tokenType: z.literal('Bearer'),
    expiresIn: z.number().int().openapi({ example: PORTAL_TOKEN_TTL_SECONDS }),
    sessionId: Id,
  })
  .openapi('PortalTokenResponse');
export type PortalTokenResponse = z.infer<typeof PortalTokenResponse>;

export const PortalTenantLink = z
  .object({ tenantId: Id, tenantName: z.string(), personId: Id })
  .openapi('PortalTenantLink');

export const Me = z
  .object({
    id: Id,
    email: z.string(),
    name: z.string().nullable(),
    phone: z.string().nullable(),
    hasPhoto: z.boolean().openapi({ description: 'A profile photo is set (never used for recognition).' }),
    tenants: z.array(PortalTenantLink).openapi({ description: 'Tenants holding a person with this e-mail.' }),
    createdAt: Timestamp,
  })
  .openapi('Me');
export type Me = z.infer<typeof Me>;

export const MePatch = z
  .strictObject({
    name: Text.trim().min(1).max(200),
    phone: Text.trim().min(3).max(40).nullable(),
    photo: FaceFrame.nullable().openapi({
      description:
        'Profile photo, base64 JPEG or PNG (null removes it). Shown in the portal only: it is not a biometric ' +
        'and is never enrolled or compared.',
    }),
  })
  .partial()
  .openapi('MePatch', {
    description:
      'Changes the portal profile only; each tenant’s own record of the person is the tenant’s to change.',
  });
export type MePatch = z.infer<typeof MePatch>;

export const PortalSession = z
  .object({
    id: Id,
    current: z.boolean().openapi({ description: 'The session of the token making this call.' }),
    userAgent: z.string().nullable(),
    ip: z.string().nullable(),
    createdAt: Timestamp,
    lastSeenAt: Timestamp.openapi({
      description: 'Last call made with this session (updated at most once a minute).',
    }),
    expiresAt: Timestamp,
    revokedAt: Timestamp.nullable(),
  })
  .openapi('PortalSession');
export const PortalSessionList = z.object({ items: z.array(PortalSession) }).openapi('PortalSessionList');

export const BiometricStatus = z
  .object({
    tenantId: Id,
    tenantName: z.string(),
    personId: Id,
    enrolled: z.boolean(),
    enrolledAt: Timestamp.nullable(),
    quality: z.number().min(0).max(1).nullable(),
    modelId: z.string().nullable().openapi({ description: 'Embedding model of the newest template.' }),
    images: z.number().int().openapi({ description: 'Biometric images held (enrollment and check-in).' }),
  })
  .openapi('BiometricStatus');
export const BiometricStatusList = z
  .object({ items: z.array(BiometricStatus) })
  .openapi('BiometricStatusList');

export const TenantIdParams = z.object({ tenantId: Id });

export const BiometricsRevoked = z
  .object({
    tenantId: Id,
    templatesErased: z.number().int(),
    imagesErased: z.number().int(),
  })
  .openapi('BiometricsRevoked');

export const MyCheckIn = z
  .object({
    id: Id,
    tenantId: Id,
    tenantName: z.string(),
    eventId: Id.nullable(),
    eventName: z.string().nullable(),
    method: z.string(),
    outcome: z.string(),
    occurredAt: Timestamp,
  })
  .openapi('MyCheckIn');
export const MyCheckInPage = pageOf(MyCheckIn).openapi('MyCheckInPage');
export const MyCheckInQuery = PageQuery;

/** A guest entry held about the address: the event, its dates and the entry's status (no tokens). */
export const MyGuestEntry = z
  .object({
    id: Id,
    eventId: Id,
    eventName: z.string(),
    eventStartsAt: Timestamp.nullable(),
    eventEndsAt: Timestamp.nullable(),
    eventTimeZone: z.string().openapi({ description: 'IANA time zone the event is held in.' }),
    name: z.string().openapi({ description: 'The name the organisation wrote on the entry.' }),
    status: GuestStatus,
    invitedAt: Timestamp.nullable(),
    confirmedAt: Timestamp.nullable(),
    checkedInAt: Timestamp.nullable(),
  })
  .openapi('MyGuestEntry');

export const MyOrganisation = z
  .object({
    tenantId: Id,
    tenantName: z.string(),
    person: z
      .object({
        id: Id,
        name: z.string(),
        email: z.string().nullable(),
        phone: z.string().nullable(),
        enrolled: z.boolean().openapi({ description: 'A face is enrolled (details: `/v1/me/biometrics`).' }),
      })
      .nullable()
      .openapi({
        description: 'The organisation’s person record with this address; null: guest entries only.',
      }),
    guests: z
      .array(MyGuestEntry)
      .openapi({ description: 'Guest entries with this address, newest event first.' }),
    checkins: z.array(MyCheckIn).openapi({
      description:
        'The newest 50 check-ins of the person or of those guest entries (method and outcome only).',
    }),
    checkinsTotal: z.number().int(),
  })
  .openapi('MyOrganisation');
export type MyOrganisation = z.infer<typeof MyOrganisation>;
export const MyOrganisationList = z.object({ items: z.array(MyOrganisation) }).openapi('MyOrganisationList');

export const NotificationPreferences = z
  .object({
    language: z.enum(['en', 'pt-BR']).openapi({ description: 'Language of the e-mails the portal sends.' }),
    signInAlerts: z.boolean().openapi({
      description: 'E-mail a notice each time a portal session starts (default false).',
    }),
  })
  .openapi('NotificationPreferences');
export type NotificationPreferences = z.infer<typeof NotificationPreferences>;
export const NotificationPreferencesPatch = NotificationPreferences.partial()
  .strict()
  .openapi('NotificationPreferencesPatch');
export const NOTIFICATION_DEFAULTS: NotificationPreferences = { language: 'en', signInAlerts: false };

export const MyBiometricImage = z
  .object({
    id: Id,
    tenantId: Id,
    kind: z.enum(['enrollment', 'checkin']),
    contentType: z.string(),
    byteSize: z.number().int(),
    sha256: z.string(),
    createdAt: Timestamp,
  })
  .openapi('MyBiometricImage');
export const MyBiometricImageList = z
  .object({ items: z.array(MyBiometricImage) })
  .openapi('MyBiometricImageList');

export const DeletionRequestStatus = z.enum(['pending_confirmation', 'confirmed', 'cancelled', 'completed']);

export const DeletionRequest = z
  .object({
    id: Id,
    status: DeletionRequestStatus.openapi({
      description:
        '`pending_confirmation` until the e-mailed token is sent to deletion-confirm; `confirmed` during the ' +
        'grace period (cancellable); `completed` once every tenant’s record is erased; `cancelled`.',
    }),
    requestedAt: Timestamp,
    confirmedAt: Timestamp.nullable(),
    scheduledFor: Timestamp.nullable().openapi({
      description: 'When the erasure runs (confirmation + the operator’s grace period).',
    }),
    cancelledAt: Timestamp.nullable(),
    completedAt: Timestamp.nullable(),
  })
  .openapi('DeletionRequest');
export type DeletionRequest = z.infer<typeof DeletionRequest>;

export const DeletionConfirmRequest = z
  .strictObject({ token: Text.min(1).max(200).openapi({ example: 'dc_...' }) })
  .openapi('DeletionConfirmRequest');

export const DataExportRequest = z
  .strictObject({
    includeImages: z
      .boolean()
      .default(false)
      .openapi({ description: 'Also put the biometric image files (decrypted) in the archive.' }),
  })
  .optional()
  .openapi('DataExportRequest');

export const DataExport = z
  .object({
    id: Id,
    status: z.enum(['pending', 'ready', 'failed', 'expired']),
    requestedAt: Timestamp,
    completedAt: Timestamp.nullable(),
    expiresAt: Timestamp.nullable(),
  })
  .openapi('DataExport');

export const DataExportDownloadParams = z.object({ id: Id });
export const DataExportDownloadQuery = z.object({
  expires: Text.regex(/^[0-9]{1,15}$/).openapi({ description: 'Expiry (Unix ms) signed into the link.' }),
  signature: Text.regex(/^[A-Za-z0-9_-]{43}$/).openapi({ description: 'HMAC-SHA256 of id and expiry.' }),
});
