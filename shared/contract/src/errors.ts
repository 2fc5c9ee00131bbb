import { z } from './zod.js';

/**
 * Every error code the API answers with. Stable: clients switch on `code`, never on `title` or `detail`.
 * New codes are added here first so the OpenAPI doc and the SDKs learn about them.
 */
export const ERROR_CODES = [
  'validation_failed',
  'malformed_json',
  'payload_too_large',
  'headers_too_large',
  'malformed_request',
  'request_timeout',
  'unsupported_media_type',
  'not_found',
  'unauthorized',
  'invalid_token',
  'token_expired',
  'forbidden',
  'insufficient_scope',
  'conflict',
  'rate_limited',
  'mfa_required',
  'mfa_setup_required',
  'invalid_mfa_code',
  'invalid_reset_token',
  'invalid_credentials',
  'account_locked',
  'refresh_token_reused',
  'invalid_api_key',
  'invalid_base64',
  'unsupported_image',
  'image_too_large',
  'no_face_detected',
  'face_quality_too_low',
  'duplicate_face',
  'photos_differ',
  'liveness_failed',
  'face_retake',
  'step_up_factor_not_allowed',
  'step_up_used',
  'step_up_expired',
  'invalid_nonce',
  'invalid_pairing_code',
  'anonymous_identify_not_allowed',
  'qr_token_expired',
  'too_many_rows',
  'email_required',
  'self_registration_off',
  'invitation_required',
  'age_below_minimum',
  'birth_date_required',
  'guardian_consent_required',
  'invalid_transition',
  'event_full',
  'event_not_open',
  'event_not_published',
  'ends_before_start',
  'capacity_below_checked_in',
  'already_checked_in',
  'already_voided',
  'checkin_not_admitted',
  'duplicate_guest',
  'unsupported_file',
  'webhook_url_not_set',
  'idempotency_key_reused',
  'idempotency_key_in_use',
  'already_member',
  'email_in_use',
  'last_owner',
  'cannot_deactivate_self',
  'owner_only',
  'not_invited',
  'invitation_invalid',
  'invitation_expired',
  'engine_unavailable',
  'service_unavailable',
  'internal_error',
] as const;

export const ErrorCode = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof ErrorCode>;

/** RFC 9457 problem details, as every error response (`application/problem+json`). */
export const Problem = z
  .object({
    type: z.string().openapi({ example: 'https://portico.dev/problems/validation_failed' }),
    title: z.string().openapi({ example: 'Validation failed' }),
    status: z.number().int().openapi({ example: 400 }),
    code: ErrorCode,
    detail: z.string().openapi({ example: 'body.name: Required' }),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .openapi({ description: 'Field-level problems (validation errors only), the first 20 at most.' }),
    omittedErrors: z
      .number()
      .int()
      .optional()
      .openapi({ description: 'How many more field-level problems there were beyond those in `errors`.' }),
    requestId: z.string().openapi({ example: 'req_0190f1c27d4e' }),
  })
  .catchall(z.unknown())
  .openapi('Problem');
export type Problem = z.infer<typeof Problem>;
