// The agent's one logger: JSON lines on standard error (standard output is the start line's and the
// commands'), `level` as its name, a child per module (`log.child({ module: 'sync' })`). Call sites never
// pass frames, templates, names, PINs, tokens or secrets; the redaction below is only a backstop.
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number] & LevelWithSilent;

const REDACT = [
  'frame',
  'frames',
  'embedding',
  'template',
  'name',
  'pin',
  'secret',
  'internalSecret',
  'deviceToken',
  '*.frame',
  '*.frames',
  '*.embedding',
  '*.template',
  '*.name',
  '*.pin',
  '*.secret',
  '*.internalSecret',
  '*.deviceToken',
];

/**
 * An error as its kind, message, code and stack only: pino's default serializer copies every own
 * property too (an RxDB error's parameters, a cause), which could carry a document.
 */
function errorLine(error: unknown) {
  if (!(error instanceof Error)) return { message: String(error) };
  const code = (error as { code?: unknown }).code;
  return {
    type: error.name,
    message: error.message,
    ...(typeof code === 'string' && { code }),
    stack: error.stack,
  };
}

/**
 * The root logger (main.ts makes it from AGENT_LOG_LEVEL). Written synchronously: the lines are few,
 * and one said just before `process.exit` (a refused start) must not be lost.
 */
export function createAgentLog(
  level: LogLevel = 'info',
  destination: DestinationStream = pino.destination({ dest: 2, sync: true }),
): Logger {
  return pino(
    {
      level,
      base: { service: 'portico-agent' },
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: errorLine },
      redact: { paths: REDACT, censor: '[redacted]' },
    },
    destination,
  );
}
