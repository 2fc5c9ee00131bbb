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
  AgentProblem as Problem,
  AgentStatus,
  DoorAnswer,
  AgentIdentifyAnswer as IdentifyAnswer,
  StaffGuests,
  StaffSession,
  StepUpCandidate,
  z,
} from '@portico/contract';
import { DoorError, STEP_UP_TTL_MS, type Door, type StepUpProof } from './door.js';
import type { FrameSource } from './camera.js';
import { GUIDE_FRAME_MAX_CHARS, type Guide } from './guide.js';
import type { Logger } from './log.js';
import { CHALLENGE_MAX_FRAMES } from './liveness.js';
import type { Replica } from './replica.js';
import { PIN_PATTERN } from './pin.js';
import { refuse, requestGuard, type RequestGuard } from './request-guard.js';
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
  })
  .refine((b) => b.frames !== undefined || b.nonce !== undefined, {
    message: 'send frames, or the nonce of a challenge whose frames were streamed',
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

type Handler = (input: {
  params: Record<string, string>;
  query: unknown;
  body: unknown;
  staffToken: string | undefined;
  /** The caller is on this machine. */
  local: boolean;
}) => Promise<unknown>;
interface Route {
  method: 'get' | 'post' | 'delete';
  path: string;
  summary: string;
  description?: string;
  /** Staff routes: callers on this machine only, and (but for opening one) a staff session. */
  staff?: 'open' | 'session';
  /** The success status: 200 unless said. */
  status?: 202;
  /** Admits or refuses someone: refused while the cloud refuses this device (403 `device_not_authorised`). */
  decides?: true;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  response: z.ZodType;
  handler: Handler;
}

const STAFF_HEADER = 'x-staff-session';
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
    {
      method: 'get',
      path: '/status',
      summary: 'Online state, queue, last sync, replica sizes',
      response: AgentStatus,
      handler: () => deps.status(),
    },
    {
      method: 'get',
      path: '/challenge',
      summary: 'A fresh liveness challenge (nonce + action, 60 s, single use)',
      response: Challenge,
      handler: async () => {
        const c = deps.door.challenge();
        return { nonce: c.nonce, action: c.action, expiresAt: new Date(c.expiresAt).toISOString() };
      },
    },
    {
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
      handler: async ({ params, body }) =>
        deps.door.streamFrame(params.nonce!, (body as z.infer<typeof ChallengeFrameBody>).frame),
    },
    {
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
        '422 `face_retake` with `details.reasons` and nothing queued; a face between the refuse and the ' +
        'accept line answers `step_up_required` (complete it with `POST /step-up/{attemptId}`); otherwise ' +
        'the decision, queued.',
      params: TokenParams,
      body: IdentifyBody,
      response: IdentifyAnswer,
      handler: ({ params, body }) => deps.door.identify(params.token!, body as z.infer<typeof IdentifyBody>),
    },
    {
      method: 'post',
      path: '/events/{token}/identify-camera',
      decides: true,
      summary: 'Check in by face with frames from the agent camera (node-webcam or FRAME_SOURCE)',
      params: TokenParams,
      body: CameraBody,
      response: IdentifyAnswer,
      handler: async ({ params, body }) => {
        if (!deps.camera) throw new DoorError(503, 'no_camera', 'No FRAME_SOURCE is configured');
        const { frames: count, nonce } = (body as z.infer<typeof CameraBody> | undefined) ?? { frames: 1 };
        const frames: string[] = [];
        for (let i = 0; i < count; i++) frames.push(await deps.camera.frame());
        return deps.door.identify(params.token!, { frames, nonce });
      },
    },
    {
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
        deps.door.completeStepUp(params.attemptId!, body as StepUpProof, () => {
          if (!local) throw new DoorError(403, 'local_only', 'Staff confirm only on this machine');
          const { pin } = body as { pin?: string };
          if (pin !== undefined) deps.staff.verify(pin);
          else deps.staff.check(staffToken);
        }),
    },
    {
      method: 'get',
      path: '/step-up/{attemptId}',
      summary: "A step-up's candidate, for staff to check a document (staff)",
      description:
        'The full name of the guest the face is closest to, so that staff can compare it with a document ' +
        'before confirming. 404 `unknown_attempt`, 409 `step_up_used`, 410 `step_up_expired`.',
      staff: 'session',
      params: StepUpParams,
      response: StepUpCandidate,
      handler: async ({ params }) => deps.door.stepUpCandidate(params.attemptId!),
    },
    {
      method: 'post',
      path: '/events/{token}/qr',
      decides: true,
      summary: 'Check in by the QR code of an invitation',
      params: TokenParams,
      body: QrBody,
      response: DoorAnswer,
      handler: ({ params, body }) => deps.door.qr(params.token!, (body as z.infer<typeof QrBody>).code),
    },
    {
      method: 'post',
      path: '/face-box',
      summary: "Where the face is in a small frame (the kiosk's live face guide)",
      description:
        "The agent's own detector (the face engine's probe) on a downscaled frame: the kiosk turns the box " +
        'into "come closer", "step back" or "move left/right/up/down". Nothing is kept or queued.',
      body: FaceBoxBody,
      response: FaceBox,
      handler: ({ body }) => deps.guide.box((body as z.infer<typeof FaceBoxBody>).frame),
    },
    {
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
      handler: async ({ body }) => deps.staff.open((body as z.infer<typeof PinBody>).pin),
    },
    {
      method: 'delete',
      path: '/staff/session',
      summary: 'End the staff session (x-staff-session)',
      staff: 'session',
      response: z.object({ ended: z.boolean() }),
      handler: async ({ staffToken }) => {
        deps.staff.close(staffToken);
        return { ended: true };
      },
    },
    {
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
        const replica = deps.replica.get(params.token!);
        if (!replica) throw new DoorError(404, 'unknown_event', 'This device does not serve that event');
        const { q, limit } = query as z.infer<typeof GuestQuery>;
        return { items: deps.staff.search(replica, q, limit) };
      },
    },
    {
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
      handler: ({ params, body }) =>
        deps.door.manual(params.token!, (body as z.infer<typeof ManualBody>).guestId),
    },
  ];

  const registry = new OpenAPIRegistry();
  for (const r of routes) {
    registry.registerPath({
      method: r.method,
      path: r.path,
      summary: r.summary,
      ...(r.description && { description: r.description }),
      request: {
        ...(r.params && { params: r.params as never }),
        ...(r.query && { query: r.query as never }),
        ...(r.staff === 'session' && {
          headers: z.object({
            [STAFF_HEADER]: z.string().openapi({ description: 'The staff session token.' }),
          }),
        }),
        ...(r.body && { body: { content: { 'application/json': { schema: r.body } } } }),
      },
      responses: {
        [r.status ?? 200]: {
          description: r.status === 202 ? 'Accepted' : 'OK',
          content: { 'application/json': { schema: r.response } },
        },
        400: {
          description:
            '`validation_failed`, `invalid_nonce`, `no_frames`, `ambiguous_frames`, `malformed_json`',
          content: { 'application/json': { schema: Problem } },
        },
        404: {
          description: '`unknown_event`, `unknown_guest`, `unknown_attempt`, `not_found`',
          content: { 'application/json': { schema: Problem } },
        },
        403: {
          description:
            '`origin_not_allowed`: sent from a web page of another origin' +
            (r.decides
              ? '; `device_not_authorised`: the cloud refuses this device (revoked, or a wrong secret: `/status` `unauthorized` says which)'
              : ''),
          content: { 'application/json': { schema: Problem } },
        },
        415: {
          description: '`unsupported_media_type`: a body not sent as `application/json`',
          content: { 'application/json': { schema: Problem } },
        },
        421: {
          description: '`host_not_allowed`: a Host header not on the allow-list (`AGENT_ALLOWED_HOSTS`)',
          content: { 'application/json': { schema: Problem } },
        },
        ...(r.staff && {
          401: {
            description: '`wrong_pin`, `staff_session_required`',
            content: { 'application/json': { schema: Problem } },
          },
          403: {
            description:
              '`local_only`: the caller is not on this machine; `origin_not_allowed`: sent from a web page of another origin',
            content: { 'application/json': { schema: Problem } },
          },
          429: {
            description: '`staff_locked`: too many wrong PINs (`Retry-After`)',
            content: { 'application/json': { schema: Problem } },
          },
        }),
        409: {
          description: '`replica_too_old`: face admission stopped; `too_many_frames`; `step_up_used`',
          content: { 'application/json': { schema: Problem } },
        },
        ...(r.path.startsWith('/step-up') && {
          410: {
            description: '`step_up_expired`',
            content: { 'application/json': { schema: Problem } },
          },
        }),
        422: {
          description:
            'the face engine refused the frame (`no_face_detected`, …); `face_retake`: too poor to judge ' +
            '(`details.reasons`)',
          content: { 'application/json': { schema: Problem } },
        },
        503: {
          description: '`replica_empty`, `engine_unavailable`, `no_camera`',
          content: { 'application/json': { schema: Problem } },
        },
      },
    });
  }
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
  const problem = (
    res: http.ServerResponse,
    status: number,
    code: string,
    detail: string,
    details?: Record<string, unknown>,
  ) => send(res, status, { status, code, detail, ...(details && { details }) });

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
    void (async () => {
      guard ??= requestGuard({ port: (server.address() as AddressInfo).port, ...deps.access });
      const refusal = refuse(req, guard);
      if (refusal) {
        req.resume();
        return problem(res, refusal.status, refusal.code, refusal.detail);
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
          return problem(res, 403, 'local_only', 'Staff routes answer only on this machine');
        }
        const staffToken = req.headers[STAFF_HEADER] as string | undefined;
        if (route.staff === 'session') deps.staff.check(staffToken);
        const refusedBy = route.decides ? deps.unauthorized() : null;
        if (refusedBy) {
          req.resume();
          return problem(res, 403, 'device_not_authorised', `This device is not authorised: ${refusedBy}`);
        }
        const parsedParams = route.params ? route.params.safeParse(params) : { success: true as const };
        const query = route.query
          ? route.query.safeParse(Object.fromEntries(url.searchParams))
          : { success: true as const, data: undefined };
        const raw = await readBody(req);
        const body = route.body ? route.body.safeParse(raw) : { success: true as const, data: undefined };
        if (!parsedParams.success || !query.success || !body.success) {
          const issues = [
            ...(parsedParams.success ? [] : parsedParams.error.issues),
            ...(query.success ? [] : query.error.issues),
            ...(body.success ? [] : body.error.issues),
          ];
          return problem(
            res,
            400,
            'validation_failed',
            issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
          );
        }
        return send(
          res,
          route.status ?? 200,
          await route.handler({ params, query: query.data, body: body.data, staffToken, local }),
        );
      }
      return problem(res, 404, 'not_found', 'No such route');
    })().catch((error: unknown) => {
      if (error instanceof DoorError) {
        if (error.retryAfterS !== undefined) res.setHeader('retry-after', String(error.retryAfterS));
        return problem(res, error.status, error.code, error.message, error.details);
      }
      deps.log.error({ err: error, method: req.method }, 'request failed');
      if (!res.headersSent) problem(res, 500, 'internal_error', 'See the agent log');
    });
  });
  return server;
}

function match(pattern: string, pathname: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = pathname.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    if (w.startsWith('{')) params[w.slice(1, -1)] = decodeURIComponent(got[i]!);
    else if (w !== got[i]) return null;
  }
  return params;
}
