// The README's "A first check-in", run as written: the service started as `pnpm start` starts it (a
// fresh data folder, the demo tenant's password read from what it prints), the README's webhook
// receiver and then its curl/jq steps run by bash with four photos of one person, and what the README
// says they print is what they print. Needs bash, curl and jq (CI installs jq) and ../shared/faces.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HAS_LABELLED,
  HAS_MODELS,
  LABELLED_DIR,
  LABELLED_SKIP_REASON,
  MODELS_SKIP_REASON,
} from '@portico/test-support/faces';
import { freePort } from '@portico/test-support/net';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MARKER = '<!-- sample: run by test/test/readme-quickstart.test.ts -->';

if (!HAS_LABELLED) console.warn(LABELLED_SKIP_REASON);
if (!HAS_MODELS) console.warn(MODELS_SKIP_REASON);

/** The README's shell blocks that follow the marker, in order. */
async function readmeBlocks(): Promise<string[]> {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  return readme
    .split(MARKER)
    .slice(1)
    .map((part) => {
      const m = /^\s*```sh\n([\s\S]*?)```/.exec(part);
      if (!m) throw new Error('a marker of the README is not followed by a sh block');
      return m[1]!;
    });
}

/** A process with its output gathered; `waitFor` resolves once the output matches. */
function started(command: string, args: string[], env: NodeJS.ProcessEnv, cwd = ROOT) {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners = new Set<() => void>();
  const take = (d: Buffer) => {
    output += d.toString();
    for (const l of listeners) l();
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const waitFor = (re: RegExp, ms: number) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = re.exec(output);
        if (m) {
          listeners.delete(check);
          clearTimeout(timer);
          resolve(m);
        }
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`timed out waiting for ${re} in:\n${output}`));
      }, ms);
      listeners.add(check);
      check();
    });
  return { child, waitFor, output: () => output };
}

const stop = (child: ChildProcess | undefined) =>
  new Promise<void>((resolve) => {
    if (!child || child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

describe.skipIf(!HAS_LABELLED || !HAS_MODELS)("the README's first check-in, as written", () => {
  let work: string;
  let service: ReturnType<typeof started> | undefined;
  let receiver: ReturnType<typeof started> | undefined;
  let portico = '';
  let password = '';
  let hookPort = 0;

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'portico-readme-'));
    // Four photos of one person, named as the README says.
    const folder = path.join(LABELLED_DIR, 'bbt', 'penny');
    const photos = (await readdir(folder)).filter((f) => /\.(png|jpe?g)$/i.test(f)).sort();
    for (const [i, f] of photos.slice(0, 4).entries()) {
      await copyFile(path.join(folder, f), path.join(work, `ana-${i + 1}.jpg`));
    }
    // The service as `ALLOW_PRIVATE_WEBHOOK_URLS=true pnpm start` runs it (cloud's start script),
    // on free ports and a fresh data folder.
    const port = await freePort();
    portico = `http://127.0.0.1:${port}`;
    service = started(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts'],
      {
        ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
        PORT: String(port),
        MQTT_PORT: '0',
        MQTT_WS_PORT: 'off',
        DATA_DIR: path.join(work, 'data'),
        LOG_LEVEL: 'warn',
      },
      path.join(ROOT, 'cloud'),
    );
    password = (await service.waitFor(/admin password\s+(\S+)/, 90_000))[1]!;
    // Ready once the face engine answers (the README's reader waits for `pnpm start` the same way).
    for (let i = 0; i < 120; i++) {
      const ready = await fetch(`${portico}/v1/public/onboarding/health`).catch(() => undefined);
      if (ready?.status === 200) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    hookPort = await freePort();
  }, 150_000);

  afterAll(async () => {
    await stop(receiver?.child);
    await stop(service?.child);
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('enrolls a face, checks it in and delivers the webhooks, as the README says', async () => {
    const [receiverBlock, steps] = await readmeBlocks();
    expect(receiverBlock, 'the receiver block').toBeTruthy();
    expect(steps, 'the steps block').toBeTruthy();
    receiver = started('bash', ['-c', receiverBlock!], { HOOK_PORT: String(hookPort) }, work);
    await new Promise((r) => setTimeout(r, 500));

    const run = started(
      'bash',
      ['-c', steps!],
      {
        PORTICO: portico,
        PASSWORD: password,
        PHOTOS: work,
        HOOK: `http://127.0.0.1:${hookPort}/`,
      },
      work,
    );
    const code = await new Promise<number | null>((resolve) => run.child.once('exit', resolve));
    const out = run.output();
    expect(code, out).toBe(0);
    expect(out).toMatch(/^\{"enrolled":"Ana Souza","photos":3,"quality":[\d.]+\}$/m);
    expect(out).toMatch(/^\{"outcome":"success","person":"Ana","score":[\d.]+\}$/m);

    await receiver.waitFor(/^person\.enrolled \S+$/m, 30_000);
    await receiver.waitFor(/^checkin\.success \S+$/m, 30_000);
  }, 120_000);
});
