import type { Request, Response } from 'express';
import {
  IdParams,
  Tenant,
  TENANT_SETTINGS_DEFAULTS as D,
  TenantPatch,
  TenantSettings,
  TenantSettingsPatch,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { Actor } from '../../http/actor.js';
import { requestMeta } from '../../http/request-context.js';
import { defineRoute } from '../../http/route.js';
import { createTenantService, type TenantContext } from './service.js';

const TAG = 'Tenant';

const SETTINGS_DOC =
  'Settings and defaults: `webhookUrl` null (http/https; loopback, private and link-local hosts refused), ' +
  '`geofenceRadiusMetros` 200 (metres, 0–100000), `age_policy` `{ minimumAge: null, belowMinimum: "deny" }` ' +
  '(`minimumAge` whole years or null for no rule; `belowMinimum` `deny` or `require_guardian_consent`), ' +
  '`biometricQualityLevel` 0.5 (0.0–1.0, minimum enrollment quality), ' +
  `\`matchThreshold\` ${D.matchThreshold} (accept line: a face at or above it is admitted on its own), ` +
  `\`stepUpThreshold\` ${D.stepUpThreshold} (refuse line, at most \`matchThreshold\`: between the two lines a ` +
  'second factor decides, see identify; equal lines turn step-up off), ' +
  `\`probeQualityMin\` ${D.probeQualityMin} (a check-in photo below it is a 422 \`face_retake\`), ` +
  `\`stepUpFactors\` ${JSON.stringify(D.stepUpFactors)} (any of \`qr\`, \`staff\`, \`document_last4\`, ` +
  '`birth_date`), `livenessThreshold` 0.5, `requireLiveness` true, ' +
  `\`livenessChallenge\` \`${D.livenessChallenge}\` (doors ask for the active challenge only when the passive ` +
  'score is uncertain; `always` on every face), `allowDuplicateFaces` false, ' +
  '`qrTokenTtlHours` 720 (QR token lifetime, 1–87600 hours), `qrRepeatWindowMinutes` 5 (a QR token ' +
  'admitted again within it records nothing new; 0–1440, 0 off), `apiKeyCheckinsPerMinute` 900 (calls a ' +
  'minute one API key may make to each public check-in route, 10–1200; see identify).';
const WRITERS =
  'An owner or admin session (the operator role may only read), or an API key with the scope `tenant:write`.';

export function contextOf(
  actor: Extract<Actor, { kind: 'adminSession' | 'apiKey' }>,
  req: Request,
  res: Response,
): TenantContext {
  return {
    actor: {
      tenantId: actor.tenantId,
      liveTenantId: actor.liveTenantId,
      kind: actor.kind,
      userId: actor.kind === 'adminSession' ? actor.userId : actor.keyId,
    },
    ip: requestMeta(req, res).ip,
    requestId: requestMeta(req, res).requestId,
  };
}

export function tenantRoutes(deps: AppDeps) {
  const tenants = createTenantService({
    db: deps.db,
    allowPrivateWebhookUrls: deps.config.allowPrivateWebhookUrls,
  });
  const notOwn = {
    status: 404,
    code: 'not_found',
    description: 'no such tenant, or not the caller’s own tenant',
  } as const;
  return [
    defineRoute({
      method: 'get',
      path: '/v1/tenants/{id}',
      operationId: 'getTenant',
      summary: 'The caller’s tenant',
      description:
        'Only the caller’s own tenant; any other id is 404. Admin session or API key (scope `tenant:read`). ' +
        'A sandbox caller naming its live tenant’s id gets the sandbox (`environment: "sandbox"`, its own ' +
        '`id`, `sandboxOf` the live id).',
      tag: TAG,
      auth: ['adminSession', 'apiKey'],
      scope: 'tenant:read',
      params: IdParams,
      responses: { 200: { description: 'The tenant', schema: Tenant } },
      errors: [notOwn],
      handler: async ({ actor, params, req, res }) => ({
        status: 200,
        body: await tenants.get(contextOf(actor, req, res), params.id),
      }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/tenants/{id}',
      operationId: 'updateTenant',
      summary: 'Update the tenant’s basic data',
      description: `Partial update of the display name (the slug is fixed). ${WRITERS}`,
      tag: TAG,
      auth: ['adminSession', 'apiKey'],
      scope: 'tenant:write',
      params: IdParams,
      body: TenantPatch,
      responses: { 200: { description: 'The updated tenant', schema: Tenant } },
      errors: [notOwn],
      handler: async ({ actor, params, body, req, res }) => ({
        status: 200,
        body: await tenants.update(contextOf(actor, req, res), params.id, body),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/tenants/{id}/settings',
      operationId: 'getTenantSettings',
      summary: 'The tenant’s settings (defaults filled in)',
      description:
        'Every setting, with the default where the tenant set nothing. Admin session or API key (scope ' +
        `\`tenant:read\`). ${SETTINGS_DOC}`,
      tag: TAG,
      auth: ['adminSession', 'apiKey'],
      scope: 'tenant:read',
      params: IdParams,
      responses: { 200: { description: 'The effective settings', schema: TenantSettings } },
      errors: [notOwn],
      handler: async ({ actor, params, req, res }) => ({
        status: 200,
        body: await tenants.getSettings(contextOf(actor, req, res), params.id),
      }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/tenants/{id}/settings',
      operationId: 'updateTenantSettings',
      summary: 'Update settings (partial)',
      description:
        'Only the fields sent change (`age_policy` merges field by field; `webhookUrl: null` turns webhooks ' +
        `off); unknown fields are 400 \`validation_failed\`. ${WRITERS} ${SETTINGS_DOC}`,
      tag: TAG,
      auth: ['adminSession', 'apiKey'],
      scope: 'tenant:write',
      params: IdParams,
      body: TenantSettingsPatch,
      responses: { 200: { description: 'The effective settings after the change', schema: TenantSettings } },
      errors: [
        notOwn,
        {
          status: 409,
          code: 'conflict',
          description: '`requireMfaForAdmins: true` sent by a user whose own MFA is off',
        },
      ],
      handler: async ({ actor, params, body, req, res }) => ({
        status: 200,
        body: await tenants.updateSettings(contextOf(actor, req, res), params.id, body),
      }),
    }),
  ];
}
