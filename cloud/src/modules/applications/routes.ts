import type { Request, Response } from 'express';
import {
  ApiKeyList,
  ApiKeyWithSecret,
  ApplicationKeyParams,
  ApplicationList,
  CreateApiKeyRequest,
  CreateApplicationRequest,
  CreatedApplication,
  IdParams,
  PageQuery,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { requestMeta } from '../../http/request-context.js';
import { defineRoute } from '../../http/route.js';
import { requireManager } from '../auth/roles.js';
import { createApplicationService, type AdminContext } from './service.js';

const TAG = 'Applications';
const ADMIN_ONLY =
  'Needs the session JWT of a tenant owner or admin; an API key is refused with 403 `forbidden`. ';
const KEY_FORMAT =
  'Key format: `pk_live_` (live application) or `pk_test_` (sandbox) followed by 43 base64url characters ' +
  '(32 random bytes). The service stores only its SHA-256; the clear key appears in this answer only.';
const SCOPES =
  'A key holds `scopes` (`persons:read`, `persons:write`, `checkin`, `tenant:read`, `tenant:write`): give ' +
  '`scopes` for a narrower key, omit them for a key with every scope. A call the key’s scopes do not cover ' +
  'is 403 `insufficient_scope`; routes that name no scope need every scope. ';

function contextOf(actor: ActorOf<'adminSession'>, req: Request, res: Response): AdminContext {
  requireManager(actor);
  return {
    // Applications and keys belong to the live tenant, whichever environment the session is switched to.
    tenantId: actor.liveTenantId,
    userId: actor.userId,
    ip: requestMeta(req, res).ip,
    requestId: requestMeta(req, res).requestId,
  };
}

export function applicationRoutes(deps: AppDeps) {
  const apps = createApplicationService(deps);
  const appNotFound = {
    status: 404,
    code: 'not_found',
    description: 'no such application in the caller’s tenant',
  } as const;
  const keyNotFound = {
    status: 404,
    code: 'not_found',
    description: 'no such application or key in the caller’s tenant',
  } as const;
  return [
    defineRoute({
      method: 'get',
      path: '/v1/applications',
      operationId: 'listApplications',
      summary: 'List the tenant’s applications',
      description: `${ADMIN_ONLY}Deleted applications are not listed. Cursor-paginated, oldest first.`,
      tag: TAG,
      auth: ['adminSession'],
      query: PageQuery,
      responses: { 200: { description: 'A page of applications', schema: ApplicationList } },
      handler: async ({ actor, query, req, res }) => ({
        status: 200,
        body: await apps.list(contextOf(actor, req, res), query),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/applications',
      operationId: 'createApplication',
      summary: 'Create an application and its first API key',
      description: `${ADMIN_ONLY}Answers the application and its first key in clear text, once. ${SCOPES}${KEY_FORMAT}`,
      tag: TAG,
      auth: ['adminSession'],
      body: CreateApplicationRequest,
      responses: { 201: { description: 'Created; store `apiKey.key` now', schema: CreatedApplication } },
      handler: async ({ actor, body, req, res }) => ({
        status: 201,
        body: await apps.create(contextOf(actor, req, res), body),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/applications/{id}',
      operationId: 'deleteApplication',
      summary: 'Delete an application (revokes its keys)',
      description: `${ADMIN_ONLY}Every key of the application stops working at once.`,
      tag: TAG,
      auth: ['adminSession'],
      params: IdParams,
      responses: { 204: { description: 'Deleted' } },
      errors: [appNotFound],
      handler: async ({ actor, params, req, res }) => {
        await apps.remove(contextOf(actor, req, res), params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/applications/{id}/api-keys',
      operationId: 'listApiKeys',
      summary: 'List an application’s API keys',
      description:
        `${ADMIN_ONLY}Every key with its prefix, last four characters, status (active, rotated, revoked), ` +
        'creation and last-use times (last use is recorded at most once a minute). Never the key itself.',
      tag: TAG,
      auth: ['adminSession'],
      params: IdParams,
      responses: { 200: { description: 'The keys, oldest first', schema: ApiKeyList } },
      errors: [appNotFound],
      handler: async ({ actor, params, req, res }) => ({
        status: 200,
        body: await apps.listKeys(contextOf(actor, req, res), params.id),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/applications/{id}/api-keys',
      operationId: 'createApiKey',
      summary: 'Issue another API key',
      description: `${ADMIN_ONLY}The body is optional. ${SCOPES}${KEY_FORMAT}`,
      tag: TAG,
      auth: ['adminSession'],
      params: IdParams,
      body: CreateApiKeyRequest,
      responses: { 201: { description: 'The new key, in clear text this once', schema: ApiKeyWithSecret } },
      errors: [appNotFound],
      handler: async ({ actor, params, body, req, res }) => ({
        status: 201,
        body: await apps.createKey(contextOf(actor, req, res), params.id, body?.scopes),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/applications/{id}/api-keys/{keyId}/rotate',
      operationId: 'rotateApiKey',
      summary: 'Rotate a key: the old one stops now, a new one is issued',
      description:
        `${ADMIN_ONLY}The old key gets status \`rotated\` and is refused (401 \`invalid_api_key\`) from this ` +
        `moment, with no grace period; the new key (with \`rotatedFromId\` and the old key’s scopes) is ` +
        `answered once. ${KEY_FORMAT}`,
      tag: TAG,
      auth: ['adminSession'],
      params: ApplicationKeyParams,
      responses: {
        201: { description: 'The replacement key, in clear text this once', schema: ApiKeyWithSecret },
      },
      errors: [
        keyNotFound,
        { status: 409, code: 'conflict', description: 'the key is already rotated or revoked' },
      ],
      handler: async ({ actor, params, req, res }) => ({
        status: 201,
        body: await apps.rotateKey(contextOf(actor, req, res), params.id, params.keyId),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/applications/{id}/api-keys/{keyId}',
      operationId: 'revokeApiKey',
      summary: 'Revoke a key',
      description: `${ADMIN_ONLY}The key is refused from this moment. Revoking a key that is not active is a no-op.`,
      tag: TAG,
      auth: ['adminSession'],
      params: ApplicationKeyParams,
      responses: { 204: { description: 'Revoked' } },
      errors: [keyNotFound],
      handler: async ({ actor, params, req, res }) => {
        await apps.revokeKey(contextOf(actor, req, res), params.id, params.keyId);
        return { status: 204 };
      },
    }),
  ];
}
