// Wire types of biometric enrollment: `/v1/onboarding` (admin, one call) and the public
// `/v1/public/onboarding/*` flow (register -> verify-token -> enroll).
import { Id, Text, Timestamp } from './common.js';
import { Person, PersonFields } from './persons.js';
import { PersonLocale } from './tenants.js';
import { z } from './zod.js';

export const FaceFrame = z
  .string()
  .min(1)
  .openapi({
    description:
      'The image as base64 of a JPEG or PNG (a `data:image/...;base64,` prefix is accepted). Sharp, frontal, ' +
      'well lit, one face; at most 8 MB decoded and 25 megapixels.',
  });

export const EnrollmentTokenValue = Text.min(1).max(200).openapi({
  description: 'Single-use token from registration or from an enrollment link.',
  example: 'et_...',
});

/** Most photos one enrollment takes. */
export const MAX_ENROLLMENT_PHOTOS = 5;

const FaceFrames = z
  .array(FaceFrame)
  .min(1)
  .max(MAX_ENROLLMENT_PHOTOS)
  .openapi({
    description:
      'One to five photos of the same person (instead of `frame`): the template is their mean embedding, which ' +
      'recognises the person more reliably than one photo (fewer enrolled people turned away at the same ' +
      'threshold). Each photo must reach the quality level; photos of different people are refused with 400 ' +
      '`photos_differ`. The whole body must stay within the body limit (12 MB by default).',
  });

/** A body with `frame` (one photo) or `frames` (several), never both or neither. */
const photosGiven = (body: { frame?: string | undefined; frames?: string[] | undefined }) =>
  (body.frame === undefined) !== (body.frames === undefined);
const PHOTOS_MESSAGE = {
  message: 'Send `frame` (one photo) or `frames` (one to five), not both',
  path: ['frame'],
};

/** The enrollment photos of a request, whichever field carried them. */
export function enrollmentFrames(body: {
  frame?: string | undefined;
  frames?: string[] | undefined;
}): string[] {
  return body.frames ?? (body.frame === undefined ? [] : [body.frame]);
}

/** LGPD art. 14: a minor's biometric data needs the consent of a parent or legal guardian. */
export const GuardianConsent = z
  .strictObject({
    relationship: z.enum(['parent', 'legal_guardian']),
    given: z.literal(true).openapi({
      description: 'The caller attests that this guardian gave specific consent to the enrollment.',
    }),
  })
  .openapi('GuardianConsent', {
    description:
      'Needed to enroll a person under the tenant’s `age_policy.minimumAge` when `belowMinimum` is ' +
      '`require_guardian_consent`; recorded in the audit log with the enrollment. Ignored otherwise.',
  });
export type GuardianConsent = z.infer<typeof GuardianConsent>;

export const OnboardingRequest = PersonFields.extend({
  frame: FaceFrame.optional(),
  frames: FaceFrames.optional(),
  guardianConsent: GuardianConsent.optional(),
})
  .refine(photosGiven, PHOTOS_MESSAGE)
  .openapi('OnboardingRequest');
export type OnboardingRequest = z.infer<typeof OnboardingRequest>;

export const OnboardingResult = z
  .object({
    person: Person,
    identityId: Id,
    quality: z.number().min(0).max(1),
    photos: z.number().int().min(1).openapi({ description: 'How many photos the template was made from.' }),
    modelId: z.string(),
  })
  .openapi('OnboardingResult');
export type OnboardingResult = z.infer<typeof OnboardingResult>;

export const RegisterRequest = z
  .strictObject({
    tenantSlug: Text.min(1).max(100).openapi({ example: 'acme' }),
    name: PersonFields.shape.name,
    document: PersonFields.shape.document,
    email: z.email().max(320),
    phone: PersonFields.shape.phone,
    birthDate: PersonFields.shape.birthDate,
    invitation: z
      .strictObject({
        eventToken: Text.min(16).max(128),
        guestToken: Text.min(16).max(128),
      })
      .optional()
      .openapi({
        description:
          'The guest invitation this registration answers (the event and guest tokens of the invitation ' +
          'link). Required when the tenant’s `selfRegistration` is `invitation`; the new person is linked ' +
          'to that guest.',
      }),
  })
  .openapi('RegisterRequest');
export type RegisterRequest = z.infer<typeof RegisterRequest>;

export const RegisterResult = z
  .object({
    personId: Id,
    enrollment_token: EnrollmentTokenValue,
    expiresAt: Timestamp,
  })
  .openapi('RegisterResult');
export type RegisterResult = z.infer<typeof RegisterResult>;

export const RegistrationPending = z
  .object({
    status: z.literal('verification_sent'),
    expiresAt: Timestamp.openapi({ description: 'When the e-mailed enrollment link stops working.' }),
  })
  .openapi('RegistrationPending', {
    description:
      'Tenant setting `open_verified`: the enrollment link went to the e-mail address given; opening it ' +
      'proves the address and is the only way to enroll a face for this registration.',
  });
export type RegistrationPending = z.infer<typeof RegistrationPending>;

export const VerifyTokenRequest = z
  .strictObject({ enrollment_token: EnrollmentTokenValue })
  .openapi('VerifyTokenRequest');

export const VerifyTokenResult = z
  .object({
    valid: z.literal(true),
    personId: Id,
    expiresAt: Timestamp,
    organisation: z
      .object({ name: z.string() })
      .openapi({ description: 'Whose link it is: the tenant’s name, shown on the enrollment page.' }),
    locale: PersonLocale.openapi({
      description:
        'The language to address the person in: their saved language (their data portal’s), else the ' +
        'browser’s `Accept-Language`, else the tenant’s `defaultLocale`.',
    }),
  })
  .openapi('VerifyTokenResult');
export type VerifyTokenResult = z.infer<typeof VerifyTokenResult>;

export const EnrollRequest = z
  .strictObject({
    personId: Id,
    frame: FaceFrame.optional(),
    frames: FaceFrames.optional(),
    enrollment_token: EnrollmentTokenValue.optional().openapi({
      description: 'Required unless the call carries an API key of the person’s tenant. Consumed on success.',
    }),
    guardianConsent: GuardianConsent.optional(),
  })
  .refine(photosGiven, PHOTOS_MESSAGE)
  .openapi('EnrollRequest');
export type EnrollRequest = z.infer<typeof EnrollRequest>;

export const EnrollResult = z
  .object({
    personId: Id,
    quality: z
      .number()
      .min(0)
      .max(1)
      .openapi({ description: 'Face quality, 0.0 to 1.0 (the lowest of the photos).', example: 0.82 }),
    photos: z.number().int().min(1).openapi({ description: 'How many photos the template was made from.' }),
    enrolled: z.literal(true),
    modelId: z.string().openapi({ description: 'The embedding model the template was made with.' }),
  })
  .openapi('EnrollResult');
export type EnrollResult = z.infer<typeof EnrollResult>;

export const OnboardingHealth = z
  .object({
    status: z.enum(['ok', 'starting', 'unavailable']),
    modelId: z.string(),
    workers: z.number().int(),
    reason: z.string().optional().openapi({ description: 'Why the engine is not ready.' }),
  })
  .openapi('OnboardingHealth');
export type OnboardingHealth = z.infer<typeof OnboardingHealth>;
