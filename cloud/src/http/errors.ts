// One error type for the whole API, rendered as RFC 9457 problem+json by `errorHandler`.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { ErrorCode, Problem } from '@portico/contract';
import type { Logger } from '../infra/logger.js';

export interface FieldError {
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details: {
      errors?: FieldError[];
      headers?: Record<string, string>;
      extra?: Record<string, unknown>;
    } = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const notFound = (what = 'Resource') => new AppError(404, 'not_found', `${what} not found`);

/** At most this many field errors in one answer: a body of 200,000 bad keys must not echo back megabytes. */
export const MAX_FIELD_ERRORS = 20;

/**
 * 400 `validation_failed` for fields that broke the route's schema or a rule of the service. Lists the
 * first `MAX_FIELD_ERRORS`; `omittedErrors` says how many more there were.
 */
export function invalidFields(errors: FieldError[]): AppError {
  const listed = errors.slice(0, MAX_FIELD_ERRORS);
  const omitted = errors.length - listed.length;
  const detail = listed.map((e) => `${e.path}: ${e.message}`).join('; ');
  return new AppError(400, 'validation_failed', omitted > 0 ? `${detail}; and ${omitted} more` : detail, {
    errors: listed,
    ...(omitted > 0 ? { extra: { omittedErrors: omitted } } : {}),
  });
}

const TITLES: Partial<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  431: 'Request Header Fields Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function problemOf(err: AppError, requestId: string): Problem {
  return {
    type: `https://portico.dev/problems/${err.code}`,
    title: TITLES[err.status] ?? 'Error',
    status: err.status,
    code: err.code,
    detail: err.message,
    ...(err.details.errors ? { errors: err.details.errors } : {}),
    ...err.details.extra,
    requestId,
  };
}

export function sendProblem(res: Parameters<RequestHandler>[1], err: AppError): void {
  for (const [k, v] of Object.entries(err.details.headers ?? {})) res.setHeader(k, v);
  res
    .status(err.status)
    .type('application/problem+json')
    .send(JSON.stringify(problemOf(err, res.locals.requestId)));
}

/** Unknown paths and methods, including the routes the contract says do not exist. */
export const notFoundHandler: RequestHandler = (req, res) => {
  sendProblem(res, new AppError(404, 'not_found', `No route ${req.method} ${req.path}`));
};

/** Maps body-parser failures to caller errors and hides every internal detail of a 5xx. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const appError = toAppError(err);
    if (appError.status >= 500) {
      logger.error({ err, requestId: res.locals.requestId, path: req.path }, 'unhandled error');
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    sendProblem(res, appError);
  };
}

function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { type?: string; status?: number; statusCode?: number };
  switch (e?.type) {
    case 'entity.parse.failed':
      return new AppError(400, 'malformed_json', 'The request body is not valid JSON');
    case 'entity.too.large':
      return new AppError(413, 'payload_too_large', 'The request body is larger than the limit');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError(415, 'unsupported_media_type', 'Unsupported body encoding');
  }
  const sqlState = sqlStateOf(err);
  if (sqlState === '22021' || sqlState === '22P05') {
    // PostgreSQL refused a value as text (a NUL byte in a string, `\u0000` in JSON). The contract's
    // `Text` refuses these at the edge; this is the backstop for a string no schema checked.
    return new AppError(
      400,
      'validation_failed',
      'A value is not text the database can store (e.g. a NUL byte)',
    );
  }
  if (sqlState === '23503') {
    // A row this request refers to went away while it ran (e.g. a sandbox reset meeting a sandbox call):
    // the services check references first, so only a concurrent change gets here.
    return new AppError(409, 'conflict', 'Something this request refers to was removed while it ran; retry');
  }
  const status = e?.status ?? e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new AppError(status, status === 404 ? 'not_found' : 'validation_failed', 'Bad request');
  }
  return new AppError(500, 'internal_error', 'An internal error occurred');
}

/** The SQLSTATE of a database error that came through Prisma's driver adapter, if it is one. */
function sqlStateOf(err: unknown): unknown {
  return (err as { meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } } } | null)?.meta
    ?.driverAdapterError?.cause?.originalCode;
}
