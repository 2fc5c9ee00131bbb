// The operator's way back in for a locked-out user, run as a child process like an operator would:
// `pnpm portico user reset-mfa --email …` and `pnpm portico user reset-password --email …` (PGlite data
// directory, or a scratch PostgreSQL database with TEST_DATABASE_URL). Mails go out through the service
// started afterwards on the same data, to a real SMTP sink.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/infra/db/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createScratchPostgresDatabase, testDatabaseUrl } from '../support/database.js';
import { bearer, totpCodes } from '../support/identity.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp.js';
import { waitForMail } from '../portal/support.js';

const cloudDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const key = Buffer.alloc(32, 9).toString('base64');
const PUBLIC_URL = 'https://portico.example.com';
const EMAIL = 'ops@acme.test';

function cli(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: cloudDir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_ENCRYPTION_KEY: key, PUBLIC_URL, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (err += c));
  return new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, out, err })),
  );
}

describe('pnpm portico user reset-mfa | reset-password', () => {
  let dataDir: string;
  let scratch: Awaited<ReturnType<typeof createScratchPostgresDatabase>> | undefined;
  let env: Record<string, string>;
  let smtp: SmtpSink;
  let password: string;

  /** The service on the CLI's data (the CLI and a PGlite server cannot hold the data directory at once). */
  async function withApp<T>(work: (app: TestApp, db: Database) => Promise<T>): Promise<T> {
    const db = await openDatabase(scratch ? { databaseUrl: scratch.url } : { dataDir });
    const app = await createTestApp({
      database: db,
      env: { DATA_ENCRYPTION_KEY: key, SMTP_URL: smtp.url, PUBLIC_URL },
    });
    try {
      return await work(app, db);
    } finally {
      await app.close();
      await db.close();
    }
  }

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'portico-user-cli-'));
    scratch = testDatabaseUrl ? await createScratchPostgresDatabase() : undefined;
    env = { DATA_DIR: dataDir, ...(scratch ? { DATABASE_URL: scratch.url } : {}) };
    smtp = await startSmtpSink();
    const created = await cli(
      ['tenant', 'create', '--slug', 'acme', '--name', 'Acme', '--admin-email', EMAIL, '--json'],
      env,
    );
    expect(created.code, created.err).toBe(0);
    password = JSON.parse(created.out).adminPassword;
  }, 60_000);

  afterAll(async () => {
    await smtp?.close();
    await scratch?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('refuses an unknown e-mail or a missing --email with exit code 2', async () => {
    const unknown = await cli(['user', 'reset-mfa', '--email', 'nobody@acme.test'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('No user with e-mail nobody@acme.test');
    const missing = await cli(['user', 'reset-password'], env);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/^portico: --email is required/);
  }, 60_000);

  it('reset-mfa turns MFA off (secret and recovery codes gone), audited as the operator, and mails the user', async () => {
    // The owner turns MFA on, then loses the authenticator and the codes.
    await withApp(async (app) => {
      const login = await app.request('POST', '/v1/auth/login', { body: { email: EMAIL, password } });
      const headers = bearer(login.body.accessToken);
      const setup = await app.request('POST', '/v1/auth/mfa/setup', { headers });
      const code = await totpCodes(setup.body.secret)();
      const on = await app.request('POST', '/v1/auth/mfa/enable', { headers, body: { code } });
      expect(on.status, on.text).toBe(200);
    });

    const res = await cli(['user', 'reset-mfa', '--email', EMAIL.toUpperCase()], env);
    expect(res.code, res.err).toBe(0);
    expect(res.out).toContain(`Two-step verification of ${EMAIL} is off`);

    await withApp(async (app, db) => {
      const user = await db.prisma.user.findUniqueOrThrow({ where: { email: EMAIL } });
      expect(user.mfaEnabled).toBe(false);
      expect(user.mfaSecretEnc).toBeNull();
      expect(await db.prisma.mfaRecoveryCode.count({ where: { userId: user.id } })).toBe(0);
      const audit = await db.prisma.auditLog.findFirstOrThrow({
        where: { action: 'auth.mfa.reset_by_operator' },
      });
      expect(audit.actorType).toBe('operator');
      expect(audit.targetId).toBe(user.id);
      expect(audit.metadata).toEqual({ wasEnabled: true, recoveryCodesDeleted: 10 });
      // The password alone signs in again.
      const login = await app.request('POST', '/v1/auth/login', { body: { email: EMAIL, password } });
      expect(login.status).toBe(200);
      expect(login.body.accessToken).toEqual(expect.any(String));
      await waitForMail(smtp, EMAIL, /operator turned off two-step verification/);
    });
  }, 90_000);

  it('reset-password ends every session and prints a one-time link that sets a new password', async () => {
    const session = await withApp(async (app) => {
      const login = await app.request('POST', '/v1/auth/login', { body: { email: EMAIL, password } });
      expect(login.status).toBe(200);
      return login.body.accessToken as string;
    });

    const res = await cli(['user', 'reset-password', '--email', EMAIL, '--json'], env);
    expect(res.code, res.err).toBe(0);
    const r = JSON.parse(res.out);
    expect(r.endedSessions).toBeGreaterThanOrEqual(1);
    const link = new URL(r.resetLink);
    expect(`${link.origin}${link.pathname}`).toBe(`${PUBLIC_URL}/console`);
    const token = new URLSearchParams(link.hash.split('?')[1]).get('token')!;
    expect(token).toMatch(/^pwr_/);
    const human = await cli(['user', 'reset-password', '--email', EMAIL], env);
    expect(human.out).toContain('reset link  https://portico.example.com/console#/reset-password?token=');
    const second = /token=(\S+)/.exec(human.out)![1]!;

    await withApp(async (app, db) => {
      expect((await app.request('GET', '/v1/auth/me', { headers: bearer(session) })).status).toBe(401);
      // A later link replaces the earlier one.
      const stale = await app.request('POST', '/v1/auth/password/reset', {
        body: { token, password: 'the operator handed me this' },
      });
      expect(stale.status).toBe(400);
      const set = await app.request('POST', '/v1/auth/password/reset', {
        body: { token: decodeURIComponent(second), password: 'the operator handed me this' },
      });
      expect(set.status, set.text).toBe(200);
      const login = await app.request('POST', '/v1/auth/login', {
        body: { email: EMAIL, password: 'the operator handed me this' },
      });
      expect(login.status).toBe(200);
      const audits = await db.prisma.auditLog.findMany({
        where: { action: 'auth.password.reset_link_issued' },
      });
      expect(audits).toHaveLength(2);
      expect(audits.every((a) => a.actorType === 'operator')).toBe(true);
      expect(JSON.stringify(audits)).not.toContain(token);
      await waitForMail(smtp, EMAIL, /operator started a password reset/);
    });
  }, 90_000);
});
