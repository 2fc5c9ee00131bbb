import {
  BiometricStatusList,
  BiometricsRevoked,
  IdParams,
  MagicLinkAccepted,
  MagicLinkRequest,
  MagicLinkVerifyQuery,
  MAGIC_LINK_TTL_SECONDS,
  Me,
  MePatch,
  MyBiometricImageList,
  MyCheckInPage,
  MyCheckInQuery,
  MyOrganisationList,
  NotificationPreferences,
  NotificationPreferencesPatch,
  PORTAL_TOKEN_TTL_SECONDS,
  PortalSessionList,
  PortalTokenResponse,
  TenantIdParams,
  z,
} from '@portico/contract';
import type { Response } from 'express';
import type { AppDeps } from '../../deps.js';
import { isLinkPreview, requestMeta } from '../../http/request-context.js';
import { defineRoute } from '../../http/route.js';
import { createPortalService } from './service.js';

const TAG = 'Person portal';
const PORTAL = ['portal'] as const;
const WHO =
  'Portal JWT (`type: person_portal`, from the magic link) only: admin sessions and API keys are refused. ' +
  'Covers every tenant holding a person or a guest entry with the account’s verified e-mail. ';
const Binary = z.string().openapi({ format: 'binary' });

/** Biometric and profile images: never cached by a browser or proxy. */
function sendImage(res: Response, image: { bytes: Buffer; contentType: string }) {
  res.status(200);
  res.setHeader('content-type', image.contentType);
  res.setHeader('content-length', String(image.bytes.length));
  res.setHeader('cache-control', 'no-store');
  res.setHeader('x-content-type-options', 'nosniff');
  res.end(image.bytes);
}

export function portalRoutes(deps: AppDeps) {
  const portal = createPortalService(deps);
  return [
    defineRoute({
      method: 'post',
      path: '/v1/portal/auth/magic-link',
      operationId: 'requestPortalMagicLink',
      summary: 'E-mail a sign-in link to the person portal',
      description:
        'Public. Answers 202 the same way, after the same work, whether or not the address is known: the ' +
        'request queues the lookup, which runs in the background; only an address that a tenant ' +
        `holds on a person or a guest entry (or an existing portal account) gets a mail. The link works once, for ${MAGIC_LINK_TTL_SECONDS / 60} ` +
        'minutes, and opens `{PUBLIC_URL}/portal/login?token=…`. At most 5 links per address and 30 per ' +
        'client an hour (429 `rate_limited`).',
      tag: TAG,
      auth: ['public'],
      body: MagicLinkRequest,
      responses: { 202: { description: 'Accepted', schema: MagicLinkAccepted } },
      errors: [
        { status: 429, code: 'rate_limited', description: 'too many links for this address or client' },
      ],
      handler: async ({ body, req, res }) => {
        await portal.requestMagicLink(body, requestMeta(req, res));
        return {
          status: 202,
          body: {
            message: `If the address is known, a sign-in link is on its way; it is valid for ${MAGIC_LINK_TTL_SECONDS / 60} minutes.`,
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/portal/auth/magic-link/verify',
      operationId: 'verifyPortalMagicLink',
      summary: 'Exchange a magic-link token for a portal JWT',
      description:
        `Public. Spends the link and opens a portal session of ${PORTAL_TOKEN_TTL_SECONDS / 60} minutes (no ` +
        'refresh: ask for a new link). The account is created on first sign-in and linked to every person ' +
        'of any tenant with that e-mail. A link preview or prefetch is answered 204 and spends nothing.',
      tag: TAG,
      auth: ['public'],
      query: MagicLinkVerifyQuery,
      responses: {
        200: { description: 'Signed in', schema: PortalTokenResponse },
        204: { description: 'A link preview: nothing spent' },
      },
      errors: [
        { status: 401, code: 'invalid_token', description: 'unknown, used or expired link' },
        {
          status: 429,
          code: 'rate_limited',
          description: 'over 30 e-mailed tokens tried by this client in 10 minutes',
        },
      ],
      handler: async ({ query, req, res }) => {
        if (isLinkPreview(req)) return { status: 204 };
        return { status: 200, body: await portal.verifyMagicLink(query.token, requestMeta(req, res)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/me',
      operationId: 'getMe',
      summary: 'Own profile and the tenants holding a record of me',
      description: WHO,
      tag: TAG,
      auth: PORTAL,
      responses: { 200: { description: 'The profile', schema: Me } },
      handler: async ({ actor }) => ({ status: 200, body: await portal.me(actor) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/me',
      operationId: 'updateMe',
      summary: 'Update name, phone or profile photo',
      description:
        `${WHO}Changes the portal profile; the tenants’ own records are theirs to change. The photo is ` +
        'stored encrypted and is not a biometric (never enrolled or compared); `GET /v1/me/photo` returns it.',
      tag: TAG,
      auth: PORTAL,
      body: MePatch,
      responses: { 200: { description: 'The updated profile', schema: Me } },
      handler: async ({ actor, body, req, res }) => ({
        status: 200,
        body: await portal.updateMe(actor, body, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/me/photo',
      operationId: 'getMyPhoto',
      summary: 'The profile photo',
      description: WHO,
      tag: TAG,
      auth: PORTAL,
      responses: {
        200: { description: 'The photo (JPEG or PNG)', schema: Binary, contentType: 'image/*' },
      },
      errors: [{ status: 404, code: 'not_found', description: 'no photo set' }],
      handler: async ({ actor, res }) => sendImage(res, await portal.photo(actor)),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/me/sessions',
      operationId: 'listMySessions',
      summary: 'Portal sign-in sessions',
      description: `${WHO}Newest first, the last 100; \`current\` marks the caller’s own.`,
      tag: TAG,
      auth: PORTAL,
      responses: { 200: { description: 'Sessions', schema: PortalSessionList } },
      handler: async ({ actor }) => ({ status: 200, body: await portal.sessions(actor) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/me/sessions/{id}',
      operationId: 'endMySession',
      summary: 'End a portal session',
      description: `${WHO}Its token is refused from now on (401). Ending the current session signs out.`,
      tag: TAG,
      auth: PORTAL,
      params: IdParams,
      responses: { 204: { description: 'Ended' } },
      errors: [{ status: 404, code: 'not_found', description: 'no such session of this account' }],
      handler: async ({ actor, params, req, res }) => {
        await portal.endSession(actor, params.id, requestMeta(req, res));
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/me/biometrics',
      operationId: 'listMyBiometrics',
      summary: 'Biometric status per tenant',
      description: `${WHO}Enrolled or not, when, quality and model of the template. Each read is audited.`,
      tag: TAG,
      auth: PORTAL,
      responses: { 200: { description: 'Per tenant', schema: BiometricStatusList } },
      handler: async ({ actor, req, res }) => ({
        status: 200,
        body: await portal.biometrics(actor, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/me/biometrics/{tenantId}',
      operationId: 'revokeMyBiometrics',
      summary: 'Withdraw biometric consent at a tenant',
      description:
        `${WHO}Erases at once the tenant’s face templates and biometric images of the person (rows and ` +
        'encrypted files); facial check-in there stops. The person record stays. The tenant gets ' +
        '`person.biometrics_revoked` by webhook and on the bus.',
      tag: TAG,
      auth: PORTAL,
      params: TenantIdParams,
      responses: { 200: { description: 'Erased', schema: BiometricsRevoked } },
      errors: [{ status: 404, code: 'not_found', description: 'the tenant holds no record of this person' }],
      handler: async ({ actor, params, req, res }) => ({
        status: 200,
        body: await portal.revokeBiometrics(actor, params.tenantId, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/me/checkins',
      operationId: 'listMyCheckins',
      summary: 'Check-in history across tenants',
      description: `${WHO}Of the persons and of the guest entries; newest first, cursor pages.`,
      tag: TAG,
      auth: PORTAL,
      query: MyCheckInQuery,
      responses: { 200: { description: 'A page of check-ins', schema: MyCheckInPage } },
      handler: async ({ actor, query }) => ({ status: 200, body: await portal.checkins(actor, query) }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/me/organisations',
      operationId: 'listMyOrganisations',
      summary: 'What each organisation holds about me',
      description:
        `${WHO}One item per organisation, by name: its person record with this address (or null), its ` +
        'guest entries (event, dates, status) and the newest check-ins of either (method and outcome; no ' +
        'scores, no images). Sandbox tenants and removed guest entries are not listed.',
      tag: TAG,
      auth: PORTAL,
      responses: { 200: { description: 'Per organisation', schema: MyOrganisationList } },
      handler: async ({ actor }) => ({ status: 200, body: await portal.organisations(actor) }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/me/notification-preferences',
      operationId: 'getMyNotificationPreferences',
      summary: 'Notification preferences',
      description: `${WHO}\`language\` of the portal’s e-mails; \`signInAlerts\`: a mail at each new sign-in.`,
      tag: TAG,
      auth: PORTAL,
      responses: { 200: { description: 'Preferences', schema: NotificationPreferences } },
      handler: async ({ actor }) => ({ status: 200, body: await portal.preferences(actor) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/me/notification-preferences',
      operationId: 'updateMyNotificationPreferences',
      summary: 'Update notification preferences',
      description: `${WHO}Only the fields sent change.`,
      tag: TAG,
      auth: PORTAL,
      body: NotificationPreferencesPatch,
      responses: { 200: { description: 'Preferences', schema: NotificationPreferences } },
      handler: async ({ actor, body }) => ({
        status: 200,
        body: await portal.updatePreferences(actor, body),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/me/biometric-images',
      operationId: 'listMyBiometricImages',
      summary: 'Metadata of the biometric images held',
      description: `${WHO}Enrollment photos and check-in captures of every tenant, newest first. Audited.`,
      tag: TAG,
      auth: PORTAL,
      responses: { 200: { description: 'Images', schema: MyBiometricImageList } },
      handler: async ({ actor, req, res }) => ({
        status: 200,
        body: await portal.images(actor, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/me/biometric-images/{id}/file',
      operationId: 'getMyBiometricImageFile',
      summary: 'One biometric image, decrypted',
      description: `${WHO}Streamed with its stored content type; never cached. Each read is audited.`,
      tag: TAG,
      auth: PORTAL,
      params: IdParams,
      responses: { 200: { description: 'The image', schema: Binary, contentType: 'image/*' } },
      errors: [{ status: 404, code: 'not_found', description: 'no such image of this person' }],
      handler: async ({ actor, params, req, res }) => {
        sendImage(res, await portal.imageFile(actor, params.id, requestMeta(req, res)));
      },
    }),
  ];
}
