import {
  EnrollRequest,
  EnrollResult,
  OnboardingHealth,
  OnboardingRequest,
  OnboardingResult,
  RegisterRequest,
  RegisterResult,
  RegistrationPending,
  VerifyTokenRequest,
  VerifyTokenResult,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { requestMeta } from '../../http/request-context.js';
import { ANY_CALLER, defineRoute } from '../../http/route.js';
import { personContextOf } from '../persons/routes.js';
import { createOnboardingService } from './service.js';

const TAG = 'Onboarding';

const FACE_ERRORS = [
  { status: 400, code: 'invalid_base64', description: 'a frame is not valid base64' },
  { status: 400, code: 'unsupported_image', description: 'a frame is not a decodable JPEG or PNG' },
  { status: 413, code: 'image_too_large', description: 'a frame over 8 MB decoded or 25 megapixels' },
  { status: 400, code: 'no_face_detected', description: 'no face found in a frame' },
  {
    status: 400,
    code: 'face_quality_too_low',
    description:
      'face quality below the tenant’s biometricQualityLevel; the body carries `quality` (measured), `required` ' +
      'and `photo` (the index of the photo in `frames`, 0 for `frame`)',
  },
  {
    status: 400,
    code: 'photos_differ',
    description: 'two of the `frames` do not show the same person; the body carries `photos` (their indexes)',
  },
  {
    status: 409,
    code: 'duplicate_face',
    description:
      'the face matches another person of the tenant (calibrated score >= matchThreshold) and allowDuplicateFaces is off ' +
      '(API-key and admin callers; an enrollment link gets 409 `conflict` instead)',
  },
  { status: 503, code: 'engine_unavailable', description: 'the biometric engine is starting or unavailable' },
] as const;

/** The tenant's age_policy (README "Person portal and data protection"), checked before the face. */
const TOO_YOUNG = {
  status: 400,
  code: 'age_below_minimum',
  description: 'the birthDate is under age_policy.minimumAge and belowMinimum is deny',
} as const;
const AGE_ERRORS = [
  TOO_YOUNG,
  {
    status: 400,
    code: 'birth_date_required',
    description: 'age_policy has a minimumAge and the person has no birthDate',
  },
  {
    status: 400,
    code: 'guardian_consent_required',
    description:
      'the person is under minimumAge, belowMinimum is require_guardian_consent and no guardianConsent was sent',
  },
] as const;

const QUALITY =
  'Quality (0.0–1.0) is a weighted geometric mean of detector confidence, face size (eye distance), ' +
  'sharpness, exposure and pose, so one bad factor pulls it down: a sharp, frontal, well-lit face with at ' +
  'least ~40 px between the eyes scores above the default level 0.5; blurred, dark or tiny faces score below.';

export function onboardingRoutes(deps: AppDeps) {
  const onboarding = createOnboardingService(deps);
  return [
    defineRoute({
      method: 'post',
      path: '/v1/onboarding',
      operationId: 'onboardPerson',
      summary: 'Create a person, their identity and their biometric enrollment in one call',
      description:
        'For an owner or admin session or an integrator API key with the scope `persons:write` (the same ' +
        'callers that may create persons and enroll them separately). The frame is analysed first; then person, identity, encrypted face ' +
        'template and image, the `person.enrolled` event and the audit entry commit in one transaction, so a ' +
        `failure leaves nothing half-created. ${QUALITY}`,
      tag: TAG,
      auth: ['adminSession', 'apiKey'],
      scope: 'persons:write',
      body: OnboardingRequest,
      responses: { 201: { description: 'Created and enrolled', schema: OnboardingResult } },
      errors: [
        ...AGE_ERRORS,
        ...FACE_ERRORS,
        { status: 409, code: 'conflict', description: 'externalId already used in the tenant' },
      ],
      handler: async ({ actor, body, req, res }) => ({
        status: 201,
        body: await onboarding.onboard(personContextOf(actor, req, res), body),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/public/onboarding/health',
      operationId: 'onboardingHealth',
      summary: 'Is the biometric engine available?',
      description:
        '200 when enrollment can run; 503 while the engine starts or when it cannot (with the reason).',
      tag: TAG,
      auth: ANY_CALLER,
      responses: {
        200: { description: 'Engine ready', schema: OnboardingHealth },
        503: { description: 'Engine starting or unavailable', schema: OnboardingHealth },
      },
      handler: async () => onboarding.health(),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/public/onboarding/register',
      operationId: 'registerPerson',
      summary: 'Public self-registration; returns an enrollment token',
      description:
        'No credentials: the tenant is named by `tenantSlug`, and its setting `selfRegistration` says who ' +
        'may register. `off` (the default for new tenants): 403 `self_registration_off`. `invitation`: only ' +
        'with `invitation` (the event and guest tokens of a guest invitation of one of its events; the guest’s ' +
        'e-mail, when it has one, must be the one given): creates the person, links it to the guest and ' +
        'answers 201 with a single-use enrollment token valid for 72 hours. `open_verified`: anyone; creates ' +
        'the person and the token but answers 202 without it: the token goes as an enrollment link to the ' +
        'e-mail address given, so only that mailbox’s holder can enroll a face. Limited to 20 calls per 10 ' +
        'minutes per client address.',
      tag: TAG,
      auth: ANY_CALLER,
      body: RegisterRequest,
      responses: {
        201: { description: 'Registered by invitation: the enrollment token', schema: RegisterResult },
        202: { description: 'Registered; the enrollment link was e-mailed', schema: RegistrationPending },
      },
      errors: [
        TOO_YOUNG,
        { status: 403, code: 'self_registration_off', description: 'the tenant takes no self-registration' },
        {
          status: 403,
          code: 'invitation_required',
          description: 'the tenant takes invited guests only: no invitation, or it is for another address',
        },
        {
          status: 404,
          code: 'not_found',
          description: 'no active tenant with this slug, or no such invitation at it',
        },
        { status: 409, code: 'conflict', description: 'the invitation was already used to register' },
        { status: 429, code: 'rate_limited', description: 'too many registrations from this address' },
      ],
      handler: async ({ body, req, res }) =>
        onboarding.register(body, requestMeta(req, res), req.get('accept-language') ?? null),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/public/onboarding/verify-token',
      operationId: 'verifyEnrollmentToken',
      summary: 'Check an enrollment token before enrolling',
      description:
        'Does not consume the token. Answers the organisation’s name and the language to address the ' +
        'person in, for the enrollment page. Limited to 60 calls per 10 minutes per client address.',
      tag: TAG,
      auth: ANY_CALLER,
      body: VerifyTokenRequest,
      responses: { 200: { description: 'The token can be used', schema: VerifyTokenResult } },
      errors: [
        { status: 404, code: 'not_found', description: 'unknown token' },
        { status: 400, code: 'invalid_token', description: 'the token was already used' },
        { status: 400, code: 'token_expired', description: 'the token has expired' },
        { status: 429, code: 'rate_limited', description: 'too many attempts from this address' },
      ],
      handler: async ({ body, req, res }) => ({
        status: 200,
        body: await onboarding.verifyToken(
          body.enrollment_token,
          requestMeta(req, res),
          req.get('accept-language') ?? null,
        ),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/public/onboarding/enroll',
      operationId: 'enrollFace',
      summary: 'Enroll (or re-enroll) a person’s face',
      description:
        'Authorised by `enrollment_token` bound to `personId` (single use: consumed on success, kept on ' +
        'failure so the person can retry), by an integrator API key of the person’s tenant (scope ' +
        '`persons:write`) or by an admin session of that tenant (owner or admin: the console). Re-enrollment ' +
        'replaces the template. Stores the template and the image encrypted and emits `person.enrolled`. ' +
        `Token calls are limited to 30 per 10 minutes per client address. ${QUALITY}`,
      tag: TAG,
      auth: ['public', 'apiKey', 'adminSession'],
      scope: 'persons:write',
      body: EnrollRequest,
      responses: { 200: { description: 'Enrolled', schema: EnrollResult } },
      errors: [
        ...AGE_ERRORS,
        ...FACE_ERRORS,
        {
          status: 401,
          code: 'unauthorized',
          description: 'neither an enrollment_token nor an API key or admin session',
        },
        { status: 400, code: 'invalid_token', description: 'token already used or bound to another person' },
        { status: 400, code: 'token_expired', description: 'the token has expired' },
        { status: 404, code: 'not_found', description: 'unknown token, or no such person in the tenant' },
        {
          status: 409,
          code: 'conflict',
          description:
            'the person was anonymised; or, to an `enrollment_token` caller, the face matches another person ' +
            'of the tenant (never `duplicate_face`, which would tell that face is enrolled there; the tenant’s ' +
            'admins find it in the audit log as `person.possible_duplicate`)',
        },
        { status: 429, code: 'rate_limited', description: 'too many attempts from this address' },
      ],
      handler: async ({ actor, body, req, res }) => ({
        status: 200,
        body: await onboarding.enroll(actor, body, requestMeta(req, res)),
      }),
    }),
  ];
}
