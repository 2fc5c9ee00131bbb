// Admin routes behind the tenant admin console: additions outside the service contract, for signed-in
// tenant users only (an API key gets 403). Read routes take every role that may read; actions need a
// role that may write (ROLE_SCOPES).
import {
  AdminAuditPage,
  AdminAuditQuery,
  AdminBusInfo,
  AdminCheckin,
  AdminCheckinFilters,
  AdminCheckinPage,
  AdminCheckinQuery,
  AdminFaceQuality,
  AdminFaceQualityRequest,
  AdminStats,
  AdminStatsQuery,
  AdminWebhookDelivery,
  AdminWebhookDeliveryPage,
  AdminWebhookDeliveryQuery,
  BUS_ONLY_EVENTS,
  IdParams,
  WEBHOOK_EVENTS,
  z,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { requestMeta } from '../../http/request-context.js';
import { defineRoute } from '../../http/route.js';
import { busTopic } from '../../infra/bus.js';
import { createAuditLogReader } from '../audit/log.js';
import { requireManager } from '../auth/roles.js';
import { signBusToken } from '../bus/credentials.js';
import { createAdminWebhookDeliveries } from '../webhooks/deliveries.js';
import { createCheckinStream, KEEP_ALIVE_MS, RESUME_MAX } from './checkin-stream.js';
import { createAdminCheckins } from './checkins.js';
import { createFaceQualityCheck } from './face-quality.js';
import { createAdminStats } from './stats.js';

const TAG = 'admin';
const ADMIN =
  'Admin-only addition, not in the service contract: for the admin console. Needs the session JWT of a ' +
  'tenant user (`/v1/auth/login`); API keys are refused with 403. ';
const READ = `${ADMIN}Every role may read it. `;
const Binary = z.string().openapi({ format: 'binary' });

const FACE_ERRORS = [
  { status: 400, code: 'invalid_base64', description: '`image` is not valid base64' },
  { status: 400, code: 'unsupported_image', description: '`image` is not a decodable JPEG or PNG' },
  { status: 413, code: 'image_too_large', description: '`image` is over 8 MB decoded or 25 megapixels' },
  { status: 503, code: 'engine_unavailable', description: 'the biometric engine is starting or unavailable' },
] as const;

export function adminRoutes(deps: AppDeps) {
  const checkins = createAdminCheckins(deps);
  const stream = createCheckinStream(deps, checkins);
  const stats = createAdminStats(deps);
  const auditLog = createAuditLogReader(deps);
  const deliveries = createAdminWebhookDeliveries(deps);
  const busCredentials = async (tenantId: string) => {
    const { token, expiresAt } = await signBusToken(deps.secrets.jwtKey, tenantId, deps.clock.now());
    return { username: tenantId, password: token, expiresAt: expiresAt.toISOString() };
  };
  const faceQuality = createFaceQualityCheck(deps);

  return [
    defineRoute({
      method: 'get',
      path: '/v1/admin/checkins',
      operationId: 'adminListCheckins',
      summary: 'List check-ins, newest first',
      description:
        `${READ}Every check-in of the tenant (online, QR, link, manual, synced offline) ordered by \`recordedAt\` ` +
        'then id, newest first; filters combine. `flag` picks offline, late or conflicting uploads. Pages by ' +
        '`nextCursor`. Scores are there for the admin; frames are not (see `hasImage`).',
      tag: TAG,
      auth: ['adminSession'],
      scope: 'persons:read',
      query: AdminCheckinQuery,
      responses: { 200: { description: 'A page of check-ins', schema: AdminCheckinPage } },
      handler: async ({ actor, query }) => ({
        status: 200,
        body: await checkins.list(actor.tenantId, query),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/admin/checkins/export.csv',
      operationId: 'adminExportCheckins',
      summary: 'Export check-ins as CSV',
      description:
        `${READ}The same filters as the list, every matching check-in, newest first, streamed (read 500 at a ` +
        'time). UTF-8, CRLF line ends, a header row: `id, recordedAt, receivedAt, method, outcome, score, ' +
        'livenessScore, geofenceStatus, flags` (`;`-separated)`, offline, eventId, eventName, personId, ' +
        'personName, guestId, deviceId, hasImage`. A cell that starts with `=`, `+`, `-`, `@`, tab or carriage ' +
        "return is prefixed with `'` so a spreadsheet never runs it as a formula. Audited (`checkin.exported`).",
      tag: TAG,
      auth: ['adminSession'],
      scope: 'persons:read',
      query: AdminCheckinFilters,
      responses: { 200: { description: 'The CSV file', schema: z.string(), contentType: 'text/csv' } },
      handler: async ({ actor, query, req, res }) => {
        await checkins.auditExport(actor, query, requestMeta(req, res));
        const lines = checkins.csv(actor.tenantId, query);
        // Read the first page before answering, so a failure is still a clean problem response.
        const header = await lines.next();
        res.status(200);
        res.setHeader('content-type', 'text/csv; charset=utf-8');
        res.setHeader('content-disposition', 'attachment; filename="checkins.csv"');
        res.write(header.value as string);
        for await (const chunk of lines) {
          if (res.destroyed) break;
          if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
        }
        res.end();
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/admin/checkins/stream',
      operationId: 'adminStreamCheckins',
      summary: 'Live check-ins (server-sent events)',
      description:
        `${READ}A \`text/event-stream\` of the tenant’s new check-ins as they are recorded, by any API process ` +
        '(online, QR, link, manual, and offline ones when a device syncs them): each is `event: checkin`, ' +
        '`id: <check-in id>`, `data: <AdminCheckin JSON>`. A comment line every ' +
        `${KEEP_ALIVE_MS / 1000} s keeps it open. Send \`Last-Event-ID\` to resume: the check-ins received ` +
        `after that one (at most ${RESUME_MAX}) come first. Browsers: read it with \`fetch\` and the ` +
        '`Authorization` header (EventSource cannot send it). The stream ends when the access token that ' +
        'opened it expires, or when its session ends (logout, a reused refresh token, password reset, MFA turned on ' +
        'with other sessions ended, role change, deactivation): at once when that happened on the same API ' +
        'process, else at the next keep-alive. Reconnect with a fresh access token.',
      tag: TAG,
      auth: ['adminSession'],
      scope: 'persons:read',
      responses: {
        200: {
          description: 'The event stream; each `data` is an AdminCheckin',
          schema: AdminCheckin,
          contentType: 'text/event-stream',
        },
      },
      handler: async ({ actor, req, res }) => stream(actor, req, res),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/admin/checkins/{id}/image',
      operationId: 'adminGetCheckinImage',
      summary: 'The frame captured at a check-in',
      description:
        `${READ}The stored frame, decrypted on demand (JPEG, or PNG when that was sent), never cached ` +
        '(`Cache-Control: no-store`). Every view writes an audit row `checkin.image_viewed` (who, which check-in).',
      tag: TAG,
      auth: ['adminSession'],
      scope: 'persons:read',
      params: IdParams,
      responses: { 200: { description: 'The image', schema: Binary, contentType: 'image/*' } },
      errors: [
        {
          status: 404,
          code: 'not_found',
          description: 'no such check-in in your tenant, or no frame stored',
        },
      ],
      handler: async ({ actor, params, req, res }) => {
        const image = await checkins.image(actor, params.id, requestMeta(req, res));
        res.status(200);
        res.setHeader('content-type', image.contentType);
        res.setHeader('content-length', String(image.bytes.length));
        res.setHeader('cache-control', 'no-store');
        res.end(image.bytes);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/admin/stats/today',
      operationId: 'adminStatsToday',
      summary: 'Today’s check-ins in numbers, and the devices',
      description:
        `${READ}Check-ins recorded today in \`tz\` (an IANA zone, default UTC), or in [\`from\`, \`to\`), counted ` +
        'per event, per method and per outcome; and every device of the tenant with its last call, last sync ' +
        'and the queue length it reported then.',
      tag: TAG,
      auth: ['adminSession'],
      scope: 'events:read',
      query: AdminStatsQuery,
      responses: { 200: { description: 'The counts and devices', schema: AdminStats } },
      handler: async ({ actor, query }) => ({ status: 200, body: await stats(actor.tenantId, query) }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/admin/audit-log',
      operationId: 'adminAuditLog',
      summary: 'The tenant’s audit log, newest first',
      description:
        `${ADMIN}Owners and admins only (an operator gets 403). Each entry names its actor in words (\`actor\`: ` +
        'a user’s name and e-mail, an API key’s application and `prefix…lastFour`, a device’s name; portal, ' +
        'public, system and operator actors by their type), read with the page in one lookup per kind of ' +
        'actor. Filters combine: `action` (exact, or a prefix ending in `.`: `person.`), `actorType`, ' +
        '`actorId`, `actor` (text in a name, e-mail, key prefix or application name), `targetType`, ' +
        '`targetId`, `from` (inclusive), `to` (exclusive). Pages by `nextCursor`. Every action is listed in ' +
        'the `AuditAction` schema.',
      tag: TAG,
      auth: ['adminSession'],
      query: AdminAuditQuery,
      responses: { 200: { description: 'A page of audit entries', schema: AdminAuditPage } },
      handler: async ({ actor, query }) => {
        requireManager(actor);
        return { status: 200, body: await auditLog(actor.tenantId, query) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/admin/webhook-deliveries',
      operationId: 'adminListWebhookDeliveries',
      summary: 'Webhook deliveries with their attempts, newest first',
      description:
        `${READ}Each delivery with the payload sent and every attempt (time, HTTP status, duration, error, the ` +
        'start of the answer body). ' +
        'Filters: `status`, `event`. Pages by `nextCursor`.',
      tag: TAG,
      auth: ['adminSession'],
      scope: 'tenant:read',
      query: AdminWebhookDeliveryQuery,
      responses: { 200: { description: 'A page of deliveries', schema: AdminWebhookDeliveryPage } },
      handler: async ({ actor, query }) => ({
        status: 200,
        body: await deliveries.list(actor.tenantId, query),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/admin/webhook-deliveries/{id}',
      operationId: 'adminGetWebhookDelivery',
      summary: 'One webhook delivery with its payload and attempts',
      description:
        `${READ}The delivery with the exact body sent (\`payload\`), every attempt (time, HTTP status or ` +
        'error, duration, the start of the answer body with secrets redacted) and `nextAttemptAt` while it ' +
        'waits for a retry.',
      tag: TAG,
      auth: ['adminSession'],
      scope: 'tenant:read',
      params: IdParams,
      responses: { 200: { description: 'The delivery', schema: AdminWebhookDelivery } },
      errors: [{ status: 404, code: 'not_found', description: 'no such delivery in your tenant' }],
      handler: async ({ actor, params }) => ({
        status: 200,
        body: await deliveries.get(actor.tenantId, params.id),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/admin/webhook-deliveries/{id}/retry',
      operationId: 'adminRetryWebhookDelivery',
      summary: 'Try a delivery that waits for a retry now',
      description:
        `${ADMIN}Owners and admins. A \`pending\` delivery (its last attempt failed and \`nextAttemptAt\` is ` +
        'ahead) is tried now instead, with the retries it has left; while the tenant’s circuit is open it ' +
        'still waits for the circuit. A delivered, failed or cancelled delivery answers 409: send it again ' +
        'with `redeliver`. Audited (`webhook.retried`).',
      tag: TAG,
      auth: ['adminSession'],
      scope: 'tenant:write',
      params: IdParams,
      responses: { 202: { description: 'The delivery, due now', schema: AdminWebhookDelivery } },
      errors: [
        { status: 404, code: 'not_found', description: 'no such delivery in your tenant' },
        {
          status: 409,
          code: 'conflict',
          description: 'the delivery is not waiting for a retry (delivered, failed, cancelled or in flight)',
        },
      ],
      handler: async ({ actor, params, req, res }) => ({
        status: 202,
        body: await deliveries.retry(actor, params.id, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/admin/webhook-deliveries/{id}/redeliver',
      operationId: 'adminRedeliverWebhook',
      summary: 'Send a webhook delivery again',
      description:
        `${ADMIN}Owners and admins. Queues a new delivery of the same event (same body and event id, so a ` +
        'receiver that deduplicates by the body’s `id` ignores it; a new `X-Service-Delivery-Id`) to the ' +
        'tenant’s current `webhookUrl`, with the usual retries. Audited (`webhook.redelivered`).',
      tag: TAG,
      auth: ['adminSession'],
      scope: 'tenant:write',
      params: IdParams,
      responses: { 202: { description: 'The new delivery, queued', schema: AdminWebhookDelivery } },
      errors: [
        { status: 404, code: 'not_found', description: 'no such delivery in your tenant' },
        { status: 409, code: 'webhook_url_not_set', description: 'the tenant has no webhookUrl' },
      ],
      handler: async ({ actor, params, req, res }) => ({
        status: 202,
        body: await deliveries.redeliver(actor, params.id, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/admin/webhooks/test',
      operationId: 'adminSendTestWebhook',
      summary: 'Send a signed test event to the webhook URL',
      description:
        `${ADMIN}Owners and admins. Queues a \`webhook.test\` event (\`data\`: \`requestedBy\`, \`message\`), ` +
        'signed like every webhook, to the tenant’s `webhookUrl`; it is published on the bus too. Its delivery ' +
        'shows in the delivery log. Audited (`webhook.test_sent`).',
      tag: TAG,
      auth: ['adminSession'],
      scope: 'tenant:write',
      responses: { 202: { description: 'The test delivery, queued', schema: AdminWebhookDelivery } },
      errors: [{ status: 409, code: 'webhook_url_not_set', description: 'the tenant has no webhookUrl' }],
      handler: async ({ actor, req, res }) => ({
        status: 202,
        body: await deliveries.sendTest(actor, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/admin/bus',
      operationId: 'adminBusInfo',
      summary: 'The tenant’s MQTT topics and the broker',
      description:
        `${READ}The topic prefix of the tenant, each event with its topic, the broker URL the service ` +
        'uses (`MQTT_URL`, or the embedded broker), `wsUrl`, where browsers reach it over WebSocket ' +
        '(`MQTT_WS_URL` when set, else the embedded broker’s WebSocket listener, `MQTT_WS_PORT`, else null), ' +
        'and, for the embedded broker, a short-lived bus token bound to the tenant: the embedded broker admits ' +
        'no anonymous client, a tenant’s credential may only subscribe under its own `topicPrefix`, and only ' +
        'the service publishes. WebSocket upgrades are accepted from `MQTT_WS_ALLOWED_ORIGINS` only.',
      tag: TAG,
      auth: ['adminSession'],
      scope: 'tenant:read',
      responses: { 200: { description: 'Topics and broker', schema: AdminBusInfo } },
      handler: async ({ actor }) => {
        const url = new URL(deps.bus.url);
        return {
          status: 200,
          body: {
            topicPrefix: busTopic(actor.tenantId, ''),
            qos: 1 as const,
            protocol: 'MQTT 3.1.1',
            events: [...WEBHOOK_EVENTS, ...BUS_ONLY_EVENTS].map((event) => ({
              event,
              topic: busTopic(actor.tenantId, event),
              webhook: (WEBHOOK_EVENTS as readonly string[]).includes(event),
            })),
            brokers: [
              {
                url: deps.bus.url,
                transport: url.protocol.replace(/:$/, '') as 'mqtt' | 'mqtts' | 'ws' | 'wss',
              },
            ],
            wsUrl: deps.config.mqtt.wsUrl ?? deps.bus.wsUrl ?? null,
            embedded: !deps.config.mqtt.url,
            credentials: deps.config.mqtt.url ? null : await busCredentials(actor.tenantId),
          },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/admin/face-quality',
      operationId: 'adminFaceQuality',
      summary: 'Check a photo’s face quality before enrolling it',
      description:
        `${ADMIN}Roles that may enroll (owner, admin). Runs face detection and quality scoring as enrollment ` +
        'does, against the tenant’s `biometricQualityLevel`, and stores nothing (no person, template, image or ' +
        'log of the photo). No face found is a 200 with `faceDetected: false`; an image enrollment would refuse ' +
        'as unreadable gets the same 4xx as enrollment.',
      tag: TAG,
      auth: ['adminSession'],
      scope: 'persons:write',
      body: AdminFaceQualityRequest,
      responses: { 200: { description: 'The quality and what to fix', schema: AdminFaceQuality } },
      errors: FACE_ERRORS,
      handler: async ({ actor, body }) => ({
        status: 200,
        body: await faceQuality(actor.tenantId, body.image),
      }),
    }),
  ];
}
