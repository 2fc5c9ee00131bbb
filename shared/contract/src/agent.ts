// The device agent's local API (`device-agent/src/api.ts`, on 127.0.0.1:7171), as its callers read it:
// the kiosk UI types its answers from these, and the agent validates and documents its routes with
// them (`/docs-json` of the agent). Outcomes and denial reasons are the cloud's own (checkin.ts).
import { CheckinOutcome, DenialReason } from './checkin.js';
import { Problem } from './errors.js';
import { z } from './zod.js';

/** How long a step-up (a face between the two lines) waits for its second factor on a device. */
export const AGENT_STEP_UP_TTL_MS = 60_000;

export const DoorAnswer = z
  .object({
    checkInId: z.string().openapi({ description: 'UUIDv7: the id the check-in keeps in the cloud.' }),
    outcome: CheckinOutcome,
    reason: DenialReason.nullable().openapi({
      description:
        '`step_up_failed`: the second factor of a step-up was not the candidate’s. `already_checked_in`: ' +
        'the guest is in already and the event refuses re-entry (`reentry: refuse`); `guest` then names them.',
    }),
    guest: z.object({ displayName: z.string() }).nullable(),
    score: z.number().nullable(),
    threshold: z.number().nullable(),
    livenessScore: z.number().nullable(),
    recordedAt: z.string(),
  })
  .openapi('DoorAnswer', { description: 'Decided on the device and queued before this answer.' });
/** The second factors a device checks offline (a subset of the tenant's `stepUpFactors`). */
export const AgentStepUpFactor = z.enum(['qr', 'staff']);
export const AgentStepUpRequired = z
  .object({
    outcome: z.literal('step_up_required'),
    attemptId: z.string().openapi({ description: 'Complete it with `POST /step-up/{attemptId}`, once.' }),
    factors: z.array(AgentStepUpFactor).openapi({
      description:
        "The tenant's `stepUpFactors` this device checks offline: `qr` the candidate's invitation QR code, " +
        '`staff` a member of staff (PIN or staff session).',
    }),
    expiresAt: z
      .string()
      .openapi({ description: `${AGENT_STEP_UP_TTL_MS / 1000} s after the identification.` }),
  })
  .openapi('StepUpRequired', {
    description:
      'The face fell between the refuse and the accept line: nothing is queued until the step-up is ' +
      'completed. Never says who the candidate is.',
  });
export const AgentChallengeRequired = z
  .object({
    outcome: z.literal('challenge_required'),
    nonce: z.string().openapi({ description: 'The same challenge, still open: stream its frames on.' }),
    action: z.enum(['blink', 'turn_head']),
  })
  .openapi('ChallengeRequired', {
    description:
      'The passive look was not enough (the tenant’s `livenessChallenge`): the person performs the ' +
      'challenge’s action, its frames are streamed to the same nonce, and identify is called again with it. ' +
      'Nothing is queued; never says who the face resembles.',
  });
export const AgentIdentifyAnswer = z
  .union([DoorAnswer, AgentStepUpRequired, AgentChallengeRequired])
  .openapi('IdentifyAnswer', {
    description: 'A decision (`DoorAnswer`), `step_up_required`, or `challenge_required`.',
  });

export const StepUpCandidate = z
  .object({ name: z.string(), expiresAt: z.string() })
  .openapi('StepUpCandidate', { description: 'Who the face is closest to, for staff to check a document.' });
export const AgentStatus = z
  .object({
    online: z.boolean().openapi({ description: 'The last exchange with the cloud succeeded.' }),
    unauthorized: z
      .string()
      .nullable()
      .openapi({
        description:
          'Why the cloud refuses this device (its internal secret or token: revoked, rotated, never paired), ' +
          'or null. Not an outage: waiting does not fix it; staff must pair the device again.',
      }),
    queueLength: z.number().int(),
    lastSyncAt: z.string().nullable(),
    lastError: z.string().nullable(),
    uploaded: z.number().int(),
    rejected: z.number().int(),
    events: z.array(
      z.object({
        token: z.string(),
        eventId: z.string().nullable(),
        name: z.string().nullable(),
        guests: z.number().int(),
        templates: z.number().int(),
        refreshedAt: z.string().nullable(),
        faceAdmission: z
          .boolean()
          .openapi({ description: 'False once the replica is older than its maximum age.' }),
      }),
    ),
  })
  .openapi('AgentStatus');
/**
 * The cloud's problem shape (RFC 9457, `application/problem+json`, errors.ts `Problem`) with the agent's
 * own codes: a retake's `reasons` and `quality` at the top level, as the cloud answers `face_retake`.
 */
export const AgentProblem = Problem.extend({
  code: z.string().openapi({
    description:
      "Stable, snake_case: the cloud's codes where they mean the same (`validation_failed`, `face_retake`, " +
      "`not_found`, …) and the agent's own (`unknown_event`, `replica_too_old`, `device_not_authorised`, …).",
    example: 'face_retake',
  }),
  reasons: z.array(z.string()).optional().openapi({
    description:
      '`face_retake`: what to fix, worst first, among `move_closer`, `more_light`, `face_the_camera`.',
  }),
  quality: z
    .number()
    .optional()
    .openapi({ description: "`face_retake`: the probe's quality in [0, 1], below the tenant's line." }),
}).openapi('AgentProblem');

export const AgentChallenge = z
  .object({ nonce: z.string(), action: z.enum(['blink', 'turn_head']), expiresAt: z.string() })
  .openapi('AgentChallenge');

export const AgentFaceBox = z
  .object({
    face: z
      .object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() })
      .nullable()
      .openapi({
        description: "The primary face's box as fractions (0..1) of the frame; null: no face seen.",
      }),
  })
  .openapi('FaceBox');

export const StaffSession = z
  .object({
    token: z.string().openapi({ description: 'Send as `x-staff-session` on the staff routes.' }),
    idleTimeoutS: z.number().int().openapi({ description: 'The session ends after this long unused.' }),
  })
  .openapi('StaffSession');

export const StaffGuests = z
  .object({
    items: z.array(z.object({ guestId: z.string(), name: z.string(), checkedIn: z.boolean() })),
  })
  .openapi('StaffGuests');

export type DoorAnswer = z.infer<typeof DoorAnswer>;
export type AgentStepUpRequired = z.infer<typeof AgentStepUpRequired>;
export type AgentChallengeRequired = z.infer<typeof AgentChallengeRequired>;
export type AgentStatus = z.infer<typeof AgentStatus>;
export type AgentProblem = z.infer<typeof AgentProblem>;
export type AgentChallenge = z.infer<typeof AgentChallenge>;
export type AgentFaceBox = z.infer<typeof AgentFaceBox>;
export type StaffSession = z.infer<typeof StaffSession>;
export type StaffGuests = z.infer<typeof StaffGuests>;
