// The one logger. Redaction is a backstop: code never passes frames, embeddings, secrets or tokens to it.
import { pino, type Logger } from 'pino';

export type { Logger };

const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-internal-secret"]',
  'req.headers["x-device-token"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.token',
  '*.frame',
  '*.embedding',
  '*.secret',
  '*.apiKey',
  '*.accessToken',
  '*.refreshToken',
];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    { level, redact: { paths: REDACT, censor: '[redacted]' }, base: { service: 'portico-cloud' } },
    destination ?? process.stdout,
  );
}
