// The JavaScript build a package needs (scripts/build.ts): the bundled device agent starts with plain
// `node` (no tsx loader) and answers its status route, its face engine worker runs from the bundle too
// (a real photo gets a face box, when the models are here), and the built shell's policy module loads.
// Electron and electron-builder are not run (no Electron binary on these machines).
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_LABELLED, HAS_MODELS, LABELLED_DIR } from '@portico/test-support/faces';
import { until } from '../../test/support/edge.js';
import { buildKiosk } from '../scripts/build.js';
import { MODEL_SHA256, VISION_FILES } from '../scripts/face-detector-model.js';
import type * as Policy from '../src/shell/policy.js';

describe('the kiosk build (dist/)', { timeout: 120_000 }, () => {
  let dist: string;
  let scratch: string;
  const children: ReturnType<typeof spawn>[] = [];

  beforeAll(async () => {
    dist = await buildKiosk();
    scratch = await mkdtemp(path.join(os.tmpdir(), 'portico-kiosk-build-'));
  }, 120_000);

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('writes the bundled agent, its face worker and search kernel, the shell, the preload and the page', () => {
    for (const f of [
      'agent/main.mjs',
      'agent/worker-entry.mjs',
      'agent/search/scan-i8.wasm',
      'shell/main.mjs',
      'shell/policy.mjs',
      'shell/preload.cjs',
      'shell/ui/index.html',
      'shell/ui/style.css',
      'shell/ui/app.js',
    ]) {
      expect(existsSync(path.join(dist, f)), f).toBe(true);
    }
    // Nothing in the agent bundle goes back to the TypeScript loader.
    for (const f of ['agent/main.mjs', 'agent/worker-entry.mjs']) {
      expect(readFileSync(path.join(dist, f), 'utf8')).not.toMatch(/from ["']tsx|tsx\/esm/);
    }
  });

  it('starts the built agent with plain node, which answers /status (and /face-box from its bundled worker)', async () => {
    const face = HAS_MODELS ? 'on' : 'off';
    const child = spawn(process.execPath, [path.join(dist, 'agent/main.mjs')], {
      cwd: scratch,
      env: {
        PATH: process.env.PATH,
        // No cloud: the agent starts offline and says so.
        PORTICO_CLOUD_URL: 'http://127.0.0.1:9',
        INTERNAL_SECRET: 'build-test-internal-secret-0123456789',
        DEVICE_TOKEN: 'pdt_build-test',
        EVENT_TOKENS: 'evt_build',
        AGENT_DATA_KEY: randomBytes(32).toString('base64'),
        AGENT_DATA_DIR: path.join(scratch, 'agent-data'),
        AGENT_PORT: '0',
        AGENT_FACE: face,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    expect(child.spawnargs).not.toContain('--import');
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    await until(() => /"url":"([^"]+)"/.test(out) || child.exitCode !== null, 60_000, 'the built agent');
    expect(child.exitCode, err).toBeNull();
    const url = /"url":"([^"]+)"/.exec(out)![1]!;
    const status = await fetch(`${url}/status`);
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({
      online: false,
      queueLength: 0,
      events: [{ token: 'evt_build', guests: 0 }],
    });

    if (face === 'on' && HAS_LABELLED) {
      const dir = path.join(LABELLED_DIR, 'bbt/leonard');
      const photo = readFileSync(path.join(dir, readdirSync(dir).sort()[0]!)).toString('base64');
      const res = await fetch(`${url}/face-box`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ frame: photo }),
      });
      const body = (await res.json()) as { face: { width: number } | null };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.face?.width).toBeGreaterThan(0.3);
    } else {
      console.warn(
        '[kiosk build] face models or ../shared/faces absent: the bundled face worker was not run',
      );
    }
  });

  it("copies the in-page face detector's model (the pinned one, metadata added) and WebAssembly beside the page", () => {
    for (const name of Object.values(VISION_FILES)) {
      expect(existsSync(path.join(dist, 'shell/ui/vision', name)), name).toBe(true);
    }
    const model = readFileSync(path.join(dist, 'shell/ui/vision', VISION_FILES.model));
    expect(createHash('sha256').update(model).digest('hex')).toBe(MODEL_SHA256);
  });

  it("loads the built shell's policy module with plain Node", async () => {
    const policy = (await import(pathToFileURL(path.join(dist, 'shell/policy.mjs')).href)) as typeof Policy;
    expect(policy.isAllowedNavigation('http://127.0.0.1:7172/x', 'http://127.0.0.1:7172')).toBe(true);
    expect(policy.isAllowedNavigation('https://evil.example/', 'http://127.0.0.1:7172')).toBe(false);
    expect(policy.isAllowedPermission('media', { mediaTypes: ['video'] })).toBe(true);
    const built = policy.agentCommand({
      builtAgent: path.join(dist, 'agent/main.mjs'),
      agentSourceDir: '/unused',
      execPath: '/opt/Portico Kiosk/portico-kiosk',
      userDataDir: '/home/kiosk/.config/Portico Kiosk',
      modelDir: '/opt/Portico Kiosk/resources/models',
      env: {},
    });
    expect(built).toEqual({
      command: '/opt/Portico Kiosk/portico-kiosk',
      args: [path.join(dist, 'agent/main.mjs')],
      env: {
        ...policy.AGENT_MALLOC_ENV,
        ELECTRON_RUN_AS_NODE: '1',
        AGENT_DATA_DIR: '/home/kiosk/.config/Portico Kiosk/agent-data',
        PORTICO_MODEL_DIR: '/opt/Portico Kiosk/resources/models',
      },
    });
  });
});
