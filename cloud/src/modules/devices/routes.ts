import {
  DeviceCreateRequest,
  DeviceCreated,
  DeviceEventsRequest,
  DeviceList,
  DeviceRenameRequest,
  Device,
  IdParams,
  PairingCode,
  PairingCodeRequest,
  PairRequest,
  Paired,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { requestMeta } from '../../http/request-context.js';
import { defineRoute } from '../../http/route.js';
import { requireManager } from '../auth/roles.js';
import { createPairingService, PAIR_LIMITS } from './pairing.js';
import { createDeviceService } from './service.js';

const TAG = 'Devices';
const ADMIN_ONLY = 'Needs the session JWT of a tenant owner or admin. ';
const NO_DEVICE = {
  status: 404,
  code: 'not_found',
  description: 'no such device in the caller’s tenant',
} as const;
const NO_EVENT = {
  status: 404,
  code: 'not_found',
  description: 'an event id names no event of the caller’s tenant (or a deleted one)',
} as const;
const minutes = (ms: number) => ms / 60_000;

export function deviceRoutes(deps: AppDeps) {
  const devices = createDeviceService(deps);
  const pairing = createPairingService(deps);
  return [
    defineRoute({
      method: 'post',
      path: '/v1/devices',
      operationId: 'registerDevice',
      summary: 'Register an edge device and get its token',
      description:
        `${ADMIN_ONLY}Answers the device token once (\`pdt_<deviceId>.<43 base64url characters>\`); only its ` +
        'SHA-256 is stored. The device sends it as `x-device-token` with `x-internal-secret`: it then reads ' +
        'and syncs this tenant only. Pairing by code (`POST /v1/devices/pairing-codes`) needs no copying ' +
        'of secrets and is the usual way.',
      tag: TAG,
      auth: ['adminSession'],
      body: DeviceCreateRequest,
      responses: {
        201: { description: 'Registered; give `token` to the device now', schema: DeviceCreated },
      },
      handler: async ({ actor, body, req, res }) => {
        requireManager(actor);
        return { status: 201, body: await devices.register(actor, body.name, requestMeta(req, res)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/devices/pairing-codes',
      operationId: 'createPairingCode',
      summary: 'Make a short code that pairs a new device',
      description:
        `${ADMIN_ONLY}Answers a code of 8 characters (\`XXXX-XXXX\`, no 0/O/1/I/L) to show or read to whoever ` +
        'sets the device up: `pnpm agent pair --cloud <this URL> --code XXXX-XXXX` exchanges it at ' +
        '`POST /v1/devices/pair` for a device of this tenant with this `name`, serving these events. The code ' +
        'works once, for 10 minutes; only its SHA-256 is stored. Audited.',
      tag: TAG,
      auth: ['adminSession'],
      body: PairingCodeRequest,
      responses: { 201: { description: 'The code, shown once', schema: PairingCode } },
      errors: [NO_EVENT],
      handler: async ({ actor, body, req, res }) => {
        requireManager(actor);
        return { status: 201, body: await pairing.createCode(actor, body, requestMeta(req, res)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/devices/pair',
      operationId: 'pairDevice',
      summary: 'Exchange a pairing code for a device and its credentials',
      description:
        'For a new device, so it takes no credentials. Makes the device the code was made for (its name and ' +
        'events; events deleted since are left out) and answers, once, what it needs from then on: its ' +
        '`deviceToken` (sent as `x-device-token`), the platform’s `internalSecret` (sent as ' +
        '`x-internal-secret`; while it is rotated, the new value) and the `cloudUrl`. The code is spent in the ' +
        'same transaction: of two exchanges of one code exactly one gets a device. An unknown, used or ' +
        'expired code (or text that cannot be a code) is 400 `invalid_pairing_code`, the same answer for ' +
        `all. Abuse limits per client address: ${PAIR_LIMITS.failedPerIp.limit} wrong codes in ` +
        `${minutes(PAIR_LIMITS.failedPerIp.windowMs)} minutes, or ${PAIR_LIMITS.perIp.limit} exchanges in ` +
        `${minutes(PAIR_LIMITS.perIp.windowMs)} minutes, then 429 \`rate_limited\` with \`Retry-After\`. Audited.`,
      tag: TAG,
      auth: ['public'],
      body: PairRequest,
      responses: {
        201: { description: 'The new device and its credentials, answered once', schema: Paired },
      },
      errors: [
        { status: 400, code: 'invalid_pairing_code', description: 'unknown, used or expired code' },
        {
          status: 429,
          code: 'rate_limited',
          description: 'too many attempts from this address; see Retry-After',
        },
      ],
      handler: async ({ body, req, res }) => ({
        status: 201,
        body: await pairing.pair(body.code, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/devices',
      operationId: 'listDevices',
      summary: 'List the tenant’s edge devices',
      description:
        `${ADMIN_ONLY}Revoked devices are listed with \`revokedAt\`. Each with the events it serves, its last ` +
        'sync and reported queue, and `online`: not revoked and seen (any authenticated call) within the ' +
        'last 2 minutes.',
      tag: TAG,
      auth: ['adminSession'],
      responses: { 200: { description: 'The devices, oldest first', schema: DeviceList } },
      handler: async ({ actor }) => {
        requireManager(actor);
        return { status: 200, body: await devices.list(actor.tenantId) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/devices/{id}',
      operationId: 'renameDevice',
      summary: 'Rename a device',
      description: `${ADMIN_ONLY}Audited.`,
      tag: TAG,
      auth: ['adminSession'],
      params: IdParams,
      body: DeviceRenameRequest,
      responses: { 200: { description: 'The renamed device', schema: Device } },
      errors: [NO_DEVICE],
      handler: async ({ actor, params, body, req, res }) => {
        requireManager(actor);
        return {
          status: 200,
          body: await devices.rename(actor, params.id, body.name, requestMeta(req, res)),
        };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/v1/devices/{id}/events',
      operationId: 'setDeviceEvents',
      summary: 'Set the events a device serves',
      description:
        `${ADMIN_ONLY}Replaces the device’s whole assignment (\`[]\` takes every event off it). The device ` +
        'sees the new list at its next `GET /v1/sync/device` and syncs exactly those events. Audited.',
      tag: TAG,
      auth: ['adminSession'],
      params: IdParams,
      body: DeviceEventsRequest,
      responses: { 200: { description: 'The device with its new events', schema: Device } },
      errors: [NO_DEVICE, NO_EVENT],
      handler: async ({ actor, params, body, req, res }) => {
        requireManager(actor);
        return {
          status: 200,
          body: await devices.setEvents(actor, params.id, body.eventIds, requestMeta(req, res)),
        };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/devices/{id}',
      operationId: 'revokeDevice',
      summary: 'Revoke a lost or retired device',
      description: `${ADMIN_ONLY}Its token is refused from now on (401 \`invalid_token\`); its check-ins stay. Idempotent.`,
      tag: TAG,
      auth: ['adminSession'],
      params: IdParams,
      responses: { 200: { description: 'The revoked device', schema: Device } },
      errors: [NO_DEVICE],
      handler: async ({ actor, params, req, res }) => {
        requireManager(actor);
        return { status: 200, body: await devices.revoke(actor, params.id, requestMeta(req, res)) };
      },
    }),
  ];
}
