// Wire types of the check-in routes (contract 4.6): liveness challenge, identify, QR tokens, manual.
import { Id, Timestamp } from './common.js';
import { CheckinMethod, GeofenceStatus } from './events.js';
import { z } from './zod.js';

export const TenantSlugParams = z.object({
  tenantSlug: z.string().min(1).max(40).openapi({ example: 'demo' }),
});

export const LivenessChallenge = z
  .object({
    nonce: z.string().openapi({
      description:
        'Single-use, HMAC-signed anti-replay token. Send it with the frame to `identify` before `expiresAt`; ' +
        'a second use, an expired or a forged nonce is refused with 400 `invalid_nonce`.',
      example: '01a20093e4ae7b62b338e614225c4a82.1795306081.Zk3…',
    }),
    expiresAt: Timestamp,
    challenge: z.enum(['passive']).openapi({
      description:
        '`passive`: hold still, look at the camera; liveness is judged from the submitted frame by the ' +
        'passive anti-spoof model. (Active challenges such as blink or head turn need several frames and are ' +
        'not offered by this single-frame endpoint.)',
    }),
  })
  .openapi('LivenessChallenge');

export const GeoPoint = z
  .object({
    lat: z.number().min(-90).max(90).openapi({ example: 38.7223 }),
    lng: z.number().min(-180).max(180).openapi({ example: -9.1393 }),
  })
  .openapi('GeoPoint');

const frame = z
  .string()
  .min(1)
  .openapi({ description: 'JPEG or PNG, base64, with or without a `data:image/...;base64,` prefix.' });

export const IdentifyRequest = z
  .strictObject({
    frame,
    nonce: z
      .string()
      .max(256)
      .optional()
      .openapi({ description: 'From the liveness challenge; required when the tenant requires liveness.' }),
    eventId: Id.optional().openapi({
      description: 'Check in to this event: its capacity and geofence apply.',
    }),
    location: GeoPoint.optional().openapi({ description: 'Where the device is, for the event geofence.' }),
    deviceId: z.string().max(128).optional().openapi({ description: 'Free label of the kiosk or device.' }),
  })
  .openapi('IdentifyRequest');

export const CheckinOutcome = z.enum(['success', 'denied', 'liveness_failed', 'geofence_alert']).openapi({
  description:
    '`success` recognised and admitted; `geofence_alert` recognised and admitted, but outside the event ' +
    'geofence; `denied` not admitted (see `reason`); `liveness_failed` the frame failed the passive liveness check.',
});

export const DenialReason = z
  .enum(['not_recognised', 'capacity_reached', 'event_closed', 'method_not_allowed'])
  .openapi({ description: 'Why a check-in was denied.' });

export const CheckinResult = z
  .object({
    checkInId: Id,
    outcome: CheckinOutcome,
    reason: DenialReason.nullable(),
    method: CheckinMethod,
    person: z
      .object({
        id: Id,
        displayName: z.string().openapi({ description: 'First name only: safe to show on a kiosk screen.' }),
      })
      .nullable(),
    eventId: Id.nullable(),
    score: z.number().nullable().openapi({ description: 'Best cosine similarity (facial only).' }),
    threshold: z
      .number()
      .nullable()
      .openapi({ description: "The tenant's matchThreshold used (facial only)." }),
    livenessScore: z.number().nullable(),
    geofenceStatus: GeofenceStatus,
    occurredAt: Timestamp,
  })
  .openapi('CheckinResult');
export type CheckinResult = z.infer<typeof CheckinResult>;

export const IdentityParams = z.object({ identityId: Id });

export const QrToken = z
  .object({
    identityId: Id,
    token: z.string().openapi({ description: 'Opaque; encode it in the QR code.' }),
    url: z.url().openapi({ description: 'The public check-in URL the QR code can carry.' }),
    qrCode: z.string().openapi({ description: 'PNG data URL of a QR code for `url`.' }),
    createdAt: Timestamp,
  })
  .openapi('QrToken');

export const QrTokenParams = z.object({ token: z.string().min(16).max(128) });

export const QrCheckinQuery = z.object({
  eventId: Id.optional(),
  lat: z.coerce.number().min(-90).max(90).optional(),
  lng: z.coerce.number().min(-180).max(180).optional(),
  deviceId: z.string().max(128).optional(),
});

export const ManualCheckinRequest = z
  .strictObject({
    personId: Id,
    eventId: Id.optional(),
    deviceId: z.string().max(128).optional(),
  })
  .openapi('ManualCheckinRequest');
