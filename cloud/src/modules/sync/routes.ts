import {
  Replica,
  ReplicaParams,
  ReplicaQuery,
  SYNC_BATCH_MAX,
  SyncBatchRequest,
  SyncBatchResult,
  SyncDevice,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { requestMeta } from '../../http/request-context.js';
import { defineRoute } from '../../http/route.js';
import { createDeviceService } from '../devices/service.js';
import { syncBatch } from './batch.js';
import { eventReplica } from './replica.js';

const TAG = 'Sync';
const DEVICE_ONLY =
  'Device credentials only: `x-internal-secret` (missing or an integrator’s Bearer alone: 401; wrong: 403) ' +
  'and the device’s `x-device-token` (401 `invalid_token` when unknown or revoked), which scopes the call ' +
  'to the device’s tenant. ';

export function syncRoutes(deps: AppDeps) {
  const devices = createDeviceService(deps);
  return [
    defineRoute({
      method: 'post',
      path: '/v1/sync/batch',
      operationId: 'syncBatch',
      summary: 'Upload check-ins a device decided offline',
      description:
        `${DEVICE_ONLY}Up to ${SYNC_BATCH_MAX} \`SyncItem\`s, each answered on its own, in order: ` +
        '`accepted` (recorded now, with the device’s `clientId` as check-in id and its `recordedAt` as ' +
        'occurrence time), `duplicate` (that `clientId` was recorded before: nothing new, the first answer ' +
        'again) or `rejected` with a `code`; a bad item never drops the good ones. The device’s outcome is ' +
        'the fact: the event rules are re-checked and disagreements become `flags` (closed event, full, ' +
        'method not allowed, guest already checked in e.g. by another kiosk), never a refusal. Only a ' +
        '`recordedAt` that cannot be the real time is refused (`validation_failed`): over 5 minutes ahead of ' +
        'the cloud, older than 30 days (longer than a device queue keeps an item) or over 24 hours before ' +
        'the event’s `startsAt`. Accepted ' +
        'items emit the same webhooks and bus messages as online check-ins, with `offline: true`, ' +
        '`recordedAt` and `flags` in `data`. Refused attempts at the door (`denied`, `liveness_failed`) are ' +
        'uploaded and recorded too. The device’s `lastSyncAt` and, when sent, its `queueLength` are stored ' +
        'for the admin console.',
      tag: TAG,
      auth: ['device'],
      body: SyncBatchRequest,
      responses: { 200: { description: 'One result per item', schema: SyncBatchResult } },
      handler: async ({ actor, body, req, res }) => {
        const results = await syncBatch(deps, actor, body.items, requestMeta(req, res));
        await devices.recordSync(actor, body.queueLength);
        return { status: 200, body: results };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/sync/events/{token}/replica',
      operationId: 'getEventReplica',
      summary: 'An event’s confirmed list with face templates, for a device',
      description:
        `${DEVICE_ONLY}The device form of \`/v1/events/{token}/confirmed-list\`: the same guests with their ` +
        'person, the SHA-256 of their invitation link token (QR check) and the face template of the ' +
        'tenant’s model (`template`, null when not enrolled), the event’s rules and the tenant’s decision ' +
        'policy (model, thresholds). Pages by `nextCursor`; keep the last page’s `checkpoint` and send it ' +
        'as `since` for changes only: guests added, changed or `removed`, and guests whose biometrics ' +
        'changed (a revoked template arrives as `template: null`). Another tenant’s event is 404.',
      tag: TAG,
      auth: ['device'],
      params: ReplicaParams,
      query: ReplicaQuery,
      responses: { 200: { description: 'A page of the replica', schema: Replica } },
      errors: [
        {
          status: 404,
          code: 'not_found',
          description: 'no open event of the device’s tenant has this token',
        },
      ],
      handler: async ({ actor, params, query }) => ({
        status: 200,
        body: await eventReplica(deps, actor, params.token, query),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/sync/device',
      operationId: 'getSyncDevice',
      summary: 'The calling device and the events it serves',
      description:
        `${DEVICE_ONLY}The events an admin assigned to this device (\`PUT /v1/devices/{id}/events\`, or the ` +
        'pairing code’s), deleted ones left out, by `startsAt`: the device syncs exactly these, each by its ' +
        '`token` at `GET /v1/sync/events/{token}/replica` (a `draft` event’s replica is 404 until it is ' +
        'published). Read it again now and then: the list changes when an admin reassigns the device.',
      tag: TAG,
      auth: ['device'],
      responses: { 200: { description: 'The device and its events', schema: SyncDevice } },
      handler: async ({ actor }) => ({ status: 200, body: await devices.assignment(actor) }),
    }),
  ];
}
