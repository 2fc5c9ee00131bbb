import type { StepUpRequired } from '@portico/contract';
import {
  CheckinParams,
  CheckinResult,
  IdentifyRequest,
  IdentifyResult,
  IdentityParams,
  LivenessChallenge,
  ManualCheckinRequest,
  QrCheckinQuery,
  QrCheckinResult,
  QrToken,
  QrTokenParams,
  StepUpParams,
  StepUpRequest,
  TenantSlugParams,
  VoidCheckinRequest,
  VoidedCheckin,
} from '@portico/contract';
import { randomInt } from 'node:crypto';
import type { Request } from 'express';
import type { AppDeps } from '../../deps.js';
import type { ActorKind } from '../../http/actor.js';
import { CHECKIN_LIMITS, createCheckinLimits } from './limits.js';
import { PAGE_CSP } from '../../http/page-csp.js';
import { isLinkPreview, requestMeta } from '../../http/request-context.js';
import { defineRoute } from '../../http/route.js';
import { createIdentify } from './identify.js';
import { CHALLENGE_ACTIONS, createNonceService } from './nonces.js';
import { requireManager } from '../auth/roles.js';
import { pageDocument, pageText } from '../pages/document.js';
import { createPageHeads } from '../pages/heads.js';
import { tenantForCaller } from '../tenants/service.js';
import { createCheckinService } from './service.js';
import { createStepUp } from './step-up.js';
import { createCheckinVoid } from './void.js';

const TAG = 'Check-in';

const RATE_LIMIT_ERROR = {
  status: 429,
  code: 'rate_limited',
  description:
    'over the caller’s limit (per API key, device, user, or address without credentials); `Retry-After` ' +
    'says when to retry',
} as const;

/** Who is limited how on the face routes (the same words on challenge, identify and step-up). */
const CALLER_LIMITS =
  'an API key per key (the tenant’s `apiKeyCheckinsPerMinute`, default 900 a minute, whatever address it ' +
  'calls from), a device per device and a signed-in user per user (120 a minute), a caller without ' +
  'credentials per client address (120 a minute)';

/**
 * What an anonymous caller learns of a decision: the outcome, never the scores. Scores would let anyone
 * tune a photo or a spoof step by step against the threshold.
 */
function forCaller<T extends CheckinResult | StepUpRequired>(kind: ActorKind, result: T): T {
  if (kind !== 'public') return result;
  // Nor who the face is closest to: a step-up names its candidate to credentialed callers only.
  const { score: _score, threshold: _threshold, livenessScore: _liveness, ...outcome } = result;
  if ('candidate' in outcome) delete outcome.candidate;
  return outcome as T;
}

/**
 * A face check-in answers an anonymous caller (tenant setting identifyCallers) the outcome only: not who
 * was recognised either, or a photo found on the web would tell whether and as whom it is enrolled. The
 * tenant's webhook and bus message carry the person.
 */
function forFaceCaller<T extends CheckinResult | StepUpRequired>(kind: ActorKind, result: T): T {
  const shown = forCaller(kind, result);
  return kind === 'public' && 'person' in shown ? { ...shown, person: null } : shown;
}

const STEP_UP_EXAMPLE = {
  outcome: 'step_up_required',
  stepUp: {
    attemptId: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11',
    factors: ['qr', 'staff'],
    expiresAt: '2026-11-26T10:00:59.000Z',
  },
  eventId: null,
};

/**
 * A request that must not check anyone in: HEAD (link checkers), a browser prefetch or link preview
 * (`Purpose`, `Sec-Purpose`, `X-Purpose`, `X-Moz`), or a client that prefers HTML to JSON (someone who
 * opened the link, a mail scanner). Scanners and kiosks call the route as API clients.
 */
function linkVisit(req: Request): 'preview' | 'browser' | null {
  if (isLinkPreview(req)) return 'preview';
  return req.accepts(['application/json', 'text/html']) === 'text/html' ? 'browser' : null;
}

export function checkinRoutes(deps: AppDeps) {
  const limits = createCheckinLimits(deps);
  const nonces = createNonceService({ db: deps.db, clock: deps.clock, key: deps.secrets.jwtKey });
  const checkin = createCheckinService(deps);
  const stepUp = createStepUp(deps);
  const identify = createIdentify(deps, nonces, stepUp);
  const voidCheckin = createCheckinVoid(deps);
  const heads = createPageHeads(deps);
  /** Identify and step-up per tenant (by slug), across all its callers; a sandbox counts apart. */
  const perTenant = (route: string, slug: string, environment: 'live' | 'sandbox') => ({
    key: `checkin:${route}:tenant:${slug}${environment === 'sandbox' ? ':sandbox' : ''}`,
    rule: CHECKIN_LIMITS.perTenant,
  });

  return [
    defineRoute({
      method: 'get',
      path: '/v1/public/checkin/{tenantSlug}/liveness/challenge',
      operationId: 'checkinLivenessChallenge',
      summary: 'Get a single-use liveness nonce',
      description:
        'Returns an HMAC-signed nonce valid for 120 seconds and usable once. Send it as `nonce` with the frame ' +
        'to `identify`. A caller without credentials (where the tenant’s `identifyCallers` takes them) gets an ' +
        'active challenge (`blink` or `turn_head`, at random) and sends the frames showing it as `frames`. ' +
        'When the tenant requires liveness (`requireLiveness`, default true) identify refuses a ' +
        'missing, expired, forged, another tenant’s or already-used nonce with 400 `invalid_nonce`. With a ' +
        '`pk_test_` key (or a device of the sandbox) the nonce is the tenant’s sandbox’s, on the same slug; an API ' +
        'key asks on its own tenant’s slug only (another is 404). Issuing a nonce stores nothing: its first use ' +
        'does.\n\n' +
        `Limits: ${CALLER_LIMITS}.`,
      tag: TAG,
      auth: ['public', 'apiKey', 'device'],
      scope: 'checkin',
      params: TenantSlugParams,
      responses: { 200: { description: 'A fresh nonce', schema: LivenessChallenge } },
      errors: [
        { status: 404, code: 'not_found', description: 'no active tenant has this slug' },
        RATE_LIMIT_ERROR,
      ],
      handler: async ({ params, actor, req, res }) => {
        const meta = requestMeta(req, res);
        await limits.caller('challenge', actor, meta.ip);
        const tenant = await tenantForCaller(deps.db, params.tenantSlug, actor);
        // A caller without credentials, where the tenant takes them, gets an active challenge.
        const challenge =
          actor.kind === 'public' && tenant.settings.identifyCallers === 'anonymous_with_challenge'
            ? CHALLENGE_ACTIONS[randomInt(CHALLENGE_ACTIONS.length)]!
            : 'passive';
        const { nonce, expiresAt } = nonces.issue(tenant.id, challenge);
        return { status: 200, body: { nonce, expiresAt: expiresAt.toISOString(), challenge } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/public/checkin/{tenantSlug}/identify',
      operationId: 'checkinIdentify',
      summary: 'Check in by face',
      description:
        'Finds the face in `frame`, searches the tenant’s enrolled persons (1:N) and decides on the calibrated ' +
        'match score of the closest one (cosine similarity normalised against the tenant’s gallery) with three ' +
        'answers:\n\n' +
        '- at or above the accept line `matchThreshold`: recorded as `success` (or `geofence_alert` when admitted ' +
        'outside the event’s geofence, `denied` by the event rules);\n' +
        '- from the refuse line `stepUpThreshold` up to the accept line: **`step_up_required`** (`StepUpRequired`), ' +
        'nothing recorded yet: the person completes it within 60 seconds with one of the tenant’s `stepUpFactors` ' +
        'at `POST /v1/public/checkin/{tenantSlug}/step-up/{attemptId}`;\n' +
        '- below the refuse line: `denied` (`not_recognised`).\n\n' +
        'Before any of that, a photo below the tenant’s `probeQualityMin` is not judged: 422 `face_retake` with ' +
        '`reasons` (`move_closer`, `hold_still`, `more_light`, `face_the_camera`), nothing recorded and the frame ' +
        'not kept; and `liveness_failed` when the tenant requires liveness and the passive score is below ' +
        '`livenessThreshold`. With `eventId` the event rules apply. The ' +
        'frame is stored encrypted with the check-in; an audit row, a bus message and the webhook of the outcome ' +
        'follow. Callable without credentials (tenant from the slug, liveness nonce required when the tenant ' +
        'requires liveness) or with the tenant’s API key (quick-start; scope `checkin`).\n\n' +
        '**Who may call** is the tenant’s `identifyCallers`: by default (`credentialed`) only the tenant’s API ' +
        'keys (scope `checkin`); a call without credentials is 403 `anonymous_identify_not_allowed`, whatever ' +
        'the photo. With `anonymous_with_challenge`, callers without credentials are taken too, each with a ' +
        'fresh nonce (400 `invalid_nonce` without one) whose active challenge (`blink` or `turn_head`) they ' +
        'show in `frames` (3 to 8, in order, `frame` among them; else 400 `validation_failed`), judged ' +
        'together (422 `liveness_failed` when the frames do not show it or not all the same person; nothing ' +
        'recorded), and get the outcome only (`outcome`, `reason`, ' +
        '`checkInId`, `person: null`): no person, no `score`, `threshold` or `livenessScore` (which would let a ' +
        'photo or a spoof be tuned step by step), and for a step-up no `candidate` (nobody learns whom a face ' +
        'resembles). API-key callers get the person, the scores and the step-up’s `candidate`.\n\n' +
        'An API-key caller may leave out `nonce` even when the tenant requires liveness: the key stays on a ' +
        'server, and the nonce guards against replaying a captured frame through a public kiosk. Passive ' +
        'liveness still judges the frame (`liveness_failed` below `livenessThreshold`); what a server gives up ' +
        'without a nonce is replay protection, so a server relaying frames from its own cameras should fetch ' +
        'a challenge per frame. A nonce that is sent is always checked.\n\n' +
        `Limits: ${CALLER_LIMITS}; and 1,200 a minute per tenant across all its callers.\n\n` +
        '**Sandbox**: with a `pk_test_` key the same slug identifies among the tenant’s sandbox’s persons and ' +
        'records the check-in there (its webhook says `environment: "sandbox"`); without credentials a slug is ' +
        'the live tenant’s. The sandbox has its own 1,200 a minute.',
      tag: TAG,
      auth: ['public', 'apiKey'],
      scope: 'checkin',
      params: TenantSlugParams,
      body: IdentifyRequest,
      responses: {
        200: {
          description: 'The recorded decision (`CheckinResult`), or a step-up to complete (`StepUpRequired`)',
          schema: IdentifyResult,
          examples: {
            success: {
              summary: 'Admitted on the face (anonymous caller: no scores)',
              value: {
                checkInId: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d12',
                outcome: 'success',
                reason: null,
                method: 'facial',
                person: { id: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d13', displayName: 'Amy' },
                eventId: null,
                geofenceStatus: 'not_applicable',
                occurredAt: '2026-11-26T10:00:00.000Z',
                stepUp: null,
              },
            },
            stepUpAnonymous: {
              summary: 'Between the lines, anonymous caller: no candidate, no scores',
              value: STEP_UP_EXAMPLE,
            },
            stepUpApiKey: {
              summary: 'Between the lines, API-key caller: the candidate and the scores',
              value: {
                ...STEP_UP_EXAMPLE,
                candidate: { id: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d13', displayName: 'Amy' },
                score: 0.5,
                threshold: 0.6,
                livenessScore: 0.93,
              },
            },
          },
        },
      },
      errors: [
        {
          status: 400,
          code: 'invalid_nonce',
          description: 'missing (anonymous caller), forged, expired or used nonce',
        },
        {
          status: 403,
          code: 'anonymous_identify_not_allowed',
          description:
            'a call without credentials while the tenant’s `identifyCallers` is `credentialed` (the default)',
        },
        { status: 400, code: 'invalid_base64', description: '`frame` is not base64' },
        { status: 400, code: 'unsupported_image', description: '`frame` is not a JPEG or PNG' },
        { status: 400, code: 'no_face_detected', description: 'no face in the frame' },
        {
          status: 422,
          code: 'face_retake',
          description:
            'the photo is below the tenant’s `probeQualityMin`: nothing recorded; `reasons` says what to fix ' +
            '(`move_closer`, `hold_still`, `more_light`, `face_the_camera`, worst first)',
        },
        {
          status: 422,
          code: 'liveness_failed',
          description:
            'a caller without credentials whose `frames` do not show the nonce’s active challenge, or not all ' +
            'the same person: nothing recorded, the nonce spent',
        },
        { status: 413, code: 'image_too_large', description: 'the image is over 8 MB or 25 megapixels' },
        { status: 404, code: 'not_found', description: 'unknown tenant slug, or an event of another tenant' },
        {
          status: 429,
          code: 'rate_limited',
          description: 'over a per-client or per-tenant limit; see `Retry-After`',
        },
        { status: 503, code: 'engine_unavailable', description: 'the biometric engine is starting or down' },
      ],
      handler: async ({ params, body, actor, req, res }) => {
        const meta = requestMeta(req, res);
        // Both limits are counted (in one statement) before the tenant is looked up, so unknown slugs
        // cannot be probed at full speed either.
        // A sandbox counts apart: testing must not use up the live tenant's budget.
        const environment = actor.kind === 'apiKey' ? actor.environment : 'live';
        await limits.caller(
          'identify',
          actor,
          meta.ip,
          perTenant('identify', params.tenantSlug, environment),
        );
        return {
          status: 200,
          body: forFaceCaller(actor.kind, await identify(actor, params.tenantSlug, body, meta)),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/public/checkin/{tenantSlug}/step-up/{attemptId}',
      operationId: 'checkinStepUp',
      summary: 'Complete a step-up with a second factor',
      description:
        'Completes the `step_up_required` answer of identify, once, within 60 seconds, with a second factor ' +
        'bound to the candidate the face was closest to: `qr` (`token`: the candidate’s identity QR token or ' +
        'their guest invitation’s link token), `document_last4` (`code`: the last 4 digits of their document), ' +
        '`birth_date` (`code`: YYYY-MM-DD) or `staff` (a staff member at the door confirms; API-key, admin-session ' +
        'or device callers only). The factor must be one of the tenant’s `stepUpFactors`.\n\n' +
        'A factor that belongs to the candidate records the check-in exactly as an accepted face would (event ' +
        'rules, capacity, geofence, webhook and bus) with `stepUp: { factor }`; one that does not records a ' +
        '`denied` check-in with reason `step_up_failed` (its webhook and bus message follow). Either way the ' +
        'attempt is spent: a second call is 409 `step_up_used`. Anonymous callers get no scores.\n\n' +
        `Limits, as identify’s: ${CALLER_LIMITS}; and 1,200 a minute per tenant.`,
      tag: TAG,
      auth: ['public', 'apiKey', 'adminSession', 'device'],
      scope: 'checkin',
      params: StepUpParams,
      body: StepUpRequest,
      responses: { 200: { description: 'The recorded decision', schema: CheckinResult } },
      errors: [
        {
          status: 400,
          code: 'step_up_factor_not_allowed',
          description: 'the factor is not among the tenant’s `stepUpFactors` (the attempt is not spent)',
        },
        {
          status: 403,
          code: 'forbidden',
          description: '`staff` from an anonymous caller (the attempt is not spent)',
        },
        {
          status: 404,
          code: 'not_found',
          description: 'unknown tenant slug, or no attempt with this id in the tenant',
        },
        { status: 409, code: 'step_up_used', description: 'the attempt was already completed or refused' },
        { status: 410, code: 'step_up_expired', description: 'more than 60 seconds since identify' },
        {
          status: 429,
          code: 'rate_limited',
          description: 'over a per-client or per-tenant limit; see `Retry-After`',
        },
      ],
      handler: async ({ params, body, actor, req, res }) => {
        const meta = requestMeta(req, res);
        const environment = 'environment' in actor ? actor.environment : 'live';
        await limits.caller('step-up', actor, meta.ip, perTenant('step-up', params.tenantSlug, environment));
        return {
          status: 200,
          body: forFaceCaller(
            actor.kind,
            await stepUp.complete(actor, params.tenantSlug, params.attemptId, body, meta),
          ),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/checkin/identities/{identityId}/qr-token',
      operationId: 'checkinGetQrToken',
      summary: "Generate or read an identity's QR token",
      description:
        'Returns the active QR token of the identity, creating it on first call (201). The token is stored hashed ' +
        'for lookup and encrypted so it can be shown again; it is valid until revoked or until `expiresAt` ' +
        '(`createdAt` + the tenant’s `qrTokenTtlHours`, default 720 hours = 30 days). Once it has expired, this ' +
        'call issues a new token (201): rotation is reading the token again after `expiresAt`.',
      tag: TAG,
      auth: ['adminSession', 'apiKey'],
      scope: 'checkin',
      params: IdentityParams,
      responses: {
        200: { description: 'The existing token', schema: QrToken },
        201: { description: 'A new token', schema: QrToken },
      },
      errors: [
        { status: 404, code: 'not_found', description: 'no active identity with this id in your tenant' },
      ],
      handler: async ({ params, actor, req, res }) => {
        const { status, view } = await checkin.qrToken(actor, params.identityId, requestMeta(req, res));
        return { status, body: view };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/checkin/identities/{identityId}/qr-token',
      operationId: 'checkinRevokeQrToken',
      summary: "Revoke an identity's QR token",
      description:
        'The token stops working at once; the next GET creates a new one. A tenant user needs the owner or ' +
        'admin role (an operator gets 403 `forbidden`); an API key needs the `checkin` scope.',
      tag: TAG,
      auth: ['adminSession', 'apiKey'],
      scope: 'checkin',
      params: IdentityParams,
      responses: { 204: { description: 'Revoked' } },
      errors: [
        { status: 404, code: 'not_found', description: 'no identity, or no active token, in your tenant' },
      ],
      handler: async ({ params, actor, req, res }) => {
        // Revoking cuts a person off at the door: a management act, not running check-in.
        if (actor.kind === 'adminSession') requireManager(actor);
        await checkin.revokeQrToken(actor, params.identityId, requestMeta(req, res));
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/public/checkin/qr/{token}',
      operationId: 'checkinByQr',
      summary: 'Check in by QR code',
      description:
        'Records a check-in for the identity whose QR token this is (method `qr`); the event rules (status, ' +
        'methods, capacity, geofence from `lat`/`lng`) apply when `eventId` is given. The outcome is in the body; ' +
        'the webhook and bus event follow. Unknown and revoked tokens answer 404, an expired one 410 ' +
        '`qr_token_expired`. Anonymous callers get no scores (they are null for QR anyway).\n\n' +
        '**Repeats.** The same identity admitted by QR again within the tenant’s `qrRepeatWindowMinutes` ' +
        '(default 5; same event, or both without one) records nothing new: the answer is the earlier check-in ' +
        'with `alreadyCheckedIn: true` (no new row, webhook or bus message). A scan that was refused (e.g. ' +
        '`event_closed`) does not hold the window. A scan racing one still being recorded gets 409 `conflict`.\n\n' +
        '**Link visits record nothing.** A kiosk or scanner calls this route as an API client (`Accept: ' +
        'application/json`, `*/*` or none). `HEAD`, and a prefetch or link preview (`Purpose`, `Sec-Purpose`, ' +
        '`X-Purpose` or `X-Moz` saying `prefetch`, `prerender` or `preview`) get 204 and nothing is read or ' +
        'recorded; a client that prefers `text/html` (someone who opened the link in a browser, a mail ' +
        'scanner) gets a short HTML page saying so (200 `text/html`), nothing recorded.\n\n' +
        '**Limits, sized for a door rush** (a venue’s guests and kiosks share one address, so known codes ' +
        'are not limited per address): 10 scans a minute per code (a double read, a retry; repeats answer ' +
        'the earlier admission anyway) and 3,000 a minute per event (`eventId`; without one, per tenant). ' +
        'Codes that resolve to nothing (unknown, revoked, malformed) are what guessing looks like: 60 a ' +
        'minute per client address (per credential for a caller with one), shared with link check-ins; once ' +
        'used up, every scan from there waits until the minute ends. An API key is also limited per key ' +
        '(`apiKeyCheckinsPerMinute`, default 900), a device per device and a user per user (120).',
      tag: TAG,
      auth: ['public', 'apiKey', 'adminSession', 'device'],
      scope: 'checkin',
      params: QrTokenParams,
      query: QrCheckinQuery,
      responses: {
        200: {
          description: 'The recorded decision, or the earlier one (`alreadyCheckedIn: true`)',
          schema: QrCheckinResult,
        },
        204: { description: 'HEAD, prefetch or link preview: nothing recorded' },
      },
      errors: [
        { status: 404, code: 'not_found', description: 'unknown or revoked token, or an unknown event' },
        {
          status: 409,
          code: 'conflict',
          description: 'a check-in with this code is being recorded right now',
        },
        {
          status: 410,
          code: 'qr_token_expired',
          description: 'the token has expired; read it again for a new one',
        },
        RATE_LIMIT_ERROR,
      ],
      handler: async ({ params, query, actor, req, res }) => {
        const meta = requestMeta(req, res);
        // A visit below reads nothing, so it is not counted; a credential's own limit comes first.
        if (actor.kind !== 'public') await limits.caller('qr', actor, meta.ip);
        const visit = linkVisit(req);
        if (visit === 'preview') return { status: 204 };
        if (visit === 'browser') {
          // Someone who scanned their code with a phone: what it is, in their language (heads.ts).
          const { lang, title } = await heads.qrCode(req, params.token, query.eventId);
          const page = pageDocument({
            lang,
            title,
            content: { heading: pageText(lang, 'qrHeading'), paragraphs: [pageText(lang, 'qrHint')] },
            noindex: true,
          });
          res.setHeader('content-security-policy', PAGE_CSP);
          res.status(200).type('html').send(page);
          return;
        }
        return {
          status: 200,
          body: forCaller(actor.kind, await checkin.checkinByQr(actor, params.token, query, meta)),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/checkin/manual',
      operationId: 'checkinManual',
      summary: 'Check a person or a guest in by hand',
      description:
        'For staff at the door (admin session): records a `manual` check-in for the person (`personId`), or ' +
        'for a guest of the event (`guestId` with `eventId`; a guest without a person too, such as a walk-in ' +
        'added at the door). With `eventId`, the event rules (status, methods, re-entry, capacity) apply and a ' +
        'refusal is recorded as `denied` with its reason. Taken back with `POST /v1/checkin/{checkInId}/void`.',
      tag: TAG,
      auth: ['adminSession'],
      body: ManualCheckinRequest,
      responses: { 200: { description: 'The recorded decision', schema: CheckinResult } },
      errors: [
        {
          status: 404,
          code: 'not_found',
          description: 'no such person, event or guest of the event in your tenant',
        },
      ],
      handler: async ({ body, actor, req, res }) => ({
        status: 200,
        body: await checkin.manual(actor, body, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/checkin/{checkInId}/void',
      operationId: 'voidCheckin',
      summary: 'Undo a check-in (void an admission)',
      description:
        'Staff take back an admission that should not have happened (the wrong guest ticked at the door, a ' +
        'face matched to the wrong person, a test), with a `reason`. What it means at the event (the shared ' +
        'check-in policy, the same on the cloud and the kiosks): **a voided admission counts for nothing**. ' +
        'Its place of the capacity is free again, and it is no earlier admission for re-entry, so the guest ' +
        'or person may come in again under any `reentry` rule (`refuse` included), taking a place again ' +
        'then. A subject with another admission that still counts stays in. The guest goes back to the ' +
        'status it had before (`confirmed`, `invited` or `pending`; confirmed lists and kiosk replicas ' +
        'report the change) and its invitation link checks in again.\n\n' +
        'The check-in stays on record, marked `voided` (who, when, why) in the admin list and export; an ' +
        'audit row `checkin.voided` and the event `checkin.voided` (webhook and bus) are written with it. ' +
        'Only an admission (`success`, `geofence_alert`) can be voided, once.',
      tag: TAG,
      auth: ['adminSession', 'apiKey'],
      scope: 'checkin',
      params: CheckinParams,
      body: VoidCheckinRequest,
      responses: { 200: { description: 'The voided check-in and its guest now', schema: VoidedCheckin } },
      errors: [
        { status: 404, code: 'not_found', description: 'no such check-in in your tenant' },
        {
          status: 409,
          code: 'checkin_not_admitted',
          description: 'the check-in was not an admission (denied or liveness failed): nothing to undo',
        },
        { status: 409, code: 'already_voided', description: 'the check-in is already voided' },
      ],
      handler: async ({ params, body, actor, req, res }) => ({
        status: 200,
        body: await voidCheckin(actor, params.checkInId, body.reason, requestMeta(req, res)),
      }),
    }),
  ];
}
