// Requests Node's HTTP parser refuses before Express sees them (headers over the 16 KB limit, a broken
// request line, headers that never finish arriving) get the same problem+json as every other error,
// instead of Node's bare status line. There is no request or response object here: the answer is
// written to the socket by hand, and the connection closed.
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { Logger } from '../infra/logger.js';
import { AppError, problemOf } from './errors.js';

export function answerClientError(logger: Logger) {
  return (err: NodeJS.ErrnoException, socket: Duplex): void => {
    // The client went away (or never finished): nobody to answer.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const error = errorOf(err.code);
    const requestId = `req_${randomBytes(9).toString('base64url')}`;
    logger.info(
      { requestId, code: err.code, status: error.status },
      'refused a request the HTTP parser could not read',
    );
    const problem = problemOf(error, requestId);
    const body = JSON.stringify(problem);
    socket.end(
      `HTTP/1.1 ${error.status} ${problem.title}\r\n` +
        'Content-Type: application/problem+json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  };
}

function errorOf(code: string | undefined): AppError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(431, 'headers_too_large', 'The request line and headers are over the 16 KB limit');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError(408, 'request_timeout', 'The request was not received in time');
    default:
      return new AppError(400, 'malformed_request', 'The request is not valid HTTP/1.1');
  }
}
