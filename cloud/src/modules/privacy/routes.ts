import {
  DataExport,
  DataExportDownloadParams,
  DataExportDownloadQuery,
  DataExportRequest,
  DATA_EXPORT_TTL_SECONDS,
  DeletionConfirmRequest,
  DeletionRequest,
  z,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { requestMeta } from '../../http/request-context.js';
import { defineRoute } from '../../http/route.js';
import { createPrivacyService } from './service.js';

const TAG = 'Data protection';
const PORTAL = ['portal'] as const;
const WHO = 'Portal JWT (`type: person_portal`) only: admin sessions and API keys are refused. ';

export function privacyRoutes(deps: AppDeps) {
  const privacy = createPrivacyService(deps);
  const grace = `${deps.config.deletionGraceHours} hour(s) on this server (\`DELETION_GRACE_HOURS\`)`;
  return [
    defineRoute({
      method: 'post',
      path: '/v1/me/deletion-request',
      operationId: 'requestMyDeletion',
      summary: 'Ask for everything held about me to be erased',
      description:
        `${WHO}Creates a request in \`pending_confirmation\`, publishes \`identity.deletion_requested\` on the ` +
        'bus of every tenant holding the person, and e-mails a confirmation token (valid 24 hours) to send to ' +
        `\`POST /v1/portal/auth/deletion-confirm\`. The erasure runs ${grace} after confirmation.`,
      tag: TAG,
      auth: PORTAL,
      responses: { 201: { description: 'Requested', schema: DeletionRequest } },
      errors: [{ status: 409, code: 'conflict', description: 'a request is already pending or confirmed' }],
      handler: async ({ actor, req, res }) => ({
        status: 201,
        body: await privacy.requestDeletion(actor, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/me/deletion-request',
      operationId: 'getMyDeletionRequest',
      summary: 'Status of my latest deletion request',
      description: WHO,
      tag: TAG,
      auth: PORTAL,
      responses: { 200: { description: 'The latest request', schema: DeletionRequest } },
      errors: [{ status: 404, code: 'not_found', description: 'no deletion request was made' }],
      handler: async ({ actor }) => ({ status: 200, body: await privacy.deletionStatus(actor) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/me/deletion-request',
      operationId: 'cancelMyDeletionRequest',
      summary: 'Cancel my deletion request',
      description: `${WHO}Possible while it is \`pending_confirmation\` or \`confirmed\` (before the erasure ran).`,
      tag: TAG,
      auth: PORTAL,
      responses: { 200: { description: 'Cancelled', schema: DeletionRequest } },
      errors: [{ status: 404, code: 'not_found', description: 'no request that can still be cancelled' }],
      handler: async ({ actor, req, res }) => ({
        status: 200,
        body: await privacy.cancelDeletion(actor, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/portal/auth/deletion-confirm',
      operationId: 'confirmMyDeletion',
      summary: 'Confirm a deletion request with the e-mailed token',
      description:
        'The token is the credential (public; a portal JWT sent along is accepted too). It works once, for 24 ' +
        `hours. The erasure is scheduled ${grace} later and can be cancelled until then.`,
      tag: TAG,
      auth: ['public', 'portal'],
      body: DeletionConfirmRequest,
      responses: { 200: { description: 'Confirmed', schema: DeletionRequest } },
      errors: [
        { status: 401, code: 'invalid_token', description: 'unknown, used or expired token' },
        {
          status: 429,
          code: 'rate_limited',
          description: 'over 30 e-mailed tokens tried by this client in 10 minutes',
        },
      ],
      handler: async ({ body, req, res }) => ({
        status: 200,
        body: await privacy.confirmDeletion(body.token, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/me/data-export',
      operationId: 'requestMyDataExport',
      summary: 'Export everything held about me (portability)',
      description:
        `${WHO}A zip of JSON files (profile, persons per tenant, guests, check-ins, consents, biometric ` +
        'template and image metadata, sessions, preferences; the decrypted images with `includeImages`) is built ' +
        `in the background and a signed download link, valid ${DATA_EXPORT_TTL_SECONDS / 86400} days, is e-mailed.`,
      tag: TAG,
      auth: PORTAL,
      body: DataExportRequest,
      responses: { 202: { description: 'Being built', schema: DataExport } },
      errors: [{ status: 409, code: 'conflict', description: 'an export is already being built' }],
      handler: async ({ actor, body, req, res }) => ({
        status: 202,
        body: await privacy.requestExport(actor, body?.includeImages ?? false, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/portal/data-exports/{id}/download',
      operationId: 'downloadMyDataExport',
      summary: 'Download an export through its e-mailed link',
      description: 'Public: the link’s signature and expiry are the credential. Every download is audited.',
      tag: TAG,
      auth: ['public'],
      params: DataExportDownloadParams,
      query: DataExportDownloadQuery,
      responses: {
        200: {
          description: 'The zip archive',
          schema: z.string().openapi({ format: 'binary' }),
          contentType: 'application/zip',
        },
      },
      errors: [
        { status: 401, code: 'invalid_token', description: 'the signature does not match' },
        { status: 401, code: 'token_expired', description: 'the link has expired' },
        { status: 404, code: 'not_found', description: 'the export is gone (expired or erased)' },
      ],
      handler: async ({ params, query, req, res }) => {
        const zip = await privacy.download(params.id, query.expires, query.signature, requestMeta(req, res));
        res.status(200);
        res.setHeader('content-type', 'application/zip');
        res.setHeader('content-disposition', `attachment; filename="portico-export-${params.id}.zip"`);
        res.setHeader('cache-control', 'no-store');
        res.end(zip);
      },
    }),
  ];
}
