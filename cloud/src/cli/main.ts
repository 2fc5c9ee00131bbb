// Operator CLI: `pnpm portico tenant create --slug <slug> --name <name> --admin-email <email>
// [--admin-password <pw>] [--json]`. Uses the same DATABASE_URL / DATA_DIR as the server.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, loadDotEnv } from '../config.js';
import { createCipher } from '../infra/crypto.js';
import { DataDirLockedError, openDatabase } from '../infra/db/index.js';
import { loadSecrets } from '../infra/secrets.js';
import { ProvisionError, provisionTenant } from '../modules/tenants/provision.js';

const USAGE = `Usage:
  pnpm portico tenant create --slug <slug> --name <name> --admin-email <email> [--admin-password <pw>] [--json]

Creates a tenant with default settings and its admin user, and prints once the admin credentials and the
tenant's webhook signing secret. Without --admin-password a strong password is generated.`;

async function main(argv: string[]): Promise<number> {
  const [group, command, ...rest] = argv;
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const known =
      err instanceof ProvisionError ||
      err instanceof ConfigError ||
      err instanceof DataDirLockedError ||
      (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION';
    process.stderr.write(
      `portico: ${known ? (err as Error).message : String((err as Error).stack ?? err)}\n`,
    );
    process.exit(known ? 2 : 1);
  },
);
