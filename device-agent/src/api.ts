// The local API the kiosk UI calls, on localhost only: status (and a live stream of it), liveness
// challenge (and its frames, streamed as they are taken), identify (and the step-up that completes a
// face between the two lines), QR, the live face guide, and the
// staff fallback (PIN, guest search, manual check-in; refused to any caller not on this machine).
// Web pages of other sites are kept out first (request-guard.ts: Host, Origin, JSON content type).
// Each route is declared once with its zod schemas, which validate the request and document it at
// /docs-json.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenApiGeneratorV31, OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
  AgentChallenge as Challenge,
  AgentFaceBox as FaceBox,
  AgentStatus,
  DoorAnswer,
  AgentIdentifyAnswer as IdentifyAnswer,
  StaffGuests,
  StaffSession,
  StepUpCandidate,
  z,
} from '@portico/contract';
import { DoorError, STEP_UP_TTL_MS, type Door } from './door.js';
import type { FrameSource } from './camera.js';
import { GUIDE_FRAME_MAX_CHARS, type Guide } from './guide.js';
import type { Logger } from './log.js';
import { CHALLENGE_MAX_FRAMES } from './liveness.js';
import type { Replica } from './replica.js';
import { PIN_PATTERN } from './pin.js';
import { refuse, requestGuard, type RequestGuard } from './request-guard.js';
import { invalidFields, newRequestId, problemOf, type ProblemInput } from './problem.js';
import { defineRoute, match, STAFF_HEADER, toOpenApi, type Route } from './route.js';
import type { Staff } from './staff.js';

const StepUpParams = z.object({ attemptId: z.string().min(1).max(64) });
const StepUpBody = z
  .discriminatedUnion('factor', [
    z.strictObject({
      factor: z.literal('qr'),
      code: z
        .string()
        .min(1)
        .max(2048)
        .openapi({ description: 'The scanned QR code: the invitation link or its token.' }),
    }),
    z.strictObject({
      factor: z.literal('staff'),
      pin: z
        .string()
        .max(12)
        .optional()
        .openapi({ description: 'The staff PIN; without it, `x-staff-session`.' }),
      confirmed: z.boolean().default(true).openapi({
        description: 'False: staff say the person is not the candidate (a denial `step_up_failed`).',
      }),
    }),
  ])
  .openapi('StepUpBody');
const TokenParams = z.object({ token: z.string().min(1).max(128) });
const BODY_LIMIT = 40 * 1024 * 1024;
const IdentifyBody = z
  .strictObject({
    frames: z
      .array(z.string().min(1))
      .min(1)
      .max(CHALLENGE_MAX_FRAMES)
      .optional()
      .openapi({
        description:
          'Base64 JPEG or PNG frames: one without liveness; with it, a short sequence in the order taken, ' +
          'showing the challenge. Without `frames`, the frames streamed for `nonce` ' +
          '(`POST /challenge/{nonce}/frames`) are used.',
      }),
    nonce: z.string().max(64).optional(),
    passive: z
      .boolean()
      .optional()
      .openapi({
        description:
          'The first look at a face coming into view (frames streamed for `nonce`, none in the body): ' +
          'decided at once when the passive liveness score settles liveness (tenant setting ' +
          '`livenessChallenge`), otherwise answered `challenge_required` with the nonce still open.',
      }),
  })
  .refine((b) => b.frames !== undefined || b.nonce !== undefined, {
    message: 'send frames, or the nonce of a challenge whose frames were streamed',
  })
  .refine((b) => !b.passive || (b.nonce !== undefined && b.frames === undefined), {
    message: 'a passive look takes the frames streamed for its nonce, none in the body',
  })
  .openapi('IdentifyBody');
const NonceParams = z.object({ nonce: z.string().min(1).max(64) });
const ChallengeFrameBody = z
  .strictObject({
    frame: z
      .string()
      .min(1)
      .max(BODY_LIMIT / CHALLENGE_MAX_FRAMES)
      .openapi({
        description: `One base64 JPEG or PNG frame, at most ${BODY_LIMIT / CHALLENGE_MAX_FRAMES} characters (${CHALLENGE_MAX_FRAMES} of them fit one identify body).`,
      }),
  })
  .openapi('ChallengeFrameBody');
const ChallengeFrames = z
  .object({
    received: z.number().int().openapi({ description: 'Frames this challenge holds, this one included.' }),
  })
  .openapi('ChallengeFrames');
const CameraBody = z
  .strictObject({
    frames: z.number().int().min(1).max(8).default(1).openapi({ description: 'Frames to take in a row.' }),
    nonce: z.string().max(64).optional(),
  })
  .optional()
  .openapi('CameraBody');
const QrBody = z.strictObject({ code: z.string().min(1).max(2048) }).openapi('QrBody');

const FaceBoxBody = z
  .strictObject({
    frame: z.string().min(1).max(GUIDE_FRAME_MAX_CHARS).openapi({
      description:
        'A small copy of the camera picture (base64 JPEG, about 320x240), for the live face guide.',
    }),
  })
  .openapi('FaceBoxBody');
const PinBody = z
  .strictObject({ pin: z.string().regex(PIN_PATTERN).openapi({ description: '4 to 12 digits.' }) })
  .openapi('StaffPinBody');
const GuestQuery = z.object({
  q: z.string().trim().min(1).max(100).openapi({
    description: 'Name prefix: each word must start a word of the name; accents and case are ignored.',
  }),
  limit: z.coerce.number().int().min(1).max(50).default(20),
});
const ManualBody = z.strictObject({ guestId: z.string().min(1).max(64) }).openapi('ManualBody');

// JSON only, never to be rendered or framed.
const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
};
const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export function createApi(deps: {
  door: Door;
  replica: Replica;
  staff: Staff;
  guide: Guide;
  status: () => Promise<z.infer<typeof AgentStatus>>;
  /**
   * Why the cloud refuses this device (revoked, wrong secret), or null. A revoked device stops
   * deciding at once; while the cloud is unreachable it cannot know, and goes on.
   */
  unauthorized: () => string | null;
  camera: FrameSource | null;
  /** Subscribes to status changes; returns the unsubscribe. */
  onChange: (listener: () => void) => () => void;
  /** Who may call (request-guard.ts): the address listened on, and the extra host names and origins. */
  access?: { listenHost?: string; extraHosts?: string[]; extraOrigins?: string[] };
  /** Unexpected failures (a 500): the error alone, never the request's body, query or headers. */
  log: Logger;
}) {
  const routes: Route[] = [
    defineRoute({
      method: 'get',
      path: '/status',
      summary: 'Online state, queue, last sync, replica sizes',
      response: AgentStatus,
      handler: () => deps.status(),
    }),
    defineRoute({
      method: 'get',
      path: '/challenge',
      summary: 'A fresh liveness challenge (nonce + action, 60 s, single use)',
      response: Challenge,
      handler: async () => {
        const c = deps.door.challenge();
        return { nonce: c.nonce, action: c.action, expiresAt: new Date(c.expiresAt).toISOString() };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/challenge/{nonce}/frames',
      summary: 'One frame of a challenge in progress, sent as soon as it is taken',
      description:
        'Kept with the challenge in the order received (send them one after the other, each once the ' +
        'previous one is answered) and analysed at once, so that identify after the last frame waits for ' +
        `that frame's analysis alone. At most ${CHALLENGE_MAX_FRAMES} frames a challenge (409 ` +
        '`too_many_frames`); 400 `invalid_nonce` for a nonce unknown, used or expired. A frame the engine ' +
        'refuses (not an image, no face) is accepted here and answered by identify (422), as for frames ' +
        'sent at once. The frames and their analyses are freed when identify spends the nonce, or when the ' +
        'challenge expires unused. Then `POST /events/{token}/identify` with `{ nonce }` and no frames.',
      params: NonceParams,
      body: ChallengeFrameBody,
      status: 202,
      response: ChallengeFrames,
      handler: async ({ params, body }) => deps.door.streamFrame(params.nonce, body.frame),
    }),
    defineRoute({
      method: 'post',
      path: '/events/{token}/identify',
      decides: true,
      summary: 'Check in by face, decided on the device',
      description:
        'With `frames`: those frames, and when the tenant requires liveness the challenge of `nonce` ' +
        '(spent). Without: the frames streamed for `nonce` (`POST /challenge/{nonce}/frames`), in the ' +
        'order received, once their analyses are done; the nonce is then required whatever the policy, ' +
        'and spent with its frames; 400 `no_frames` when none were streamed. `frames` with a nonce that ' +
        'has streamed frames is ambiguous: 400 `ambiguous_frames` (the nonce is spent). Three answers ' +
        '(`@portico/checkin-policy` faceDecision): a frame too poor to judge (small, dark, turned face) is ' +
        '422 `face_retake` with `reasons` (as the cloud) and nothing queued; a face between the refuse and the ' +
        'accept line answers `step_up_required` (complete it with `POST /step-up/{attemptId}`); otherwise ' +
        "the decision, queued. With `passive` (the kiosk's first look, before any action is asked): " +
        '`challenge_required` when the passive score leaves liveness open or the tenant asks for the ' +
        "challenge `always` (nothing searched, nothing queued; stream the action's frames to the same " +
        'nonce and identify again without `passive`; a second passive look is 409 `look_answered`); any ' +
        'other answer spends the nonce.',
      params: TokenParams,
      body: IdentifyBody,
      response: IdentifyAnswer,
      handler: ({ params, body }) => deps.door.identify(params.token, body),
    }),
    defineRoute({
      method: 'post',
      path: '/events/{token}/identify-camera',
      decides: true,
      summary: 'Check in by face with frames from the agent camera (node-webcam or FRAME_SOURCE)',
      params: TokenParams,
      body: CameraBody,
      response: IdentifyAnswer,
      handler: async ({ params, body }) => {
        if (!deps.camera) throw new DoorError(503, 'no_camera', 'No FRAME_SOURCE is configured');
        const { frames: count, nonce } = body ?? { frames: 1 };
        const frames: string[] = [];
        for (let i = 0; i < count; i++) frames.push(await deps.camera.frame());
        return deps.door.identify(params.token, { frames, nonce });
      },
    }),
    defineRoute({
      method: 'post',
      path: '/step-up/{attemptId}',
      decides: true,
      summary: 'Complete a step-up with a second factor, once',
      description:
        `Within ${STEP_UP_TTL_MS / 1000} s of identify. \`{ factor: 'qr', code }\`: the candidate's own ` +
        "invitation QR code admits (under the event's rules, queued like an accepted face with " +
        "`stepUpFactor: qr`); any other code is a denial `step_up_failed`, queued. `{ factor: 'staff', pin }` " +
        '(or `x-staff-session` without `pin`; this machine only): staff confirm the person, queued with ' +
        '`stepUpFactor: staff`; `confirmed: false` is a denial `step_up_failed`. A wrong PIN is 401 ' +
        '`wrong_pin` and leaves the step-up open (the staff lock-out counts it). 404 `unknown_attempt`, ' +
        '409 `step_up_used`, 410 `step_up_expired`, 400 `factor_not_allowed`.',
      params: StepUpParams,
      body: StepUpBody,
      response: DoorAnswer,
      handler: ({ params, body, staffToken, local }) =>
        deps.door.completeStepUp(params.attemptId, body, () => {
          if (!local) throw new DoorError(403, 'local_only', 'Staff confirm only on this machine');
          const pin = body.factor === 'staff' ? body.pin : undefined;
          if (pin !== undefined) deps.staff.verify(pin);
          else deps.staff.check(staffToken);
        }),
    }),
    defineRoute({
      method: 'get',
      path: '/step-up/{attemptId}',
      summary: "A step-up's candidate, for staff to check a document (staff)",
      description:
        'The full name of the guest the face is closest to, so that staff can compare it with a document ' +
        'before confirming. 404 `unknown_attempt`, 409 `step_up_used`, 410 `step_up_expired`.',
      staff: 'session',
      params: StepUpParams,
      response: StepUpCandidate,
      handler: async ({ params }) => deps.door.stepUpCandidate(params.attemptId),
    }),
    defineRoute({
      method: 'post',
      path: '/events/{token}/qr',
      decides: true,
      summary: 'Check in by the QR code of an invitation',
      params: TokenParams,
      body: QrBody,
      response: DoorAnswer,
      handler: ({ params, body }) => deps.door.qr(params.token, body.code),
    }),
    defineRoute({
      method: 'post',
      path: '/face-box',
      summary: "Where the face is in a small frame (the kiosk's live face guide)",
      description:
        "The agent's own detector (the face engine's probe) on a downscaled frame: the kiosk turns the box " +
        'into "come closer", "step back" or "move left/right/up/down". Nothing is kept or queued.',
      body: FaceBoxBody,
      response: FaceBox,
      handler: ({ body }) => deps.guide.box(body.frame),
    }),
    defineRoute({
      method: 'post',
      path: '/staff/session',
      summary: 'Open a staff session with the staff PIN',
      description:
        'The PIN is set on the device (`STAFF_PIN_HASH`, scrypt). 401 `wrong_pin`; after `STAFF_PIN_ATTEMPTS` ' +
        'wrong PINs in a row 429 `staff_locked` (with `Retry-After`) for `STAFF_LOCKOUT_S`, doubled at each ' +
        'further lock-out until a right PIN; 503 `staff_pin_not_set`. The session ends after ' +
        '`STAFF_SESSION_S` unused.',
      staff: 'open',
      body: PinBody,
      response: StaffSession,
      handler: async ({ body }) => deps.staff.open(body.pin),
    }),
    defineRoute({
      method: 'delete',
      path: '/staff/session',
      summary: 'End the staff session (x-staff-session)',
      staff: 'session',
      response: z.object({ ended: z.boolean() }),
      handler: async ({ staffToken }) => {
        deps.staff.close(staffToken);
        return { ended: true };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/events/{token}/guests',
      summary: "Search the event's guest list on the device (staff)",
      description:
        'Guests of the replica (confirmed or checked in) whose name has a word starting with each word of ' +
        '`q`, accents and case ignored ("joao" finds "João"), by name. Names only: the device holds no e-mail.',
      staff: 'session',
      params: TokenParams,
      query: GuestQuery,
      response: StaffGuests,
      handler: async ({ params, query }) => {
        const replica = deps.replica.get(params.token);
        if (!replica) throw new DoorError(404, 'unknown_event', 'This device does not serve that event');
        return { items: deps.staff.search(replica, query.q, query.limit) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/events/{token}/manual',
      decides: true,
      summary: 'Check a guest in by hand (staff)',
      description:
        'Decided on the device under the event rules for the `manual` method, queued and uploaded with ' +
        '`/v1/sync/batch` like the other check-ins (so it works offline). 404 `unknown_guest`.',
      staff: 'session',
      params: TokenParams,
      body: ManualBody,
      response: DoorAnswer,
      handler: ({ params, body }) => deps.door.manual(params.token, body.guestId),
    }),
  ];

  const registry = new OpenAPIRegistry();
  for (const r of routes) registry.registerPath(toOpenApi(r));
  registry.registerPath({
    method: 'get',
    path: '/status/stream',
    summary: 'The status as server-sent events (`data: <AgentStatus JSON>`), on every change',
    responses: {
      200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: AgentStatus } } },
    },
  });
  const openapi = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Portico device agent (local API)',
      version: '1.0.0',
      description:
        'Served on localhost for the kiosk UI. Every decision is made on the device and queued for the cloud.',
    },
  });

  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, {
      'content-type': status >= 400 ? 'application/problem+json' : 'application/json',
      'cache-control': 'no-store',
      ...SECURITY_HEADERS,
    });
    res.end(JSON.stringify(body));
  };
  const problem = (res: http.ServerResponse, p: ProblemInput) =>
    send(res, p.status, problemOf(p, res.getHeader('x-request-id') as string));

  async function readBody(req: http.IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > BODY_LIMIT) throw new DoorError(413, 'payload_too_large', 'The body is over 40 MB');
      chunks.push(chunk as Buffer);
    }
    if (size === 0) return undefined;
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      throw new DoorError(400, 'malformed_json', 'The body is not JSON');
    }
  }

  function stream(res: http.ServerResponse) {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      ...SECURITY_HEADERS,
    });
    const push = () => void deps.status().then((s) => res.write(`data: ${JSON.stringify(s)}\n\n`));
    push();
    const unsubscribe = deps.onChange(push);
    res.on('close', unsubscribe);
  }

  // Built at the first request: the port is known once listening (0 in tests).
  let guard: RequestGuard | undefined;
  const server = http.createServer((req, res) => {
    const requestId = newRequestId();
    res.setHeader('x-request-id', requestId);
    void (async () => {
      guard ??= requestGuard({ port: (server.address() as AddressInfo).port, ...deps.access });
      const refusal = refuse(req, guard);
      if (refusal) {
        req.resume();
        return problem(res, refusal);
      }
      const url = new URL(req.url ?? '/', 'http://localhost');
      const method = (req.method ?? 'GET').toLowerCase();
      if (method === 'get' && url.pathname === '/docs-json') return send(res, 200, openapi);
      if (method === 'get' && url.pathname === '/status/stream') return stream(res);
      for (const route of routes) {
        const params = match(route.path, url.pathname);
        if (!params || route.method !== method) continue;
        const local = LOOPBACK.has(req.socket.remoteAddress ?? '');
        if (route.staff && !local) {
          return problem(res, {
            status: 403,
            code: 'local_only',
            detail: 'Staff routes answer only on this machine',
          });
        }
        const staffToken = req.headers[STAFF_HEADER] as string | undefined;
        if (route.staff === 'session') deps.staff.check(staffToken);
        const refusedBy = route.decides ? deps.unauthorized() : null;
        if (refusedBy) {
          req.resume();
          return problem(res, {
            status: 403,
            code: 'device_not_authorised',
            detail: `This device is not authorised: ${refusedBy}`,
          });
        }
        const parsedParams = route.params
          ? route.params.safeParse(params)
          : { success: true as const, data: undefined };
        const query = route.query
          ? route.query.safeParse(Object.fromEntries(url.searchParams))
          : { success: true as const, data: undefined };
        const raw = await readBody(req);
        const body = route.body ? route.body.safeParse(raw) : { success: true as const, data: undefined };
        if (!parsedParams.success || !query.success || !body.success) {
          const errors = [
            ...fieldErrors(parsedParams, 'params'),
            ...fieldErrors(query, 'query'),
            ...fieldErrors(body, 'body'),
          ];
          return problem(res, invalidFields(errors));
        }
        const answer = await route.handler({
          params: parsedParams.data,
          query: query.data,
          body: body.data,
          staffToken,
          local,
        });
        return send(res, route.status ?? 200, answer);
      }
      return problem(res, { status: 404, code: 'not_found', detail: 'No such route' });
    })().catch((error: unknown) => {
      if (error instanceof DoorError) {
        if (error.retryAfterS !== undefined) res.setHeader('retry-after', String(error.retryAfterS));
        return problem(res, {
          status: error.status,
          code: error.code,
          detail: error.message,
          ...(error.details && { extra: error.details }),
        });
      }
      deps.log.error({ err: error, method: req.method, requestId }, 'request failed');
      if (!res.headersSent) {
        problem(res, { status: 500, code: 'internal_error', detail: `See the agent log (${requestId})` });
      }
    });
  });
  return server;
}

/** A failed parse's issues as the cloud lists them (`body.frames: …`); none for a parse that passed. */
function fieldErrors(
  result: { success: true } | { success: false; error: z.ZodError },
  where: string,
): { path: string; message: string }[] {
  if (result.success) return [];
  return result.error.issues.map((i) => ({
    path: [where, ...i.path.map(String)].join('.'),
    message: i.message,
  }));
}
