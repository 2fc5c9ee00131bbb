// The one configuration module: environment variables parsed once, with the embedded defaults.
// Every variable is documented in .env.example at the repository root.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { z } from '@portico/contract';
import { EMBEDDER_IDS, EMBEDDING_MODEL_ID } from '@portico/face-engine';

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  PUBLIC_URL: z.url().optional(),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.url().optional(),
  MQTT_URL: z.url().optional(),
  MQTT_PORT: z.coerce.number().int().min(0).max(65535).default(1883),
  MQTT_HOST: z.string().default('127.0.0.1'),
  MQTT_WS_PORT: z.union([z.literal('off'), z.coerce.number().int().min(0).max(65535)]).optional(),
  MQTT_WS_URL: z.url({ protocol: /^wss?$/ }).optional(),
  MQTT_USERNAME: z.string().min(1).default('portico-service'),
  MQTT_PASSWORD: z.string().min(16).optional(),
  MQTT_WS_ALLOWED_ORIGINS: z.string().optional(),
  SMTP_URL: z.url().optional(),
  MAIL_FROM: z.string().default('Portico <no-reply@portico.local>'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT: z.string().default('12mb'),
  JWT_SECRET: z.string().min(32).optional(),
  DATA_ENCRYPTION_KEY: z
    .string()
    .regex(/^[A-Za-z0-9+/]{43}=$/, 'must be 32 bytes, base64')
    .optional(),
  INTERNAL_SECRET: z.string().min(24).optional(),
  ALLOW_PRIVATE_WEBHOOK_URLS: bool.default(false),
  SEED_DEMO_TENANT: bool.default(true),
  TRUST_PROXY: z.string().default('loopback'),
  FACE_WORKERS: z.coerce.number().int().min(1).max(32).optional(),
  FACE_MODEL: z.enum(EMBEDDER_IDS).default(EMBEDDING_MODEL_ID),
  FACE_MODEL_SWITCH: bool.default(true),
  DELETION_GRACE_HOURS: z.coerce.number().min(0).max(8760).default(168),
});

export type Env = z.input<typeof EnvSchema>;

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  publicUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  mqtt: {
    url: string | undefined;
    port: number;
    host: string;
    /** The embedded broker's MQTT-over-WebSocket port (0: a free one); undefined: no WebSocket listener. */
    wsPort: number | undefined;
    /** The WebSocket URL `GET /v1/admin/bus` advertises instead of the embedded broker's (ws:// or wss://). */
    wsUrl: string | undefined;
    /** Username of the service's own bus connection (its password: `secrets.busPassword`). */
    username: string;
    /** Origins whose pages may open the embedded broker's WebSocket (default: PUBLIC_URL's origin). */
    allowedOrigins: string[];
    /**
     * Whether the service sends its credential to MQTT_URL's broker: only when MQTT_PASSWORD is set, so
     * an external broker without authentication keeps working.
     */
    externalCredential: boolean;
  };
  mail: { smtpUrl: string | undefined; from: string };
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  bodyLimit: string;
  secrets: { jwtSecret?: string; dataEncryptionKey?: string; internalSecret?: string; busPassword?: string };
  allowPrivateWebhookUrls: boolean;
  seedDemoTenant: boolean;
  trustProxy: string;
  /** Face engine worker processes; undefined: one per core, at most 4. */
  faceWorkers: number | undefined;
  /** The embedding model enrollments use; tenants served by another are switched in the background. */
  faceModel: string;
  /** Whether this process moves tenants to `faceModel` in the background (off: it only serves). */
  faceModelSwitch: boolean;
  /** Hours between a confirmed deletion request and the erasure (0: at once); cancellable until then. */
  deletionGraceHours: number;
}

export class ConfigError extends Error {}

/** Loads `.env` from the directory pnpm was run in, if there is one; real environment variables win. */
export function loadDotEnv(env: NodeJS.ProcessEnv = process.env): void {
  const file = path.resolve(env.INIT_CWD ?? process.cwd(), '.env');
  if (existsSync(file)) process.loadEnvFile(file);
}

/**
 * Relative paths resolve against the directory the user ran `pnpm` in (INIT_CWD), not the package
 * folder pnpm switches to, so `DATA_DIR=./data` means the same place for `pnpm start` and `pnpm portico`.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings in a .env file mean "not set", not "set to empty".
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/$/, '');
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    publicUrl,
    dataDir: path.resolve(env.INIT_CWD ?? process.cwd(), e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    mqtt: {
      url: e.MQTT_URL,
      port: e.MQTT_PORT,
      host: e.MQTT_HOST,
      // Unset: 8083, or a free port too when MQTT_PORT asks for one (0), so two such processes never collide.
      wsPort: e.MQTT_WS_PORT === 'off' ? undefined : (e.MQTT_WS_PORT ?? (e.MQTT_PORT === 0 ? 0 : 8083)),
      wsUrl: e.MQTT_WS_URL,
      username: e.MQTT_USERNAME,
      allowedOrigins: originsOf(e.MQTT_WS_ALLOWED_ORIGINS) ?? [new URL(publicUrl).origin],
      externalCredential: e.MQTT_PASSWORD !== undefined,
    },
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM },
    logLevel: e.LOG_LEVEL,
    bodyLimit: e.BODY_LIMIT,
    secrets: {
      jwtSecret: e.JWT_SECRET,
      dataEncryptionKey: e.DATA_ENCRYPTION_KEY,
      internalSecret: e.INTERNAL_SECRET,
      busPassword: e.MQTT_PASSWORD,
    },
    allowPrivateWebhookUrls: e.ALLOW_PRIVATE_WEBHOOK_URLS,
    seedDemoTenant: e.SEED_DEMO_TENANT,
    trustProxy: e.TRUST_PROXY,
    faceWorkers: e.FACE_WORKERS,
    faceModel: e.FACE_MODEL,
    faceModelSwitch: e.FACE_MODEL_SWITCH,
    deletionGraceHours: e.DELETION_GRACE_HOURS,
  };
}

/** A comma-separated list of origins, each normalised (`https://a.example:443` is `https://a.example`). */
function originsOf(list: string | undefined): string[] | undefined {
  if (list === undefined) return undefined;
  return list
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => {
      try {
        return new URL(item).origin;
      } catch {
        throw new ConfigError(`Invalid configuration:\n  MQTT_WS_ALLOWED_ORIGINS: ${item} is not an origin`);
      }
    });
}
