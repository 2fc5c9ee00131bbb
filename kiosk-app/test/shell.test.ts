// The Electron shell's decisions (src/shell/policy.ts), in Node: Electron itself cannot run here.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AGENT_MALLOC_ENV,
  agentCommand,
  createCrashPolicy,
  ensureAgent,
  isAllowedNavigation,
  isAllowedPermission,
} from '../src/shell/policy.js';

describe('kiosk shell policy', () => {
  it('allows navigation within the kiosk origin only', () => {
    const kiosk = 'http://127.0.0.1:7172';
    expect(isAllowedNavigation('http://127.0.0.1:7172/?event=abc', kiosk)).toBe(true);
    expect(isAllowedNavigation('http://127.0.0.1:7171/status', kiosk)).toBe(false);
    expect(isAllowedNavigation('https://evil.example/', kiosk)).toBe(false);
    expect(isAllowedNavigation('file:///etc/passwd', kiosk)).toBe(false);
    expect(isAllowedNavigation('not a url', kiosk)).toBe(false);
  });

  it('grants the camera and nothing else', () => {
    expect(isAllowedPermission('media', { mediaTypes: ['video'] })).toBe(true);
    expect(isAllowedPermission('media', { mediaTypes: ['video', 'audio'] })).toBe(false);
    expect(isAllowedPermission('media', { mediaTypes: ['audio'] })).toBe(false);
    for (const p of ['geolocation', 'notifications', 'clipboard-read', 'openExternal', 'fullscreen']) {
      expect(isAllowedPermission(p)).toBe(false);
    }
  });

  it('reloads a crashed renderer at once, then backs off, and starts over after a quiet minute', () => {
    let t = 0;
    const policy = createCrashPolicy({ maxDelayMs: 8000, resetAfterMs: 60_000, now: () => t });
    expect([policy.crashed(), policy.crashed(), policy.crashed(), policy.crashed()]).toEqual([
      0, 1000, 2000, 4000,
    ]);
    expect([policy.crashed(), policy.crashed()]).toEqual([8000, 8000]);
    t += 61_000;
    expect(policy.crashed()).toBe(0);
  });

  it('starts the agent from its sources with tsx, or the built one with Electron as Node', () => {
    const common = {
      agentSourceDir: '/src/device-agent',
      execPath: '/opt/kiosk/portico-kiosk',
      userDataDir: '/home/k/.config/kiosk',
      modelDir: '/opt/kiosk/resources/models',
    };
    expect(agentCommand({ ...common, builtAgent: null, env: {} })).toEqual({
      command: 'node',
      args: ['--import', 'tsx', 'src/main.ts'],
      cwd: '/src/device-agent',
      env: AGENT_MALLOC_ENV,
    });
    // The environment wins over the package's defaults.
    expect(
      agentCommand({
        ...common,
        builtAgent: '/opt/kiosk/dist/agent/main.mjs',
        env: { AGENT_DATA_DIR: '/var/lib/agent', PORTICO_MODEL_DIR: '/models', MALLOC_ARENA_MAX: '4' },
      }).env,
    ).toEqual({
      MALLOC_MMAP_THRESHOLD_: AGENT_MALLOC_ENV.MALLOC_MMAP_THRESHOLD_,
      ELECTRON_RUN_AS_NODE: '1',
      AGENT_DATA_DIR: '/var/lib/agent',
    });
  });

  describe('ensureAgent', () => {
    let server: http.Server | undefined;
    afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));
    const agentOn = (port: number) =>
      new Promise<http.Server>((resolve) => {
        const s = http.createServer((_req, res) => res.end('{}'));
        s.listen(port, '127.0.0.1', () => resolve(s));
      });
    const freePort = async () => {
      const s = await agentOn(0);
      const { port } = s.address() as AddressInfo;
      await new Promise<void>((resolve) => s.close(() => resolve()));
      return port;
    };

    it('attaches to an agent that answers, without starting one', async () => {
      server = await agentOn(0);
      let starts = 0;
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect(await ensureAgent({ agentUrl: url, start: () => starts++ })).toEqual({ started: false });
      expect(starts).toBe(0);
    });

    it('starts the agent when nothing answers and waits until it does', async () => {
      const port = await freePort();
      let starts = 0;
      const result = await ensureAgent({
        agentUrl: `http://127.0.0.1:${port}`,
        start: () => {
          starts++;
          setTimeout(() => void agentOn(port).then((s) => (server = s)), 300);
        },
      });
      expect(result).toEqual({ started: true });
      expect(starts).toBe(1);
    });

    it('gives up with an error when the started agent never answers', async () => {
      const port = await freePort();
      await expect(
        ensureAgent({ agentUrl: `http://127.0.0.1:${port}`, start: () => undefined, timeoutMs: 500 }),
      ).rejects.toThrow(/did not answer/);
    });
  });
});
