// Wire types of the check-in routes (contract 4.6): liveness challenge, identify, QR tokens, manual.
import { Id, queryNumber, Text, Timestamp } from './common.js';
import { CheckinMethod, GeofenceStatus } from './events.js';
import { StepUpFactor } from './tenants.js';
import { z } from './zod.js';

export const TenantSlugParams = z.object({
  tenantSlug: Text.min(1).max(40).openapi({ example: 'demo' }),
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
    challenge: z.enum(['passive', 'blink', 'turn_head']).openapi({
      description:
        '`passive` (API keys and devices): hold still, look at the camera; liveness is judged from the ' +
        'submitted frame by the passive anti-spoof model. To a caller without credentials, where the tenant ' +
        'takes them (`identifyCallers: anonymous_with_challenge`), an active challenge: `blink` (eyes open, ' +
        'closed, open) or `turn_head` (turn the head to one side and back); identify then needs the frames ' +
        'taken while the person did it (`frames`), judged together.',
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
    frames: z
      .array(frame)
      .min(3)
      .max(8)
      .optional()
      .openapi({
        description:
          'Callers without credentials: the 3 to 8 frames taken, in order, while the person did the nonce’s ' +
          'active challenge (`blink` or `turn_head`); `frame` is one of them (the one identified). Each must ' +
          'show the same person as `frame`.',
      }),
    nonce: Text.max(256)
      .optional()
      .openapi({ description: 'From the liveness challenge; required when the tenant requires liveness.' }),
    eventId: Id.optional().openapi({
      description: 'Check in to this event: its capacity and geofence apply.',
    }),
    location: GeoPoint.optional().openapi({ description: 'Where the device is, for the event geofence.' }),
    deviceId: Text.max(128).optional().openapi({ description: 'Free label of the kiosk or device.' }),
  })
  .openapi('IdentifyRequest');

export const CheckinOutcome = z.enum(['success', 'denied', 'liveness_failed', 'geofence_alert']).openapi({
  description:
    '`success` recognised and admitted; `geofence_alert` recognised and admitted, but outside the event ' +
    'geofence; `denied` not admitted (see `reason`); `liveness_failed` the frame failed the passive liveness check.',
});

export const DenialReason = z
  .enum([
    'not_recognised',
    'capacity_reached',
    'event_closed',
    'method_not_allowed',
    'already_checked_in',
    'step_up_failed',
  ])
  .openapi({
    description:
      'Why a check-in was denied. `already_checked_in`: the guest or person was admitted to the event before ' +
      'and the event’s `reentry` is `refuse`. `step_up_failed`: the face fell between the refuse and the ' +
      'accept line and the second factor given did not belong to the candidate.',
  });

/** How an admission was reached beyond the face: null when the face alone decided (or the method is not facial). */
export const StepUpVia = z
  .object({ factor: StepUpFactor })
  .nullable()
  .openapi('StepUpVia', {
    description:
      'How the check-in was reached: `{ factor }` when a face between the refuse and the accept line was ' +
      'settled by a second factor (admitted, or denied with `step_up_failed`); null when the face alone ' +
      'decided, or the method is not facial.',
  });
export type StepUpVia = z.infer<typeof StepUpVia>;

// Scores would let an anonymous caller tune a photo or a spoof step by step: only callers with
// credentials see them.
const SCORES_FOR = 'Only for API-key, admin-session and device callers; absent for anonymous callers.';

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
    score: z
      .number()
      .nullable()
      .optional()
      .openapi({
        description: `Calibrated match score of the best candidate, 0.0 to 1.0 (facial only; see the tenant setting matchThreshold). ${SCORES_FOR}`,
      }),
    threshold: z
      .number()
      .nullable()
      .optional()
      .openapi({
        description: `The tenant's matchThreshold the calibrated score was compared with (facial only). ${SCORES_FOR}`,
      }),
    livenessScore: z
      .number()
      .nullable()
      .optional()
      .openapi({ description: `Passive liveness score (facial only). ${SCORES_FOR}` }),
    geofenceStatus: GeofenceStatus,
    occurredAt: Timestamp,
    stepUp: StepUpVia,
  })
  .openapi('CheckinResult');
export type CheckinResult = z.infer<typeof CheckinResult>;

export const StepUpRequired = z
  .object({
    outcome: z.literal('step_up_required').openapi({
      description: 'Nothing recorded yet: the face is between the tenant’s refuse and accept lines.',
    }),
    stepUp: z.object({
      attemptId: Id.openapi({ description: 'Complete it with `POST .../step-up/{attemptId}`, once.' }),
      factors: z
        .array(StepUpFactor)
        .openapi({ description: 'The factors the tenant accepts (`stepUpFactors`).' }),
      expiresAt: Timestamp.openapi({ description: '60 seconds after the identification.' }),
    }),
    eventId: Id.nullable(),
    candidate: z
      .object({ id: Id, displayName: z.string() })
      .optional()
      .openapi({
        description: `The person the face is closest to (first name only). ${SCORES_FOR} An anonymous caller never learns who it is.`,
      }),
    score: z
      .number()
      .optional()
      .openapi({ description: `Calibrated match score of the candidate. ${SCORES_FOR}` }),
    threshold: z
      .number()
      .optional()
      .openapi({ description: `The tenant's matchThreshold (accept line). ${SCORES_FOR}` }),
    livenessScore: z
      .number()
      .nullable()
      .optional()
      .openapi({ description: `Passive liveness score. ${SCORES_FOR}` }),
  })
  .openapi('StepUpRequired', {
    description:
      'The face is neither clearly the candidate nor clearly not: prove who you are with a second factor ' +
      'within 60 seconds. Nothing is recorded until the step-up is completed or fails.',
  });
export type StepUpRequired = z.infer<typeof StepUpRequired>;

export const IdentifyResult = z.union([CheckinResult, StepUpRequired]).openapi('IdentifyResult', {
  description: 'The recorded decision (`CheckinResult`), or `step_up_required` (`StepUpRequired`).',
});
export type IdentifyResult = z.infer<typeof IdentifyResult>;

export const StepUpParams = z.object({
  tenantSlug: Text.min(1).max(40).openapi({ example: 'demo' }),
  attemptId: Id,
});

export const StepUpRequest = z
  .discriminatedUnion('factor', [
    z.strictObject({
      factor: z.literal('qr'),
      token: Text.min(16).max(128).openapi({
        description: 'The candidate’s identity QR token, or their guest invitation’s link token.',
      }),
    }),
    z.strictObject({
      factor: z.literal('document_last4'),
      code: z
        .string()
        .regex(/^[0-9]{4}$/)
        .openapi({ description: 'The last 4 digits of the candidate’s document.', example: '1234' }),
    }),
    z.strictObject({
      factor: z.literal('birth_date'),
      code: z.iso
        .date()
        .openapi({ description: 'The candidate’s birth date, YYYY-MM-DD.', example: '1990-04-12' }),
    }),
    z.strictObject({ factor: z.literal('staff') }),
  ])
  .openapi('StepUpRequest', {
    description:
      'The second factor of a step-up. `staff`: a staff member at the door confirms the person (API-key, ' +
      'admin-session or device callers only).',
  });
export type StepUpRequest = z.infer<typeof StepUpRequest>;

export const IdentityParams = z.object({ identityId: Id });

export const QrToken = z
  .object({
    identityId: Id,
    token: z.string().openapi({ description: 'Opaque; encode it in the QR code.' }),
    url: z.url().openapi({ description: 'The public check-in URL the QR code can carry.' }),
    qrCode: z.string().openapi({ description: 'PNG data URL of a QR code for `url`.' }),
    createdAt: Timestamp,
    expiresAt: Timestamp.openapi({
      description:
        "`createdAt` plus the tenant's `qrTokenTtlHours`; from then on the token is refused (410 " +
        '`qr_token_expired`) and reading the token again issues a new one.',
    }),
  })
  .openapi('QrToken');

export const QrTokenParams = z.object({ token: Text.min(16).max(128) });

export const QrCheckinQuery = z.object({
  eventId: Id.optional(),
  lat: queryNumber(z.number().min(-90).max(90)).optional(),
  lng: queryNumber(z.number().min(-180).max(180)).optional(),
  deviceId: Text.max(128).optional(),
});

export const QrCheckinResult = CheckinResult.extend({
  alreadyCheckedIn: z.boolean().openapi({
    description:
      "true: this token was already admitted (to the same event, or with no event) within the tenant's " +
      '`qrRepeatWindowMinutes`; nothing new was recorded and the body is that earlier check-in.',
  }),
}).openapi('QrCheckinResult');
export type QrCheckinResult = z.infer<typeof QrCheckinResult>;

export const ManualCheckinRequest = z
  .strictObject({
    personId: Id.optional().openapi({ description: 'The person checked in (or `guestId`, not both).' }),
    guestId: Id.optional().openapi({
      description:
        'A guest of `eventId` checked in by hand (a guest without a person too: a walk-in, a guest who never ' +
        'enrolled). With `eventId`; instead of `personId`.',
    }),
    eventId: Id.optional(),
    deviceId: Text.max(128).optional(),
  })
  .superRefine((v, ctx) => {
    if ((v.personId === undefined) === (v.guestId === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['personId'], message: 'send personId or guestId (one of them)' });
    }
    if (v.guestId !== undefined && v.eventId === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['eventId'],
        message: 'a guest is checked in at its event: send eventId',
      });
    }
  })
  .openapi('ManualCheckinRequest', {
    examples: [
      { personId: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d13', eventId: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d14' },
      { guestId: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d15', eventId: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d14' },
    ],
  });

export const CheckinParams = z.object({ checkInId: Id });

export const VoidCheckinRequest = z
  .strictObject({
    reason: Text.trim()
      .min(3)
      .max(500)
      .openapi({ description: 'Why it is taken back (kept with the check-in and in the audit log).' }),
  })
  .openapi('VoidCheckinRequest', { example: { reason: 'Wrong guest ticked at the door' } });
export type VoidCheckinRequest = z.infer<typeof VoidCheckinRequest>;

export const VoidedCheckin = z
  .object({
    checkInId: Id,
    eventId: Id.nullable(),
    voidedAt: Timestamp,
    reason: z.string(),
    guest: z
      .object({
        id: Id,
        status: z.string().openapi({ description: 'The guest status now (back to before the check-in).' }),
        checkedInAt: Timestamp.nullable().openapi({
          description: 'Null unless another admission of the guest still counts.',
        }),
      })
      .nullable()
      .openapi({ description: 'The guest the check-in admitted (null: none).' }),
  })
  .openapi('VoidedCheckin');
export type VoidedCheckin = z.infer<typeof VoidedCheckin>;
