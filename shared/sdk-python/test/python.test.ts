// Runs the Python SDK's unittest suite (Debian's python3, standard library only) against a real
// service started here, so `pnpm test` covers it; the suite's output is shown when it fails.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FaceEngine } from '@portico/face-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@portico/test-support/app';
import {
  cleanPhotos,
  HAS_MODELS,
  MODELS_SKIP_REASON,
  samePersonPair,
  sharedFaceEngine,
} from '@portico/test-support/faces';
import { adminOf, TestClock } from '@portico/test-support/identity';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
/** Debian's `mypy` package, when installed, checks the type hints. */
const HAS_MYPY = spawnSync(PYTHON, ['-m', 'mypy', '--version']).status === 0;

function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(PYTHON, args, {
      cwd: packageDir,
      env: { ...process.env, ...env, PYTHONPATH: path.join(packageDir, 'src'), PYTHONDONTWRITEBYTECODE: '1' },
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('close', (code) => resolve({ code, output }));
  });
}

it.skipIf(!HAS_MYPY)(
  'passes mypy --strict (type hints of the package and its tests)',
  async () => {
    const { code, output } = await run(['-m', 'mypy', '--strict', '--cache-dir=/dev/null', 'src', 'tests']);
    expect(code, output).toBe(0);
  },
  120_000,
);

if (!HAS_MODELS) console.warn(MODELS_SKIP_REASON);

describe.skipIf(!HAS_MODELS)('portico (Python SDK) against a running service', () => {
  let engine: FaceEngine;
  let t: TestApp;
  let clockControl: http.Server;
  let photoDir: string;
  const env: Record<string, string> = {};

  beforeAll(async () => {
    const clock = new TestClock(new Date());
    let face;
    ({ engine, face } = await sharedFaceEngine(1));
    t = await createTestApp({ face, clock });
    const admin = await adminOf(t);
    await t.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, {
      headers: admin.headers,
      body: { requireLiveness: false },
    });
    const app = await t.request('POST', '/v1/applications', {
      headers: admin.headers,
      body: { name: 'python sdk' },
    });
    // The suite waits out Retry-After by moving the service's clock, not by sleeping.
    clockControl = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        clock.advance(Number(JSON.parse(body).ms));
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => clockControl.listen(0, '127.0.0.1', resolve));
    photoDir = await mkdtemp(path.join(os.tmpdir(), 'portico-py-'));
    const [enroll, probe] = await samePersonPair();
    const other = (await cleanPhotos())[1]!;
    const files = await Promise.all(
      [enroll, probe, other].map(async (photo, i) => {
        const file = path.join(photoDir, `photo-${i}`);
        await writeFile(file, photo.bytes);
        return file;
      }),
    );
    Object.assign(env, {
      PORTICO_URL: t.url,
      PORTICO_API_KEY: app.body.apiKey.key,
      PORTICO_TENANT_ID: admin.tenant.tenantId,
      PORTICO_TENANT_SLUG: admin.tenant.slug,
      PORTICO_WEBHOOK_SECRET: admin.tenant.webhookSecret,
      PORTICO_ADMIN_EMAIL: admin.tenant.adminEmail,
      PORTICO_ADMIN_PASSWORD: admin.tenant.adminPassword,
      PORTICO_PHOTOS: files.join(path.delimiter),
      PORTICO_CLOCK_URL: `http://127.0.0.1:${(clockControl.address() as AddressInfo).port}/advance`,
    });
  }, 120_000);
  afterAll(async () => {
    await new Promise((resolve) => clockControl?.close(resolve));
    if (photoDir) await rm(photoDir, { recursive: true, force: true });
    await t?.close();
    await engine?.close();
  });

  it('passes its unittest suite: quick start, problem codes, 429 retried, every resource, 120 persons paged, sandbox, headers, webhooks, session', async () => {
    const { code, output } = await run(['-m', 'unittest', 'discover', '-v', '-s', 'tests'], env);
    expect(code, output).toBe(0);
    expect(output).toMatch(/Ran 12 tests/);
    expect(output).not.toMatch(/skipped/);
    expect(output).toMatch(/\nOK\n?/);
  }, 120_000);
});
