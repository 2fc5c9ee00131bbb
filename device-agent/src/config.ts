// The agent's settings, all from the environment (one place, read once at start).
import path from 'node:path';
import { z } from '@portico/contract';
import { LOG_LEVELS } from './log.js';
import { isPinHash } from './pin.js';
import { listSetting } from './request-guard.js';

const Env = z.object({
  /**
   * The cloud and this device's credentials. Unset (all three): those `pnpm agent pair` stored, sealed,
   * in the data folder (device-state.ts). Set: they win over a pairing.
   */
  PORTICO_CLOUD_URL: z.url().optional(),
  INTERNAL_SECRET: z.string().min(24).optional(),
  DEVICE_TOKEN: z.string().startsWith('pdt_').optional(),
  /** Fixed public tokens of the events served; unset: the events the console assigns to the device. */
  EVENT_TOKENS: z
    .string()
    .min(1)
    .transform((s) =>
      s
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    )
    .optional(),
  AGENT_DATA_DIR: z.string().default('.agent-data'),
  AGENT_HOST: z.string().default('127.0.0.1'),
  AGENT_PORT: z.coerce.number().int().min(0).max(65535).default(7171),
  /**
   * Host names the local API answers for besides 127.0.0.1, localhost, [::1] and AGENT_HOST (comma
   * separated, `name` or `name:port`); any other Host header is refused (DNS rebinding).
   */
  AGENT_ALLOWED_HOSTS: z.string().default(''),
  /** Origins of web pages allowed to call the local API directly (comma separated); others are refused. */
  AGENT_ALLOWED_ORIGINS: z.string().default(''),
  /**
   * 32 bytes, base64: seals the templates, the guests' names, the queue and the credentials at rest.
   * Unset: the key in AGENT_DATA_DIR/data.key, made on the first start and reused (data-dir.ts).
   */
  AGENT_DATA_KEY: z
    .string()
    .refine((s) => Buffer.from(s, 'base64').length === 32, 'must be 32 bytes in base64')
    .optional(),
  /** After this long without a successful replica refresh, admission by face stops. */
  MAX_REPLICA_AGE_S: z.coerce
    .number()
    .int()
    .min(1)
    .default(6 * 3600),
  SYNC_INTERVAL_MS: z.coerce.number().int().min(50).default(3000),
  /** Longest wait between attempts while the cloud is unreachable. */
  MAX_BACKOFF_MS: z.coerce.number().int().min(50).default(60_000),
  /** `off`: no face engine (QR only; tests of the queue). */
  AGENT_FACE: z.enum(['on', 'off']).default('on'),
  /**
   * One (the default): the face engine runs in a thread of the agent (about 80 MB less resident
   * memory); more: in as many worker processes (see face-engine's pool.ts).
   */
  AGENT_FACE_WORKERS: z.coerce.number().int().min(1).default(1),
  /** A still image or a folder of them, served as the camera (tests, demos, units without a camera). */
  FRAME_SOURCE: z.string().optional(),
  /** `auto`: node-webcam when fswebcam is on the PATH, else FRAME_SOURCE; `webcam` or `file` force one. */
  AGENT_CAMERA: z.enum(['auto', 'webcam', 'file']).default('auto'),
  /** The video device fswebcam opens (its default: /dev/video0). */
  AGENT_WEBCAM_DEVICE: z.string().optional(),
  /** The staff PIN's scrypt hash (`pnpm --filter @portico/device-agent hash-pin`); unset: no staff fallback. */
  STAFF_PIN_HASH: z.string().refine(isPinHash, 'must be the output of hash-pin').optional(),
  /** Wrong PINs in a row before a lock-out. */
  STAFF_PIN_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(5),
  /** The first lock-out; each next one (without a right PIN between) lasts twice as long. */
  STAFF_LOCKOUT_S: z.coerce.number().int().min(1).default(300),
  /** A staff session ends after this long unused (the kiosk then returns to attract). */
  STAFF_SESSION_S: z.coerce.number().int().min(1).max(3600).default(120),
  /** The least severe level written to the log (standard error, JSON lines); `silent`: none. */
  AGENT_LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
});

export type AgentConfig = ReturnType<typeof loadAgentConfig>;

export function loadAgentConfig(env: Record<string, string | undefined> = process.env) {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`device-agent configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const link = [e.PORTICO_CLOUD_URL, e.INTERNAL_SECRET, e.DEVICE_TOKEN];
  if (link.some((v) => v === undefined) && link.some((v) => v !== undefined)) {
    throw new Error(
      'device-agent configuration:\n  PORTICO_CLOUD_URL, INTERNAL_SECRET and DEVICE_TOKEN go together: ' +
        'set all three, or none to use the credentials `pnpm agent pair` stored',
    );
  }
  return {
    /** From the environment, or null: the paired credentials (device-state.ts). */
    link:
      e.PORTICO_CLOUD_URL && e.INTERNAL_SECRET && e.DEVICE_TOKEN
        ? {
            cloudUrl: e.PORTICO_CLOUD_URL.replace(/\/$/, ''),
            internalSecret: e.INTERNAL_SECRET,
            deviceToken: e.DEVICE_TOKEN,
          }
        : null,
    /** Fixed events, or null: those the cloud assigns to the device (`GET /v1/sync/device`). */
    eventTokens: e.EVENT_TOKENS ?? null,
    dataDir: path.resolve(e.AGENT_DATA_DIR),
    host: e.AGENT_HOST,
    port: e.AGENT_PORT,
    allowedHosts: listSetting(e.AGENT_ALLOWED_HOSTS),
    allowedOrigins: listSetting(e.AGENT_ALLOWED_ORIGINS),
    dataKey: e.AGENT_DATA_KEY === undefined ? undefined : (Buffer.from(e.AGENT_DATA_KEY, 'base64') as Buffer),
    maxReplicaAgeMs: e.MAX_REPLICA_AGE_S * 1000,
    syncIntervalMs: e.SYNC_INTERVAL_MS,
    maxBackoffMs: e.MAX_BACKOFF_MS,
    face: e.AGENT_FACE === 'on',
    faceWorkers: e.AGENT_FACE_WORKERS,
    frameSource: e.FRAME_SOURCE,
    camera: e.AGENT_CAMERA,
    webcamDevice: e.AGENT_WEBCAM_DEVICE,
    staff: {
      pinHash: e.STAFF_PIN_HASH,
      maxAttempts: e.STAFF_PIN_ATTEMPTS,
      lockoutMs: e.STAFF_LOCKOUT_S * 1000,
      sessionMs: e.STAFF_SESSION_S * 1000,
    },
    logLevel: e.AGENT_LOG_LEVEL,
  };
}
