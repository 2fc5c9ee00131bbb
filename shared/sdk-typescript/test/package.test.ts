// Both SDKs as an integrator gets them: packed (`pnpm pack`, a wheel), installed with plain npm and pip
// into fresh folders outside the workspace, and each quick start of docs/integrators/sdks.md run as written,
// twice, with plain `node` and `python3` against a real service started here.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FaceEngine } from '@portico/face-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@portico/test-support/app';
import {
  HAS_MODELS,
  MODELS_SKIP_REASON,
  samePersonPair,
  sharedFaceEngine,
} from '@portico/test-support/faces';
import { adminOf } from '@portico/test-support/identity';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const TSC = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');

interface Run {
  code: number;
  output: string;
}

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    // A clean environment: nothing of the workspace's (NODE_OPTIONS, PYTHONPATH, pnpm's PATH) leaks in.
    const base = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? os.tmpdir() };
    execFile(command, args, { cwd, env: { ...base, ...env }, timeout: 180_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

/** The one code block of docs/integrators/sdks.md that follows `marker`. */
async function docBlock(marker: string, language: string): Promise<string> {
  const doc = await readFile(path.join(root, 'docs', 'integrators', 'sdks.md'), 'utf8');
  const at = doc.indexOf(marker);
  if (at < 0) throw new Error(`docs/integrators/sdks.md has no "${marker}"`);
  const m = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(doc.slice(at));
  if (!m) throw new Error(`no ${language} block after "${marker}"`);
  return m[1]!;
}

if (!HAS_MODELS) console.warn(MODELS_SKIP_REASON);

describe.skipIf(!HAS_MODELS)(
  'the SDKs packed, installed outside the workspace and run as the docs say',
  () => {
    let engine: FaceEngine;
    let t: TestApp;
    let work: string;
    let env: Record<string, string>;
    let admin: Awaited<ReturnType<typeof adminOf>>;

    beforeAll(async () => {
      let face;
      ({ engine, face } = await sharedFaceEngine(1));
      t = await createTestApp({ face });
      admin = await adminOf(t);
      await t.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, {
        headers: admin.headers,
        body: { requireLiveness: false },
      });
      const app = await t.request('POST', '/v1/applications', {
        headers: admin.headers,
        body: { name: 'quick start' },
      });
      env = { PORTICO_URL: t.url, PORTICO_API_KEY: app.body.apiKey.key, PORTICO_TENANT: admin.tenant.slug };
      work = await mkdtemp(path.join(os.tmpdir(), 'portico-packages-'));
    }, 120_000);
    afterAll(async () => {
      if (work) await rm(work, { recursive: true, force: true });
      await t?.close();
      await engine?.close();
    });

    const photos = async (dir: string) => {
      const [enroll, door] = await samePersonPair();
      await writeFile(path.join(dir, 'ada.jpg'), enroll.bytes);
      await writeFile(path.join(dir, 'door.jpg'), door.bytes);
    };
    const personsWithExternalId = async () =>
      (await t.request('GET', '/v1/persons?externalId=ada-1815', { headers: admin.headers })).body.items
        .length;

    it('packs @portico/sdk, installs it with npm in a fresh folder and runs the quick start twice with plain node', async () => {
      const packed = await run(
        'pnpm',
        ['--filter', '@portico/sdk', 'pack', '--pack-destination', work],
        root,
      );
      expect(packed.code, packed.output).toBe(0);
      const tarball = path.join(
        work,
        (await readdir(work)).find((f) => f.endsWith('.tgz'))!,
      );

      const project = await mkdtemp(path.join(work, 'node-'));
      await writeFile(path.join(project, 'package.json'), '{ "name": "integrator", "private": true }\n');
      const installed = await run(
        'npm',
        ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball],
        project,
      );
      expect(installed.code, installed.output).toBe(0);
      expect(
        existsSync(path.join(project, 'node_modules', '@portico', 'contract')),
        'no workspace package',
      ).toBe(false);

      await photos(project);
      await writeFile(
        path.join(project, 'quickstart.mjs'),
        await docBlock('installed from its tarball', 'js'),
      );
      for (const round of [1, 2]) {
        const { code, output } = await run(process.execPath, ['quickstart.mjs'], project, env);
        expect(code, `run ${round}: ${output}`).toBe(0);
        expect(output, `run ${round}`).toMatch(/^success \S+/m);
        expect(output, `run ${round}`).toMatch(/^no such person /m);
      }
      expect(await personsWithExternalId()).toBe(1);

      // CommonJS resolves it too.
      const cjs = await run(
        process.execPath,
        ['-e', "console.log(typeof require('@portico/sdk').createPortico)"],
        project,
      );
      expect(cjs.output.trim(), cjs.output).toBe('function');
    }, 240_000);

    it('type-checks a user project (strict, exactOptionalPropertyTypes, no skipLibCheck) as ESM and CommonJS', async () => {
      const project = (await readdir(work)).find((f) => f.startsWith('node-'));
      expect(project, 'the npm project of the test before').toBeDefined();
      const dir = path.join(work, project!);
      const source =
        "import { createPortico, ok, verifyWebhookSignature, type PorticoEvent } from '@portico/sdk';\n" +
        "const portico = createPortico({ baseUrl: 'http://localhost:8080', apiKey: 'pk_test_x', retry: { timeoutMs: 5000 } });\n" +
        'export async function run(event: PorticoEvent): Promise<string> {\n' +
        "  const person = ok(await portico.api.POST('/v1/persons', { body: { name: 'Ada', document: 'AL-1815' } }));\n" +
        "  await verifyWebhookSignature({ rawBody: '{}', headers: {}, secret: 's', toleranceSeconds: 60 });\n" +
        "  return event.event === 'person.enrolled' ? event.data.personId : person.id;\n" +
        '}\n';
      for (const type of ['module', 'commonjs']) {
        const sub = path.join(dir, type);
        await run('mkdir', ['-p', sub], dir);
        await writeFile(path.join(sub, 'package.json'), JSON.stringify({ type }));
        await writeFile(path.join(sub, 'check.ts'), source);
        await writeFile(
          path.join(sub, 'tsconfig.json'),
          JSON.stringify({
            compilerOptions: {
              strict: true,
              exactOptionalPropertyTypes: true,
              noUncheckedIndexedAccess: true,
              skipLibCheck: false,
              module: 'NodeNext',
              moduleResolution: 'NodeNext',
              target: 'ES2022',
              lib: ['ES2023', 'DOM'],
              types: [],
              noEmit: true,
            },
            files: ['check.ts'],
          }),
        );
        const { code, output } = await run(process.execPath, [TSC, '-p', sub], dir);
        expect(code, `${type}: ${output}`).toBe(0);
      }
    }, 120_000);

    it('builds the portico wheel offline, installs it with pip in a fresh venv and runs the quick start twice', async () => {
      const wheels = await mkdtemp(path.join(work, 'wheel-'));
      const built = await run(
        PYTHON,
        [
          '-m',
          'pip',
          'wheel',
          '--no-deps',
          '--no-index',
          '-w',
          wheels,
          path.join(root, 'shared', 'sdk-python'),
        ],
        work,
      );
      expect(built.code, built.output).toBe(0);
      const wheel = path.join(
        wheels,
        (await readdir(wheels)).find((f) => f.endsWith('.whl'))!,
      );
      expect(path.basename(wheel)).toBe('portico-0.1.0-py3-none-any.whl');

      const project = await mkdtemp(path.join(work, 'python-'));
      const venv = await run(PYTHON, ['-m', 'venv', 'venv'], project);
      expect(venv.code, venv.output).toBe(0);
      const python = path.join(project, 'venv', 'bin', 'python');
      const installed = await run(python, ['-m', 'pip', 'install', '--no-index', wheel], project);
      expect(installed.code, installed.output).toBe(0);

      await photos(project);
      await writeFile(
        path.join(project, 'quickstart.py'),
        await docBlock('installed from its wheel', 'python'),
      );
      for (const round of [1, 2]) {
        const { code, output } = await run(python, ['quickstart.py'], project, env);
        expect(code, `run ${round}: ${output}`).toBe(0);
        expect(output, `run ${round}`).toMatch(/^success \S+/m);
        expect(output, `run ${round}`).toMatch(/^404 not_found /m);
      }
      // The same externalId as the Node quick start: still one person.
      expect(await personsWithExternalId()).toBe(1);
    }, 240_000);
  },
);
