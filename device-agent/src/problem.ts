// The local API's errors in the cloud's shape (cloud/src/http/errors.ts `problemOf`): RFC 9457
// problem+json with a stable `code`, what the error adds at the top level (a retake's `reasons` and
// `quality`, as the cloud answers `face_retake`), and the request's id, which the agent's log names too.
import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { AgentProblem } from '@portico/contract';

/** Field-level problems in one answer at most, as the cloud (a body of many bad keys echoes little back). */
export const MAX_FIELD_ERRORS = 20;

export interface ProblemInput {
  status: number;
  code: string;
  detail: string;
  /** Fields of the error at the problem's top level (a retake's `reasons` and `quality`). */
  extra?: Record<string, unknown>;
  /** Field-level problems of `validation_failed`. */
  errors?: { path: string; message: string }[];
}

/** 400 `validation_failed` for fields that broke a route's schemas (the first `MAX_FIELD_ERRORS` listed). */
export function invalidFields(errors: { path: string; message: string }[]): ProblemInput {
  const detail = errors
    .slice(0, MAX_FIELD_ERRORS)
    .map((e) => `${e.path}: ${e.message}`)
    .join('; ');
  const omitted = errors.length - MAX_FIELD_ERRORS;
  return {
    status: 400,
    code: 'validation_failed',
    detail: omitted > 0 ? `${detail}; and ${omitted} more` : detail,
    errors,
  };
}

export const newRequestId = () => `req_${randomBytes(9).toString('base64url')}`;

export function problemOf(p: ProblemInput, requestId: string): AgentProblem {
  const listed = p.errors?.slice(0, MAX_FIELD_ERRORS);
  const omitted = (p.errors?.length ?? 0) - (listed?.length ?? 0);
  return {
    type: `https://portico.dev/problems/${p.code}`,
    title: STATUS_CODES[p.status] ?? 'Error',
    status: p.status,
    code: p.code,
    detail: p.detail,
    ...(listed && { errors: listed }),
    ...(omitted > 0 && { omittedErrors: omitted }),
    ...p.extra,
    requestId,
  };
}
