// Operator CLI: `pnpm portico tenant create …`, `pnpm portico tenant rotate-webhook-secret …` and
// `pnpm portico user reset-mfa|reset-password …` (USAGE below). Uses the same DATABASE_URL / DATA_DIR as
// the server.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, loadDotEnv } from '../config.js';
import { createCipher } from '../infra/crypto.js';
import { systemClock } from '../infra/clock.js';
import { DataDirLockedError, openDatabase } from '../infra/db/index.js';
import { loadSecrets } from '../infra/secrets.js';
import { OperatorError, resetMfa, resetPassword } from '../modules/auth/operator.js';
import { ProvisionError, provisionTenant } from '../modules/tenants/provision.js';
import {
  DEFAULT_OVERLAP,
  parseOverlap,
  RotationError,
  rotateWebhookSecret,
} from '../modules/webhooks/secret-rotation.js';

const USAGE = `Usage:
  pnpm portico tenant create --slug <slug> --name <name> --admin-email <email> [--admin-password <pw>] [--json]
  pnpm portico tenant rotate-webhook-secret --slug <slug> [--overlap ${DEFAULT_OVERLAP}] [--json]
  pnpm portico user reset-mfa --email <email> [--json]
  pnpm portico user reset-password --email <email> [--json]

create: makes a tenant with default settings and its admin user, and prints once the admin credentials
and the tenant's webhook signing secret. Without --admin-password a strong password is generated.

rotate-webhook-secret: gives the tenant a new webhook signing secret, printed once. During the overlap
(default ${DEFAULT_OVERLAP}; 90m, 7d, 0 for none, at most 30d) every webhook carries both signatures in
X-Service-Signature, new first: "<new>,<previous>".

user reset-mfa: turns two-step verification off for a user who lost their authenticator and their
recovery codes (secret and codes deleted); they sign in with the password and set it up again. Audited as
the operator's, and the user is mailed.

user reset-password: ends every session of the user, lifts a lockout and prints once a one-time link to
the console's reset page, valid 24 hours, for you to hand over; the user chooses the new password there
(you never learn it). Audited as the operator's; the user is mailed that sessions were ended (not the link).
Mails are queued in the database and sent by the running service.`;

async function main(argv: string[]): Promise<number> {
  const [group, command, ...rest] = argv;
  if (group === 'tenant' && command === 'rotate-webhook-secret') return rotateSecret(rest);
  if (group === 'user' && (command === 'reset-mfa' || command === 'reset-password')) {
    return resetUser(command, rest);
  }
  if (group !== 'tenant' || command !== 'create') {
    process.stderr.write(`${USAGE}\n`);
    return group === undefined || group === '--help' || group === 'help' ? 0 : 2;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      slug: { type: 'string' },
      name: { type: 'string' },
      'admin-email': { type: 'string' },
      'admin-password': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  loadDotEnv();
  const config = loadConfig();
  const secrets = await loadSecrets(config);
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const t = await provisionTenant(
      { db, cipher: createCipher(secrets.dataKey) },
      {
        slug: values.slug ?? '',
        name: values.name ?? '',
        adminEmail: values['admin-email'] ?? '',
        adminPassword: values['admin-password'],
      },
    );
    process.stdout.write(
      values.json
        ? `${JSON.stringify(t)}\n`
        : [
            `Tenant ${t.slug} created (id ${t.tenantId}). Shown once, store it now:`,
            `  admin e-mail    ${t.adminEmail}`,
            `  admin password  ${t.adminPassword}`,
            `  webhook secret  ${t.webhookSecret}`,
            '',
          ].join('\n'),
    );
    return 0;
  } finally {
    await db.close();
  }
}

async function rotateSecret(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      slug: { type: 'string' },
      overlap: { type: 'string', default: DEFAULT_OVERLAP },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!values.slug) throw new RotationError('--slug is required');
  const overlapMs = parseOverlap(values.overlap);
  loadDotEnv();
  const config = loadConfig();
  const secrets = await loadSecrets(config);
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const r = await rotateWebhookSecret(
      { db, cipher: createCipher(secrets.dataKey), clock: systemClock },
      { slug: values.slug, overlapMs },
    );
    process.stdout.write(
      values.json
        ? `${JSON.stringify(r)}\n`
        : [
            `Webhook secret of ${r.slug} rotated. Shown once, store it now:`,
            `  webhook secret  ${r.webhookSecret}`,
            r.previousSecretValidUntil
              ? `  the previous secret also signs until ${r.previousSecretValidUntil}`
              : '  the previous secret no longer signs',
            '',
          ].join('\n'),
    );
    return 0;
  } finally {
    await db.close();
  }
}

async function resetUser(command: 'reset-mfa' | 'reset-password', args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { email: { type: 'string' }, json: { type: 'boolean', default: false } },
    strict: true,
  });
  if (!values.email) throw new OperatorError('--email is required');
  loadDotEnv();
  const config = loadConfig();
  const secrets = await loadSecrets(config);
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const deps = { db, cipher: createCipher(secrets.dataKey), clock: systemClock };
  try {
    if (command === 'reset-mfa') {
      const r = await resetMfa(deps, values.email);
      process.stdout.write(
        values.json
          ? `${JSON.stringify(r)}\n`
          : r.mfaWasEnabled
            ? `Two-step verification of ${r.email} is off; they sign in with the password and set it up again.\n`
            : `${r.email} had no two-step verification on; nothing else changed.\n`,
      );
      return 0;
    }
    const r = await resetPassword({ ...deps, publicUrl: config.publicUrl }, values.email);
    process.stdout.write(
      values.json
        ? `${JSON.stringify(r)}\n`
        : [
            `${r.endedSessions} session(s) of ${r.email} ended. Shown once, hand it over safely:`,
            `  reset link  ${r.resetLink}`,
            `  valid until ${r.expiresAt}, once`,
            '',
          ].join('\n'),
    );
    return 0;
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const known =
      err instanceof ProvisionError ||
      err instanceof RotationError ||
      err instanceof OperatorError ||
      err instanceof ConfigError ||
      err instanceof DataDirLockedError ||
      (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION';
    process.stderr.write(
      `portico: ${known ? (err as Error).message : String((err as Error).stack ?? err)}\n`,
    );
    process.exit(known ? 2 : 1);
  },
);
