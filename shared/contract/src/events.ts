import { REENTRY_DEFAULT, REENTRY_RULES } from '@portico/checkin-policy';
import { z } from './zod.js';
import { Timestamp } from './common.js';
import { Environment, StepUpFactor } from './tenants.js';

/** Events delivered to the tenant's webhookUrl and published on the bus. */
export const WEBHOOK_EVENTS = [
  'checkin.success',
  'checkin.denied',
  'checkin.liveness_failed',
  'checkin.geofence_alert',
  'checkin.voided',
  'person.enrolled',
  'person.deleted',
  'person.biometrics_revoked',
  'webhook.test',
] as const;

/** Events published on the bus only (never sent to webhooks). */
export const BUS_ONLY_EVENTS = ['identity.deletion_requested'] as const;

export const WebhookEventName = z.enum(WEBHOOK_EVENTS);
export type WebhookEventName = z.infer<typeof WebhookEventName>;
export const EventName = z.enum([...WEBHOOK_EVENTS, ...BUS_ONLY_EVENTS]);
export type EventName = z.infer<typeof EventName>;

export const CheckinMethod = z.enum(['facial', 'qr', 'link', 'manual']);
/** An event's re-entry rule (decided by @portico/checkin-policy, in the cloud and on kiosks alike). */
export const Reentry = z.enum(REENTRY_RULES).openapi('Reentry', {
  description:
    'What a second admission of the same guest or person at this event gets, whatever the door method ' +
    '(face, QR code, staff by hand, and the same decided on a kiosk and synced): `refuse` denied with reason ' +
    '`already_checked_in`; `allow` admitted, counted once against the capacity, no flag; `flag` admitted, ' +
    'counted once, and flagged `already_checked_in` (webhook and bus `data.flags`, the check-in list). ' +
    `Default \`${REENTRY_DEFAULT}\`, what a face check-in always did. An invitation link checks a guest in ` +
    'once whatever this says (a later visit answers `already_checked_in` and records nothing). Kiosks apply ' +
    'the same rule offline (their replica carries it), so a synced check-in flagged `already_checked_in` is ' +
    'a real disagreement: under `refuse`, two kiosks admitted the guest while apart.',
  example: 'allow',
});
export type Reentry = z.infer<typeof Reentry>;

export const GeofenceStatus = z.enum(['ok', 'outside', 'unknown', 'not_applicable']).openapi({
  description:
    '`ok` inside the event radius; `outside` beyond it (check-in approved with `checkin.geofence_alert`); ' +
    '`unknown` the event has a geofence but no location was sent; `not_applicable` no event or no geofence.',
});

export const CheckinEventData = z
  .object({
    checkInId: z.string(),
    personId: z.string().nullable().openapi({ description: 'Null when nobody was recognised.' }),
    eventId: z.string().nullable(),
    guestId: z
      .string()
      .nullable()
      .openapi({ description: 'The guest of the event admitted or refused (null: none on its list).' }),
    method: CheckinMethod,
    geofenceStatus: GeofenceStatus,
    score: z.number().nullable().openapi({ description: 'Best face match score (cosine), facial only.' }),
    livenessScore: z.number().nullable(),
    deviceId: z.string().nullable(),
    stepUp: z
      .object({ factor: StepUpFactor })
      .nullable()
      .openapi({
        description:
          'How it was reached: `{ factor }` when a face between the refuse and the accept line was settled by a ' +
          'second factor (admitted, or denied with `step_up_failed`); null when the face alone decided or the ' +
          'method is not facial.',
      }),
    flags: z
      .array(z.string())
      .optional()
      .openapi({
        description:
          'Where the cloud disagrees with a synced check-in, or what an admission is flagged for (see ' +
          '`SyncFlag`). Always present on synced check-ins; on others only when not empty: ' +
          '`["already_checked_in"]` for a returning guest admitted at an event whose `reentry` is `flag`.',
      }),
    source: z.literal('sync').optional().openapi({
      description: 'Present on check-ins an edge device decided and uploaded (`POST /v1/sync/batch`).',
    }),
    offline: z
      .boolean()
      .optional()
      .openapi({
        description:
          'Synced check-ins: true only when the device decided it while the cloud was unreachable; false when ' +
          'it decided with the cloud up (it decides every check-in itself and uploads it within seconds). An ' +
          'agent that does not say (no `decidedOffline` in its sync item) counts as offline.',
      }),
    late_upload: z
      .boolean()
      .optional()
      .openapi({ description: 'Synced check-ins: received more than a minute after the device decided.' }),
    recordedAt: z
      .string()
      .optional()
      .openapi({ description: 'Synced check-ins: when the device decided (its clock).' }),
  })
  .openapi('CheckinEventData');

export const CheckinVoidedData = z
  .object({
    checkInId: z.string(),
    personId: z.string().nullable(),
    eventId: z.string().nullable(),
    guestId: z.string().nullable(),
    method: CheckinMethod,
    reason: z.string().openapi({ description: 'Why staff took it back.' }),
    voidedAt: Timestamp,
    voidedBy: z.object({ type: z.string(), id: z.string().nullable() }).openapi({
      description: 'Who took it back: `adminSession` (a tenant user, by user id) or `apiKey` (by key id).',
    }),
  })
  .openapi('CheckinVoidedData', {
    description:
      'An admission was taken back (`POST /v1/checkin/{checkInId}/void`): it no longer counts for the event ' +
      '(its place of the capacity is free, and the guest may come in again whatever the re-entry rule). ' +
      'The earlier `checkin.success` (or `checkin.geofence_alert`) of the same `checkInId` stands as history.',
  });

export const PersonEnrolledData = z
  .object({ personId: z.string(), quality: z.number().min(0).max(1), modelId: z.string() })
  .openapi('PersonEnrolledData');

export const PersonDeletedData = z
  .object({ personId: z.string(), reason: z.enum(['deleted', 'anonymised']) })
  .openapi('PersonDeletedData');

export const BiometricsRevokedData = z
  .object({ personId: z.string(), templatesErased: z.number().int(), imagesErased: z.number().int() })
  .openapi('BiometricsRevokedData', {
    description:
      'The person withdrew consent in the portal: the tenant’s templates and biometric images of them are ' +
      'erased. The person record stays; enrolling them again needs their consent again.',
  });

export const WebhookTestData = z
  .object({
    requestedBy: z.string().openapi({ description: 'The tenant user who asked for it.' }),
    message: z.string(),
  })
  .openapi('WebhookTestData', {
    description:
      'Sent when a tenant admin asks for a test delivery (`POST /v1/admin/webhooks/test`): check the receiver ' +
      'verifies the signature and answers 2xx. Nothing happened in the tenant; ignore it otherwise.',
  });

export const DeletionRequestedData = z
  .object({ accountId: z.string(), deletionRequestId: z.string(), tenantIds: z.array(z.string()) })
  .openapi('DeletionRequestedData');

/** `data` of each event, by name. */
export const EVENT_DATA = {
  'checkin.success': CheckinEventData,
  'checkin.denied': CheckinEventData,
  'checkin.liveness_failed': CheckinEventData,
  'checkin.geofence_alert': CheckinEventData,
  'checkin.voided': CheckinVoidedData,
  'person.enrolled': PersonEnrolledData,
  'person.deleted': PersonDeletedData,
  'person.biometrics_revoked': BiometricsRevokedData,
  'webhook.test': WebhookTestData,
  'identity.deletion_requested': DeletionRequestedData,
} as const satisfies Record<EventName, z.ZodType>;

export type EventData<N extends EventName> = z.infer<(typeof EVENT_DATA)[N]>;

/**
 * The webhook body (contract 6.1), and the bus message with an `id` added. The signature header
 * `X-Service-Signature` is the hex HMAC-SHA256 of the exact raw body with the tenant's webhook secret;
 * during a secret rotation's overlap it holds two, comma-separated, the new secret's first.
 */
export const WebhookPayload = z
  .object({
    id: z
      .string()
      .openapi({ description: 'Event id: the same on every retry and on the bus; deduplicate by it.' }),
    event: EventName,
    tenantId: z.string(),
    environment: Environment.openapi({
      description:
        '`sandbox` for an event of a tenant’s sandbox (caused with a `pk_test_` key or an admin’s sandbox ' +
        'switch); its `tenantId` is the sandbox’s own id, so its bus topics are the sandbox’s too.',
    }),
    timestamp: Timestamp,
    data: z.record(z.string(), z.unknown()),
  })
  .openapi('WebhookPayload');
export type WebhookPayload = z.infer<typeof WebhookPayload>;
