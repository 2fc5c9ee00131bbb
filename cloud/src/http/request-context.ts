// Request id (taken from a well-formed `x-request-id`, else generated) and one access-log line per request.
import { randomBytes } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from '../infra/logger.js';

const INCOMING_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export function requestContext(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('x-request-id');
    const requestId =
      incoming && INCOMING_ID.test(incoming) ? incoming : `req_${randomBytes(9).toString('base64url')}`;
    res.locals.requestId = requestId;
    res.setHeader('x-request-id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const actor = res.locals.actor as { kind: string; tenantId?: string | null } | undefined;
      // Only method, route shape and outcome: never bodies, query strings or headers (they carry secrets).
      logger.info(
        {
          requestId,
          method: req.method,
          path: req.route?.path ?? req.path.replace(/[^/]{24,}/g, ':token'),
          status: res.statusCode,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          actor: actor?.kind,
          tenantId: actor?.tenantId ?? undefined,
        },
        'request',
      );
    });
    next();
  };
}

/** Who sent a request, for audit rows and per-client limits: never bodies or credentials. */
export interface RequestMeta {
  ip: string;
  userAgent: string | null;
  requestId: string | null;
}

export function requestMeta(req: Request, res: Response): RequestMeta {
  return {
    ip: req.ip ?? 'unknown',
    userAgent: req.get('user-agent') ?? null,
    requestId: (res.locals.requestId as string | undefined) ?? null,
  };
}

/**
 * A visit of a link that no person made: HEAD (link checkers), a browser prefetch or a link preview
 * (`Purpose`, `Sec-Purpose`, `X-Purpose` or `X-Moz` saying prefetch, prerender or preview). Routes
 * behind e-mailed or printed links record nothing for it.
 */
export function isLinkPreview(req: Request): boolean {
  if (req.method === 'HEAD') return true;
  const purpose = ['purpose', 'sec-purpose', 'x-purpose', 'x-moz'].map((h) => req.get(h) ?? '').join(' ');
  return /prefetch|prerender|preview/i.test(purpose);
}
