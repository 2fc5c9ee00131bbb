// The local API the kiosk UI calls, on localhost only: status (and a live stream of it), liveness
// challenge, identify, QR. Each route is declared once with its zod schemas, which validate the
// request and document it at /docs-json.
import http from 'node:http';
import { OpenApiGeneratorV31, OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '@portico/contract';
import { DoorError, type Door } from './door.js';
import type { FrameSource } from './camera.js';

const Outcome = z.enum(['success', 'denied', 'liveness_failed', 'geofence_alert']);
const DoorAnswer = z
  .object({
    checkInId: z.string().openapi({ description: 'UUIDv7: the id the check-in keeps in the cloud.' }),
    outcome: Outcome,
    reason: z.enum(['not_recognised', 'capacity_reached', 'event_closed', 'method_not_allowed']).nullable(),
    guest: z.object({ displayName: z.string() }).nullable(),
    score: z.number().nullable(),
    threshold: z.number().nullable(),
    livenessScore: z.number().nullable(),
    recordedAt: z.string(),
  })
  .openapi('DoorAnswer', { description: 'Decided on the device and queued before this answer.' });
export const AgentStatus = z
  .object({
    online: z.boolean().openapi({ description: 'The last exchange with the cloud succeeded.' }),
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
const Problem = z
  .object({ status: z.number().int(), code: z.string(), detail: z.string() })
  .openapi('AgentProblem');
const TokenParams = z.object({ token: z.string().min(1).max(128) });
const IdentifyBody = z
  .strictObject({
    frames: z.array(z.string().min(1)).min(1).max(8).openapi({
      description:
        'Base64 JPEG or PNG frames: one without liveness, a short sequence showing the challenge with it.',
    }),
    nonce: z.string().max(64).optional(),
  })
  .openapi('IdentifyBody');
const CameraBody = z
  .strictObject({
    frames: z.number().int().min(1).max(8).default(1).openapi({ description: 'Frames to take in a row.' }),
    nonce: z.string().max(64).optional(),
  })
  .optional()
  .openapi('CameraBody');
const QrBody = z.strictObject({ code: z.string().min(1).max(2048) }).openapi('QrBody');
const Challenge = z
  .object({ nonce: z.string(), action: z.enum(['blink', 'turn_head']), expiresAt: z.string() })
  .openapi('AgentChallenge');

type Handler = (input: { params: Record<string, string>; body: unknown }) => Promise<unknown>;
interface Route {
  method: 'get' | 'post';
  path: string;
  summary: string;
  params?: z.ZodType;
  body?: z.ZodType;
  response: z.ZodType;
  handler: Handler;
}

const BODY_LIMIT = 40 * 1024 * 1024;

export function createApi(deps: {
  door: Door;
  status: () => Promise<z.infer<typeof AgentStatus>>;
  camera: FrameSource | null;
  /** Subscribes to status changes; returns the unsubscribe. */
  onChange: (listener: () => void) => () => void;
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
      path: '/events/{token}/identify',
      summary: 'Check in by face, decided on the device',
      params: TokenParams,
      body: IdentifyBody,
      response: DoorAnswer,
      handler: ({ params, body }) => deps.door.identify(params.token!, body as z.infer<typeof IdentifyBody>),
    },
    {
      method: 'post',
      path: '/events/{token}/identify-camera',
      summary: 'Check in by face with frames from the agent camera (node-webcam or FRAME_SOURCE)',
      params: TokenParams,
      body: CameraBody,
      response: DoorAnswer,
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
      path: '/events/{token}/qr',
      summary: 'Check in by the QR code of an invitation',
      params: TokenParams,
      body: QrBody,
      response: DoorAnswer,
      handler: ({ params, body }) => deps.door.qr(params.token!, (body as z.infer<typeof QrBody>).code),
    },
  ];

  const registry = new OpenAPIRegistry();
  for (const r of routes) {
    registry.registerPath({
      method: r.method,
      path: r.path,
      summary: r.summary,
      request: {
        ...(r.params && { params: r.params as never }),
        ...(r.body && { body: { content: { 'application/json': { schema: r.body } } } }),
      },
      responses: {
        200: { description: 'OK', content: { 'application/json': { schema: r.response } } },
        400: {
          description: '`validation_failed`, `invalid_nonce`, `malformed_json`',
          content: { 'application/json': { schema: Problem } },
        },
        404: {
          description: '`unknown_event`, `not_found`',
          content: { 'application/json': { schema: Problem } },
        },
        409: {
          description: '`replica_too_old`: face admission stopped',
          content: { 'application/json': { schema: Problem } },
        },
        422: {
          description: 'the face engine refused the frame (`no_face_detected`, …)',
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
    });
    res.end(JSON.stringify(body));
  };
  const problem = (res: http.ServerResponse, status: number, code: string, detail: string) =>
    send(res, status, { status, code, detail });

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
    });
    const push = () => void deps.status().then((s) => res.write(`data: ${JSON.stringify(s)}\n\n`));
    push();
    const unsubscribe = deps.onChange(push);
    res.on('close', unsubscribe);
  }

  return http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const method = (req.method ?? 'GET').toLowerCase();
      if (method === 'get' && url.pathname === '/docs-json') return send(res, 200, openapi);
      if (method === 'get' && url.pathname === '/status/stream') return stream(res);
      for (const route of routes) {
        const params = match(route.path, url.pathname);
        if (!params || route.method !== method) continue;
        const parsedParams = route.params ? route.params.safeParse(params) : { success: true as const };
        const raw = await readBody(req);
        const body = route.body ? route.body.safeParse(raw) : { success: true as const, data: undefined };
        if (!parsedParams.success || !body.success) {
          const issues = [
            ...(parsedParams.success ? [] : parsedParams.error.issues),
            ...(body.success ? [] : body.error.issues),
          ];
          return problem(
            res,
            400,
            'validation_failed',
            issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
          );
        }
        return send(res, 200, await route.handler({ params, body: body.data }));
      }
      return problem(res, 404, 'not_found', 'No such route');
    })().catch((error: unknown) => {
      if (error instanceof DoorError) return problem(res, error.status, error.code, error.message);
      console.error(error);
      if (!res.headersSent) problem(res, 500, 'internal_error', 'See the agent log');
    });
  });
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
