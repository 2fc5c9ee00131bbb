import { DeviceCreateRequest, DeviceCreated, DeviceList, Device, IdParams } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { requestMeta } from '../../http/request-context.js';
import { defineRoute } from '../../http/route.js';
import { requireManager } from '../auth/roles.js';
import { createDeviceService } from './service.js';

const TAG = 'Devices';
const ADMIN_ONLY = 'Needs the session JWT of a tenant owner or admin. ';

export function deviceRoutes(deps: AppDeps) {
  const devices = createDeviceService(deps);
  return [
    defineRoute({
      method: 'post',
      path: '/v1/devices',
      operationId: 'registerDevice',
      summary: 'Register an edge device and get its token',
      description:
        `${ADMIN_ONLY}Answers the device token once (\`pdt_<deviceId>.<43 base64url characters>\`); only its ` +
        'SHA-256 is stored. The device sends it as `x-device-token` with `x-internal-secret`: it then reads ' +
        'and syncs this tenant only.',
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
      method: 'get',
      path: '/v1/devices',
      operationId: 'listDevices',
      summary: 'List the tenant’s edge devices',
      description: `${ADMIN_ONLY}Revoked devices are listed with \`revokedAt\`.`,
      tag: TAG,
      auth: ['adminSession'],
      responses: { 200: { description: 'The devices, oldest first', schema: DeviceList } },
      handler: async ({ actor }) => {
        requireManager(actor);
        return { status: 200, body: await devices.list(actor.tenantId) };
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
      errors: [{ status: 404, code: 'not_found', description: 'no such device in the caller’s tenant' }],
      handler: async ({ actor, params, req, res }) => {
        requireManager(actor);
        return { status: 200, body: await devices.revoke(actor, params.id, requestMeta(req, res)) };
      },
    }),
  ];
}
