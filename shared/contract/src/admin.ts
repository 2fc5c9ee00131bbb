// Wire types of the admin routes behind the tenant admin console (`/v1/admin/*`): read routes and a few
// actions for signed-in tenant users only. They are additions outside the service contract.
import { AuditActorType } from './audit.js';
import { CheckinOutcome, StepUpVia } from './checkin.js';
import { Id, PageQuery, pageOf, Text, Timestamp } from './common.js';
import { EventAttendance } from './event-guests.js';
import { CheckinMethod, EventName, GeofenceStatus, WebhookPayload } from './events.js';
import { FaceFrame } from './onboarding.js';
import { SYNC_FLAGS } from './sync.js';
import { z } from './zod.js';

// ---------------------------------------------------------------------------------------------
// Check-ins
// ---------------------------------------------------------------------------------------------

/** What the console can filter check-ins on beyond method and outcome. */
export const ADMIN_CHECKIN_FLAGS = ['offline', 'late', 'conflict', ...SYNC_FLAGS] as const;
export const AdminCheckinFlag = z.enum(ADMIN_CHECKIN_FLAGS).openapi('AdminCheckinFlag', {
  description:
    '`offline` decided by an edge device while the cloud was unreachable, uploaded later by sync (a device ' +
    'decides every check-in itself: one decided while it was online is not `offline`; its `deviceId` says it ' +
    'came from a device); `late` uploaded more than a minute after the device decided; `conflict` the cloud, ' +
    're-checking a synced fact, disagrees or the event flags returns (one of the next four says which); `event_closed`, `capacity_reached`, `method_not_allowed`, `already_checked_in` as ' +
    'in `SyncFlag`.',
});
export type AdminCheckinFlag = z.infer<typeof AdminCheckinFlag>;

export const AdminCheckinFilters = z.object({
  eventId: Id.optional(),
  personId: Id.optional(),
  guestId: Id.optional(),
  method: CheckinMethod.optional(),
  outcome: CheckinOutcome.optional(),
  flag: AdminCheckinFlag.optional(),
  from: Timestamp.optional().openapi({ description: 'Recorded at or after this instant.' }),
  to: Timestamp.optional().openapi({ description: 'Recorded before this instant.' }),
});

export const AdminCheckinQuery = AdminCheckinFilters.extend(PageQuery.shape);
export type AdminCheckinQuery = z.infer<typeof AdminCheckinQuery>;

const Named = z.object({ id: Id, name: z.string() });

export const AdminCheckin = z
  .object({
    id: Id,
    recordedAt: Timestamp.openapi({
      description: 'When it was decided (the device’s clock for offline ones).',
    }),
    receivedAt: Timestamp.openapi({ description: 'When the cloud recorded it.' }),
    method: CheckinMethod,
    outcome: CheckinOutcome,
    stepUp: StepUpVia,
    score: z.number().nullable().openapi({ description: 'Calibrated face match score (facial only).' }),
    livenessScore: z.number().nullable(),
    geofenceStatus: GeofenceStatus.nullable(),
    flags: z.array(AdminCheckinFlag),
    offline: z.boolean().openapi({
      description:
        'Decided by an edge device while the cloud was unreachable (same as flag `offline`); an upload from an ' +
        'agent that does not say counts as offline.',
    }),
    event: Named.nullable().openapi({
      description: 'Null: the check-in named no event (or it was deleted).',
    }),
    person: Named.nullable().openapi({ description: 'Null: nobody recognised, or the person was deleted.' }),
    guestId: Id.nullable(),
    guest: Named.nullable().openapi({
      description:
        'The guest of the event it is for (a link check-in names only its guest; a face, QR or manual one of ' +
        'a person on the list names both). Null: no guest.',
    }),
    voided: z
      .object({
        at: Timestamp,
        reason: z.string(),
        by: z.string().nullable().openapi({ description: 'The tenant user (or API key) who voided it.' }),
      })
      .nullable()
      .openapi({
        description:
          'Taken back by staff (`POST /v1/checkin/{checkInId}/void`): it counts for nothing at the event. Null: stands.',
      }),
    deviceId: Id.nullable().openapi({
      description: 'The registered edge device that uploaded it (offline only).',
    }),
    hasImage: z.boolean().openapi({
      description: 'A captured frame is stored: `GET /v1/admin/checkins/{id}/image` shows it (audited).',
    }),
  })
  .openapi('AdminCheckin');
export type AdminCheckin = z.infer<typeof AdminCheckin>;

export const AdminCheckinPage = pageOf(AdminCheckin).openapi('AdminCheckinPage');
export type AdminCheckinPage = z.infer<typeof AdminCheckinPage>;

// ---------------------------------------------------------------------------------------------
// Today
// ---------------------------------------------------------------------------------------------

export const AdminStatsQuery = z.object({
  tz: Text.min(1).max(64).optional().openapi({
    description: 'IANA time zone whose current day is counted (default `UTC`).',
    example: 'America/Sao_Paulo',
  }),
  from: Timestamp.optional().openapi({ description: 'Instead of a day: from this instant (with `to`).' }),
  to: Timestamp.optional().openapi({ description: 'Up to (excluding) this instant (with `from`).' }),
});
export type AdminStatsQuery = z.infer<typeof AdminStatsQuery>;

const countsOf = <T extends readonly [string, ...string[]]>(keys: T) =>
  z.object(Object.fromEntries(keys.map((k) => [k, z.number().int()])) as Record<T[number], z.ZodNumber>);

export const AdminDeviceStatus = z
  .object({
    id: Id,
    name: z.string(),
    lastSeenAt: Timestamp.nullable().openapi({
      description: 'Last authenticated call (written at most once a minute).',
    }),
    lastSyncAt: Timestamp.nullable().openapi({ description: 'Last `POST /v1/sync/batch`.' }),
    queueLength: z.number().int().nullable().openapi({
      description:
        'Check-ins still queued on the device, as it reported with its last sync (null: never reported).',
    }),
    revokedAt: Timestamp.nullable(),
  })
  .openapi('AdminDeviceStatus');

export const AdminStats = z
  .object({
    from: Timestamp,
    to: Timestamp,
    timeZone: z
      .string()
      .nullable()
      .openapi({ description: 'The day’s time zone; null when `from`/`to` were given.' }),
    total: z.number().int(),
    byEvent: z
      .array(
        z.object({
          event: Named.nullable().openapi({ description: 'Null: check-ins that named no event.' }),
          total: z.number().int(),
          admitted: z.number().int().openapi({ description: '`success` and `geofence_alert`, not voided.' }),
        }),
      )
      .openapi({ description: 'Events with check-ins in the period, most check-ins first.' }),
    byMethod: countsOf(CheckinMethod.options as [string, ...string[]]),
    byOutcome: countsOf(CheckinOutcome.options as [string, ...string[]]),
    attendance: z.array(EventAttendance).openapi({
      description:
        'Who arrived, per event: every `open` event and every event with check-ins in the period, by name.',
    }),
    devices: z
      .array(AdminDeviceStatus)
      .openapi({ description: 'Every device of the tenant, revoked ones too.' }),
  })
  .openapi('AdminStats');
export type AdminStats = z.infer<typeof AdminStats>;

// ---------------------------------------------------------------------------------------------
// Audit log
// ---------------------------------------------------------------------------------------------

export const AdminAuditQuery = PageQuery.extend({
  action: Text.min(1).max(100).optional().openapi({
    description: 'An action (`person.created`), or a prefix ending in `.` (`checkin.`).',
    example: 'person.',
  }),
  actorType: AuditActorType.optional(),
  actorId: Text.min(1).max(64).optional().openapi({ description: 'The actor’s id, exactly.' }),
  actor: Text.min(1)
    .max(100)
    .optional()
    .openapi({
      description:
        'Text in the actor’s name or e-mail (a user), name (a device), key prefix or application name (an ' +
        'API key); case-insensitive.',
      example: 'ana',
    }),
  targetType: Text.min(1).max(40).optional().openapi({
    description: 'What the action was done to: `person`, `event`, `guest`, `device`, …',
    example: 'person',
  }),
  targetId: Text.min(1).max(64).optional().openapi({ description: 'The target’s id, exactly.' }),
  from: Timestamp.optional().openapi({ description: 'Entries at or after this time.' }),
  to: Timestamp.optional().openapi({ description: 'Entries before this time.' }),
});
export type AdminAuditQuery = z.infer<typeof AdminAuditQuery>;

export const AdminAuditActor = z
  .object({
    type: AuditActorType,
    id: z.string().nullable().openapi({ description: 'The user, API key, portal account or device.' }),
    name: z
      .string()
      .nullable()
      .openapi({
        description:
          'A user’s name, a device’s name, or the application of an API key; null for a user without a name, ' +
          'a removed actor, and for portal, public, system and operator actors (said by `type`).',
        example: 'Ana Souza',
      }),
    email: z.string().nullable().openapi({ description: 'A user’s e-mail.', example: 'ana@example.com' }),
    key: z.string().nullable().openapi({
      description: 'An API key as `prefix…lastFour` (never the key).',
      example: 'pk_live_3f9a…b21c',
    }),
    removed: z.boolean().openapi({
      description: 'The user, device or key is gone from the tenant: only its id is left.',
      example: false,
    }),
  })
  .openapi('AdminAuditActor', {
    description: 'Who acted, in words, read with the page (one lookup per kind of actor, not per entry).',
  });
export type AdminAuditActor = z.infer<typeof AdminAuditActor>;

export const AdminAuditEntry = z
  .object({
    id: Id,
    at: Timestamp,
    actorType: z.string().openapi({
      description:
        '`adminSession`, `apiKey`, `portal`, `device`, `public`, `system`, `operator` (as `actor.type`).',
      example: 'adminSession',
    }),
    actorId: z.string().nullable().openapi({ description: 'The user, API key, portal account or device.' }),
    actor: AdminAuditActor,
    action: z.string().openapi({
      description: 'An `AuditAction`; entries written before an action was renamed keep their old name.',
      example: 'person.updated',
    }),
    targetType: z.string().nullable().openapi({ example: 'person' }),
    targetId: z.string().nullable().openapi({ example: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11' }),
    metadata: z.record(z.string(), z.unknown()).openapi({
      description: 'Identifiers and outcomes; never secrets or biometrics.',
      example: { fields: ['name', 'email'] },
    }),
    ip: z.string().nullable(),
    requestId: z.string().nullable(),
  })
  .openapi('AdminAuditEntry');
export type AdminAuditEntry = z.infer<typeof AdminAuditEntry>;

export const AdminAuditPage = pageOf(AdminAuditEntry).openapi('AdminAuditPage');

// ---------------------------------------------------------------------------------------------
// Webhooks
// ---------------------------------------------------------------------------------------------

export const WebhookDeliveryStatus = z
  .enum(['pending', 'delivering', 'delivered', 'failed', 'cancelled'])
  .openapi('WebhookDeliveryStatus');

export const AdminWebhookDeliveryQuery = PageQuery.extend({
  status: WebhookDeliveryStatus.optional(),
  event: EventName.optional(),
});
export type AdminWebhookDeliveryQuery = z.infer<typeof AdminWebhookDeliveryQuery>;

/** How much of a receiver's answer an attempt keeps. */
export const WEBHOOK_RESPONSE_EXCERPT_CHARS = 1024;

export const AdminWebhookAttempt = z
  .object({
    attempt: z.number().int().openapi({ example: 1 }),
    at: Timestamp,
    statusCode: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'Null when no answer came.', example: 500 }),
    durationMs: z.number().int().openapi({ example: 42 }),
    error: z.string().nullable().openapi({
      description: 'Why no answer came (connection refused, timeout, address refused), or the cancellation.',
      example: 'connect ECONNREFUSED 203.0.113.7:443',
    }),
    response: z
      .string()
      .nullable()
      .openapi({
        description:
          `The start of the receiver’s answer body (at most ${WEBHOOK_RESPONSE_EXCERPT_CHARS} characters, ` +
          'ending in `…` when cut); the tenant’s webhook secret and the signatures sent are replaced by ' +
          '`[redacted]` should the receiver echo them. Null when there was no answer or it was empty.',
        example: '{"error":"database unavailable"}',
      }),
  })
  .openapi('AdminWebhookAttempt');

export const AdminWebhookDelivery = z
  .object({
    id: Id.openapi({ description: 'Sent as `X-Service-Delivery-Id`.' }),
    eventId: Id.openapi({ description: 'The event (the payload’s `id`); a redelivery shares it.' }),
    event: EventName,
    url: z.string(),
    status: WebhookDeliveryStatus,
    createdAt: Timestamp,
    nextAttemptAt: Timestamp.nullable().openapi({
      description: 'When a pending delivery is tried next (`retry` brings it forward to now).',
    }),
    deliveredAt: Timestamp.nullable(),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    attempts: z.array(AdminWebhookAttempt).openapi({ description: 'Every attempt, first first.' }),
    payload: z
      .object({ ...WebhookPayload.shape, environment: WebhookPayload.shape.environment.optional() })
      .openapi({
        description:
          'The body sent, as signed (`environment` is absent from events recorded before environments existed).',
        example: {
          id: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11',
          event: 'webhook.test',
          tenantId: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a0001',
          environment: 'live',
          timestamp: '2026-11-21T10:15:30.123Z',
          data: {
            requestedBy: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a0002',
            message: 'Test event from the Portico admin console',
          },
        },
      }),
  })
  .openapi('AdminWebhookDelivery');
export type AdminWebhookDelivery = z.infer<typeof AdminWebhookDelivery>;

export const AdminWebhookDeliveryPage = pageOf(AdminWebhookDelivery).openapi('AdminWebhookDeliveryPage');

// ---------------------------------------------------------------------------------------------
// Message bus
// ---------------------------------------------------------------------------------------------

export const AdminBusInfo = z
  .object({
    topicPrefix: z.string().openapi({ example: 'portico/v1/tenants/0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11/' }),
    qos: z.literal(1),
    protocol: z
      .string()
      .openapi({ description: 'MQTT version the service publishes with.', example: 'MQTT 3.1.1' }),
    events: z.array(
      z.object({
        event: EventName,
        topic: z.string(),
        webhook: z.boolean().openapi({ description: 'Also delivered to the webhook URL.' }),
      }),
    ),
    brokers: z
      .array(z.object({ url: z.string(), transport: z.enum(['mqtt', 'mqtts', 'ws', 'wss']) }))
      .openapi({
        description: 'Broker URLs as the service is configured (`MQTT_URL`, or the embedded broker).',
      }),
    wsUrl: z
      .string()
      .nullable()
      .openapi({
        description:
          'MQTT over WebSocket, for browsers (`ws://` or `wss://`): `MQTT_WS_URL` when set, else the embedded ' +
          'broker’s WebSocket listener (`MQTT_WS_PORT`); null when there is neither.',
        example: 'ws://127.0.0.1:8083',
      }),
    embedded: z.boolean().openapi({
      description:
        'The broker is the one embedded in the service (MQTT over TCP and, unless turned off, WebSocket).',
    }),
    credentials: z
      .object({
        username: z
          .string()
          .openapi({ description: 'The tenant id: every tenant credential connects with it.' }),
        password: z.string().openapi({
          description:
            'A bus token: a JWT the embedded broker accepts until `expiresAt` and for this tenant only, then ' +
            'closes the connection (fetch a fresh one to reconnect). It may subscribe under `topicPrefix` and ' +
            'nothing else, and never publish. Servers use an API key with the `bus:subscribe` scope instead.',
        }),
        expiresAt: Timestamp,
      })
      .nullable()
      .openapi({
        description:
          'Credentials for the embedded broker (MQTT and WebSocket); null with an external broker (`MQTT_URL`), ' +
          'whose own accounts and ACLs decide who connects.',
      }),
  })
  .openapi('AdminBusInfo');
export type AdminBusInfo = z.infer<typeof AdminBusInfo>;

// ---------------------------------------------------------------------------------------------
// Face quality preview
// ---------------------------------------------------------------------------------------------

export const AdminFaceQualityRequest = z
  .strictObject({ image: FaceFrame })
  .openapi('AdminFaceQualityRequest');

export const FACE_QUALITY_ISSUES = [
  'no_face',
  'several_faces',
  'low_confidence',
  'face_too_small',
  'blurry',
  'poor_exposure',
  'not_frontal',
  'below_threshold',
] as const;

export const AdminFaceQuality = z
  .object({
    faceDetected: z.boolean(),
    quality: z.number().min(0).max(1).nullable().openapi({ description: 'Null when no face was found.' }),
    threshold: z.number().openapi({ description: 'The tenant’s `biometricQualityLevel`.' }),
    acceptable: z
      .boolean()
      .openapi({ description: 'An enrollment with this photo passes the quality check.' }),
    issues: z.array(z.enum(FACE_QUALITY_ISSUES)).openapi({
      description:
        'What to fix: `no_face`; `several_faces` (the largest, most central one is used); `low_confidence`, ' +
        '`face_too_small`, `blurry`, `poor_exposure`, `not_frontal` (a quality factor under 0.5); ' +
        '`below_threshold` (quality under `threshold`).',
    }),
    factors: z
      .object({
        detector: z.number(),
        size: z.number(),
        sharpness: z.number(),
        exposure: z.number(),
        pose: z.number(),
      })
      .nullable()
      .openapi({ description: 'Each quality factor in [0, 1] (null when no face was found).' }),
  })
  .openapi('AdminFaceQuality');
export type AdminFaceQuality = z.infer<typeof AdminFaceQuality>;
