// The real entry points as an operator runs them: `src/main.ts` and `src/cli/main.ts` in child processes
// on the embedded defaults (PGlite in DATA_DIR, embedded broker, file mail outbox).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireDataDirLock } from '../../src/infra/db/lock.js';
import { freePort } from '../support/net.js';

const cloudDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function run(script: string, args: string[], env: Record<string, string>) {
  // tsx as a loader in the service's own process (as `pnpm start` runs it): signals reach our handlers.
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: cloudDir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

async function waitReady(url: string, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${url}/v1/health/ready`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('server did not become ready');
}

describe('the service process on its embedded defaults', () => {
  let dataDir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'portico-proc-'));
    env = {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      MQTT_PORT: String(await freePort()),
      MQTT_WS_PORT: String(await freePort()),
      HOST: '127.0.0.1',
    };
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('starts, seeds the demo tenant once, stops on SIGTERM and keeps its data across a restart', async () => {
    const url = `http://127.0.0.1:${env.PORT}`;
    const first = run('src/main.ts', [], env);
    await waitReady(url, first.child);
    expect(first.out()).toContain('Created the demo tenant');
    expect(first.out()).toMatch(/admin password {2}\S{16,}/);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    // The CLI works on the same DATA_DIR while the server is stopped.
    const cli = run(
      'src/cli/main.ts',
      ['tenant', 'create', '--slug', 'acme', '--name', 'Acme', '--admin-email', 'Ops@Acme.test', '--json'],
      env,
    );
    expect(await cli.exited, cli.err()).toBe(0);
    const created = JSON.parse(cli.out());
    expect(created).toMatchObject({ slug: 'acme', adminEmail: 'ops@acme.test' });
    expect(created.adminPassword.length).toBeGreaterThanOrEqual(20);
    expect(created.webhookSecret).toMatch(/^whsec_/);
    expect(Object.keys(created).sort()).toEqual([
      'adminEmail',
      'adminPassword',
      'slug',
      'tenantId',
      'webhookSecret',
    ]);

    const second = run('src/main.ts', [], env);
    await waitReady(url, second.child);
    expect(second.out()).not.toContain('Created the demo tenant');
    // Both tenants survived the restart: the slug is taken.
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    const again = run(
      'src/cli/main.ts',
      ['tenant', 'create', '--slug', 'acme', '--name', 'Acme 2', '--admin-email', 'x@acme.test'],
      env,
    );
    expect(await again.exited).toBe(2);
    expect(again.err()).toContain('A tenant with slug "acme" exists');
  }, 180_000);

  it('explains a busy HTTP port in one line', async () => {
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(Number(env.PORT), '127.0.0.1', resolve));
    try {
      const proc = run('src/main.ts', [], { ...env, MQTT_PORT: String(await freePort()) });
      expect(await proc.exited).toBe(1);
      expect(proc.err()).toMatch(/^portico: Port \d+ on 127\.0\.0\.1 is already in use/);
      expect(proc.err()).not.toMatch(/\n\s+at /);
    } finally {
      squatter.close();
    }
  }, 120_000);

  it('refuses a data directory in use by another process in one line, without a stack trace', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'portico-locked-'));
    await mkdir(path.join(dataDir, 'pglite'));
    const release = await acquireDataDirLock(path.join(dataDir, 'pglite'));
    try {
      const cli = run(
        'src/cli/main.ts',
        ['tenant', 'create', '--slug', 'locked', '--name', 'Locked', '--admin-email', 'a@example.com'],
        { ...env, DATA_DIR: dataDir },
      );
      expect(await cli.exited).toBe(2);
      expect(cli.err()).toMatch(/^portico: The embedded database in .* is in use by process \d+/);
      expect(cli.err()).not.toMatch(/\n\s+at /);
    } finally {
      await release();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('rejects invalid CLI input with a clear message', async () => {
    const bad = run(
      'src/cli/main.ts',
      ['tenant', 'create', '--slug', 'Bad Slug!', '--name', 'X', '--admin-email', 'nope'],
      env,
    );
    expect(await bad.exited).toBe(2);
    expect(bad.err()).toMatch(/--slug/);
    expect(bad.err()).toMatch(/--admin-email/);
  }, 60_000);
});
