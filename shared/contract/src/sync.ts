// Edge devices: their registration by a tenant admin or pairing by a short code, the events each
// serves, the offline check-ins they upload (`POST /v1/sync/batch`) and the replica of an event they
// decide from.
import { LIVENESS_CHALLENGE_MODES } from '@portico/checkin-policy';
import { CheckinOutcome, DenialReason } from './checkin.js';
import { Id, queryNumber, Text, Timestamp } from './common.js';
import { EventStatus } from './event-guests.js';
import { CheckinMethod, Reentry } from './events.js';
import { StepUpFactor } from './tenants.js';
import { z } from './zod.js';

export const DeviceCreateRequest = z.strictObject({
  name: Text.trim().min(1).max(120).openapi({ example: 'Entrance A, kiosk 2' }),
});

/** A device counts as online this long after its last authenticated call. */
export const DEVICE_ONLINE_WINDOW_MS = 2 * 60_000;
/** How long a pairing code can be exchanged for a device. */
export const PAIRING_CODE_TTL_MS = 10 * 60_000;
/**
 * The characters of a pairing code: no 0/O, 1/I/L, so a code read aloud or typed from a screen
 * cannot be mistaken (31 characters, 8 of them: about 40 bits).
 */
export const PAIRING_CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
/** The most events one device serves. */
export const DEVICE_EVENTS_MAX = 100;

const DeviceEventIds = z
  .array(Id)
  .max(DEVICE_EVENTS_MAX)
  .openapi({
    description:
      `Events of the caller’s tenant (at most ${DEVICE_EVENTS_MAX}; repeats count once). An id that names ` +
      'no event of the tenant (or a deleted one) is 404 `not_found`.',
    example: ['0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11'],
  });

export const Device = z
  .object({
    id: Id,
    name: z.string(),
    createdAt: Timestamp,
    lastSeenAt: Timestamp.nullable().openapi({ description: 'Last authenticated call of the device.' }),
    revokedAt: Timestamp.nullable(),
    eventIds: z.array(Id).openapi({
      description: 'The events the device serves: it syncs exactly these (`GET /v1/sync/device`).',
    }),
    lastSyncAt: Timestamp.nullable().openapi({
      description: 'Its last `POST /v1/sync/batch` (null: never).',
    }),
    queueLength: z.number().int().nullable().openapi({
      description: 'Check-ins it still held unsent at its last sync, as it reported (null: never reported).',
    }),
    online: z.boolean().openapi({
      description:
        'Not revoked and seen (an authenticated call) within the last 2 minutes. `lastSeenAt` is written at ' +
        'most once a minute, so a device that calls at least once a minute stays online.',
    }),
  })
  .openapi('Device');
export type Device = z.infer<typeof Device>;

export const DeviceCreated = Device.extend({
  token: z.string().openapi({
    description:
      'Shown once. The device sends it as `x-device-token` together with `x-internal-secret`; only its ' +
      'SHA-256 is stored.',
    example: 'pdt_0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11.q5l2c1m0Jw...',
  }),
}).openapi('DeviceCreated');

export const DeviceList = z.object({ items: z.array(Device) }).openapi('DeviceList');

export const DeviceRenameRequest = z
  .strictObject({ name: Text.trim().min(1).max(100).openapi({ example: 'Entrance B, kiosk 1' }) })
  .openapi('DeviceRenameRequest');

export const DeviceEventsRequest = z
  .strictObject({ eventIds: DeviceEventIds })
  .openapi('DeviceEventsRequest', {
    description: 'The device’s whole assignment: events not listed are taken off it.',
  });

export const PairingCodeRequest = z
  .strictObject({
    name: Text.trim().min(1).max(100).openapi({
      description: 'The name the device gets when it pairs.',
      example: 'Entrance A, kiosk 2',
    }),
    eventIds: DeviceEventIds.optional(),
  })
  .openapi('PairingCodeRequest');

export const PairingCode = z
  .object({
    code: z
      .string()
      .regex(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/)
      .openapi({
        description:
          `Shown once: 8 characters of \`${PAIRING_CODE_ALPHABET}\` as XXXX-XXXX. Single use; only its ` +
          'SHA-256 is stored.',
        example: 'K7QM-3XWP',
      }),
    expiresAt: Timestamp.openapi({ description: '10 minutes after it was made.' }),
    expiresIn: z.number().int().openapi({
      description: 'Seconds it works from now (600): a countdown that does not depend on the viewer’s clock.',
      example: 600,
    }),
    name: z.string(),
    eventIds: z.array(Id),
  })
  .openapi('PairingCode');
export type PairingCode = z.infer<typeof PairingCode>;

export const PairRequest = z
  .strictObject({
    code: Text.max(32).openapi({
      description: 'The code shown in the console; case and the dash do not matter (`k7qm3xwp` works).',
      example: 'K7QM-3XWP',
    }),
  })
  .openapi('PairRequest');

export const Paired = z
  .object({
    device: Device,
    deviceToken: z.string().openapi({
      description:
        'The device’s own credential (`pdt_<deviceId>.<secret>`), answered once: send it as `x-device-token`.',
      example: 'pdt_0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11.q5l2c1m0Jw...',
    }),
    internalSecret: z.string().openapi({
      description:
        'The platform’s current `x-internal-secret` (while it is being rotated, the new value), sent with ' +
        'the device token on every device call.',
    }),
    cloudUrl: z.string().openapi({
      description: 'The cloud’s public URL (`PUBLIC_URL`), where the device calls from now on.',
      example: 'https://portico.example.com',
    }),
  })
  .openapi('Paired');
export type Paired = z.infer<typeof Paired>;

export const SyncDeviceEvent = z
  .object({
    id: Id,
    name: z.string(),
    token: z.string().openapi({
      description: 'The event’s public token: its replica is `GET /v1/sync/events/{token}/replica`.',
    }),
    status: EventStatus,
    startsAt: Timestamp.nullable(),
    endsAt: Timestamp.nullable(),
  })
  .openapi('SyncDeviceEvent');

export const SyncDevice = z
  .object({
    device: z.object({ id: Id, name: z.string() }),
    events: z.array(SyncDeviceEvent),
  })
  .openapi('SyncDevice');
export type SyncDevice = z.infer<typeof SyncDevice>;

/** Flags a synced check-in can carry: the device's decision stands, the cloud says where it disagrees. */
export const SYNC_FLAGS = [
  'event_closed',
  'capacity_reached',
  'method_not_allowed',
  'already_checked_in',
] as const;
export const SyncFlag = z.enum(SYNC_FLAGS).openapi({
  description:
    'Why the cloud, re-checking the fact when it arrived, would have decided otherwise: `event_closed` the ' +
    'event was closed or cancelled, `capacity_reached` the event was full, `method_not_allowed` the event ' +
    'does not take this method, `already_checked_in` the guest or person had already been admitted and the ' +
    'event’s `reentry` is `refuse` (e.g. two kiosks admitted them while apart) or `flag` (every return is ' +
    'flagged). Under `allow` a return is no flag.',
});

/**
 * Oldest `recordedAt` a sync item may carry: a device queue holds a check-in no longer than this (an item
 * older than it is refused as a wrong device clock, never recorded).
 */
export const SYNC_ITEM_MAX_AGE_DAYS = 30;
/** How long before an event's `startsAt` its check-ins may be recorded (doors open early). */
export const SYNC_EVENT_EARLY_HOURS = 24;

/** Largest frame a sync item may carry (decoded bytes). */
export const SYNC_FRAME_MAX_BYTES = 1024 * 1024;

export const SyncItem = z
  .strictObject({
    clientId: z.uuid().openapi({
      description:
        'Generated by the device (UUIDv7) when it decided; becomes the check-in id. Re-sending it is safe.',
      example: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11',
    }),
    eventId: Id.optional(),
    guestId: Id.optional().openapi({ description: 'The guest admitted or refused, from the replica.' }),
    personId: Id.optional().openapi({ description: 'The person recognised (facial) or whose QR was read.' }),
    method: CheckinMethod.extract(['facial', 'qr', 'manual']).openapi({
      description: '`manual`: checked in by hand by staff at the device (a guest searched on the replica).',
    }),
    outcome: CheckinOutcome,
    reason: DenialReason.nullable().default(null),
    recordedAt: Timestamp.openapi({
      description:
        'When the device decided (its clock). Refused (`validation_failed`, with the reason in `detail`) when ' +
        `more than 5 minutes ahead of the cloud, older than ${SYNC_ITEM_MAX_AGE_DAYS} days (no device queue ` +
        `keeps an item that long), or more than ${SYNC_EVENT_EARLY_HOURS} hours before its event’s \`startsAt\`: ` +
        'these say the device clock is wrong, so the fact cannot be dated.',
    }),
    decidedOffline: z
      .boolean()
      .optional()
      .openapi({
        description:
          'Whether the device decided while the cloud was unreachable (it decides every check-in itself, online ' +
          'or not). Becomes `offline` in the check-in’s webhook and bus data. Absent (an older agent): offline.',
      }),
    stepUpFactor: StepUpFactor.optional().openapi({
      description:
        'A face between the replica’s refuse and accept lines settled by this second factor at the device ' +
        '(admitted, or denied with `step_up_failed`). Absent: the face alone decided, or not facial.',
    }),
    score: z.number().min(0).max(1).nullable().optional(),
    livenessScore: z.number().min(0).max(1).nullable().optional(),
    location: z
      .strictObject({ lat: z.number().min(-90).max(90), lng: z.number().min(-180).max(180) })
      .optional(),
    frame: z
      .string()
      .min(1)
      .optional()
      .openapi({
        description:
          `The decision's frame, JPEG or PNG, base64 (at most ${SYNC_FRAME_MAX_BYTES / 1024} KiB decoded); only ` +
          'when the replica’s `policy.syncCheckinImages` is true. Stored encrypted as the check-in’s image. A ' +
          'frame the cloud does not keep (setting off, not JPEG/PNG, too large) never costs the check-in: it is ' +
          'recorded without it, and `detail` says why.',
      }),
  })
  .openapi('SyncItem', {
    description:
      'One decision an edge device made, admitted or refused. The device’s outcome is recorded as it was; ' +
      'the event rules are re-checked only to set `flags`.',
  });
export type SyncItem = z.infer<typeof SyncItem>;

export const SYNC_BATCH_MAX = 500;

export const SyncBatchRequest = z
  .strictObject({
    // Anything else is taken too, and answered as a rejected item: one bad item never fails the batch.
    items: z
      .array(SyncItem.or(z.unknown()))
      .min(1)
      .max(SYNC_BATCH_MAX)
      .openapi({
        description:
          `1 to ${SYNC_BATCH_MAX} \`SyncItem\`s. Each is checked on its own: a malformed item is rejected ` +
          'in its result, the others are still recorded.',
      }),
    queueLength: z
      .number()
      .int()
      .min(0)
      .max(10_000_000)
      .optional()
      .openapi({
        description:
          'Check-ins the device still holds unsent besides this batch’s items: stored on the device with the ' +
          'time of this sync and shown to tenant admins (`GET /v1/admin/stats/today`). Optional.',
      }),
  })
  .openapi('SyncBatchRequest');

export const SyncItemResult = z
  .object({
    clientId: z.string().nullable().openapi({ description: 'Null when the item had no readable clientId.' }),
    status: z.enum(['accepted', 'duplicate', 'rejected']).openapi({
      description:
        '`accepted` recorded now; `duplicate` recorded by an earlier upload (nothing new written, the ' +
        'original answer again); `rejected` not recorded, see `code`.',
    }),
    checkInId: Id.nullable(),
    outcome: CheckinOutcome.nullable(),
    flags: z.array(SyncFlag),
    receivedAt: Timestamp.nullable().openapi({ description: 'When the cloud first recorded it.' }),
    code: z
      .enum(['validation_failed', 'not_found', 'conflict'])
      .nullable()
      .openapi({
        description:
          '`validation_failed` malformed item (see `detail`); `not_found` event, guest or person not of the ' +
          'device’s tenant; `conflict` the clientId names a check-in of another device of the same tenant. A ' +
          'clientId used by another tenant is answered as an unknown one (the item’s references are checked ' +
          'first); an otherwise valid item with it is `validation_failed`: generate a new id.',
      }),
    detail: z.string().nullable().openapi({
      description: 'Why it was rejected; on an accepted item, why its `frame` was not stored (else null).',
    }),
  })
  .openapi('SyncItemResult');

export const SyncBatchResult = z
  .object({ results: z.array(SyncItemResult).openapi({ description: 'One per item, in order.' }) })
  .openapi('SyncBatchResult');

export const ReplicaParams = z.object({ token: Text.min(16).max(128) });

export const ReplicaQuery = z.object({
  since: Text.regex(/^\d{1,18}\.\d{1,15}$/, 'a checkpoint this API issued')
    .optional()
    .openapi({ description: 'A `checkpoint` from an earlier fetch: only changes after it (with removals).' }),
  cursor: Text.max(512).optional().openapi({ description: '`nextCursor` of the previous page.' }),
  limit: queryNumber(z.number().int().min(1).max(2000))
    .default(500)
    .openapi({ description: 'Page size, 1 to 2,000 (default 500).' }),
});

export const ReplicaGuest = z
  .object({
    guestId: Id,
    name: z.string(),
    status: z.enum(['confirmed', 'checked_in']),
    checkedInAt: Timestamp.nullable(),
    personId: Id.nullable(),
    qrHash: z.string().openapi({
      description:
        'SHA-256 (hex) of the guest’s invitation link token: a scanned QR code is checked against it.',
    }),
    template: z
      .object({
        modelId: z.string(),
        embedding: z.string().openapi({ description: 'Base64 of the float32 little-endian vector.' }),
      })
      .nullable()
      .openapi({
        description: 'The face template of the tenant’s model; null: no face admission for this guest.',
      }),
  })
  .openapi('ReplicaGuest');

export const Replica = z
  .object({
    event: z.object({
      id: Id,
      name: z.string(),
      status: z.string(),
      checkinMethods: z.array(z.string()),
      capacity: z.number().int().nullable(),
      reentry: Reentry.optional().openapi({
        description:
          'The event’s re-entry rule; the device applies it as the cloud does. Always sent; a cloud older than ' +
          'the rule sends none, which a device reads as `allow`.',
      }),
      geofence: z.object({ lat: z.number(), lng: z.number(), radiusM: z.number() }).nullable(),
    }),
    policy: z.object({
      tenantId: Id,
      modelId: z.string(),
      matchThreshold: z.number().openapi({ description: 'Accept line (tenant setting).' }),
      stepUpThreshold: z.number().openapi({ description: 'Refuse line (tenant setting).' }),
      probeQualityMin: z.number().openapi({ description: 'Below it a probe is a retake.' }),
      stepUpFactors: z.array(StepUpFactor),
      requireLiveness: z.boolean(),
      livenessThreshold: z.number(),
      livenessChallenge: z.enum(LIVENESS_CHALLENGE_MODES).optional().openapi({
        description:
          'Tenant setting. Always sent; a cloud older than the setting sends none, which a device reads as `always`.',
      }),
      syncCheckinImages: z.boolean().openapi({
        description: 'The tenant keeps check-in images: send each face decision’s `frame` in its sync item.',
      }),
    }),
    items: z.array(ReplicaGuest).openapi({ description: 'Guests to add or replace in the local replica.' }),
    removed: z.array(Id).openapi({ description: 'Guest ids to drop (deleted, declined, unconfirmed).' }),
    revokedPersons: z.array(Id).openapi({
      description:
        'Persons deleted since the checkpoint (first page of a delta): drop their templates; their guests ' +
        'stay on the list without a face.',
    }),
    nextCursor: z.string().nullable(),
    checkpoint: z.string().openapi({ description: 'After the last page: send it as `since` next time.' }),
  })
  .openapi('Replica', {
    description:
      'An event’s confirmed list as an edge device needs it: with the face templates of enrolled guests. ' +
      'Device credentials only; the public confirmed list never carries templates.',
  });
export type Replica = z.infer<typeof Replica>;
