// The SDK's bus helper in a real browser (Chromium): mqtt.js and `@portico/sdk/mqtt` bundled as an
// integrator's bundler would, on a page served over HTTP from 127.0.0.1, subscribed to its tenant over
// ws:// on the embedded broker at the `wsUrl` GET /v1/admin/bus names; check-ins made through the API
// reach it, another tenant's never do. The page comes from a real local server, not from an
// intercepted route: Chromium's Local Network Access checks treat a page without a network address as
// public and block its WebSocket to a loopback broker.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import mqtt from 'mqtt';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualCheckin, person } from '../../../cloud/test/admin/support.js';
import { createTestApp, type TestApp } from '@portico/test-support/app';
import { serviceLogin, tenantLogin } from '@portico/test-support/bus';
import { launchChromium } from '@portico/test-support/chromium';
import { adminOf } from '@portico/test-support/identity';

const sdkDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// An external broker (TEST_MQTT_URL, Mosquitto in CI) has no WebSocket listener of ours to reach.
const external = process.env.TEST_MQTT_URL;
if (external) console.warn(`SDK bus in Chromium skipped: TEST_MQTT_URL (${external}) offers no WebSocket`);

interface Seen {
  /** Every topic the browser's client received, whatever the helper made of it. */
  topics: string[];
  /** What `subscribeEvents` handed to the page. */
  events: Array<{ event: string; tenantId: string; data: { checkInId?: string }; topic: string }>;
}

describe.skipIf(external)('@portico/sdk/mqtt in Chromium over ws://', () => {
  let t: TestApp;
  let site: http.Server;
  let browser: Browser;
  let page: Page;
  let a: Awaited<ReturnType<typeof adminOf>>;
  let b: Awaited<ReturnType<typeof adminOf>>;

  beforeAll(async () => {
    const bundle = await build({
      stdin: {
        contents:
          "export { default as mqtt } from 'mqtt';\nexport { busConnectOptions, subscribeEvents } from './src/mqtt.ts';\n",
        resolveDir: sdkDir,
        sourcefile: 'app.ts',
        loader: 'ts',
      },
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
    });
    // The integrator's page and its bundle, served as a local web server would.
    site = http.createServer((req, res) =>
      req.url === '/app.js'
        ? res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle.outputFiles[0]!.text)
        : res
            .writeHead(200, { 'content-type': 'text/html' })
            .end(
              '<!doctype html><script type="module">import * as app from "./app.js"; window.app = app;</script>',
            ),
    );
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    // The broker takes WebSocket upgrades from the integrator's page because its origin is allowed.
    t = await createTestApp({ env: { MQTT_WS_ALLOWED_ORIGINS: origin } });
    [a, b] = [await adminOf(t), await adminOf(t)];
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => 'app' in window);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    site?.close();
    await t?.close();
  });

  it('receives its tenant’s check-in made through the API, and nothing of another tenant', async () => {
    const info = await t.request('GET', '/v1/admin/bus', { headers: a.headers });
    expect(info.status, info.text).toBe(200);
    const wsUrl: string = info.body.wsUrl;
    expect(wsUrl).toBe(t.deps.bus.wsUrl);
    expect(wsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const tenantId = a.tenant.tenantId;
    // The bus token the console is handed: bound to tenant A.
    const { password } = await tenantLogin(t, a.headers);
    await page.evaluate(
      async ({ wsUrl, tenantId, password }) => {
        const app = (window as any).app; // eslint-disable-line @typescript-eslint/no-explicit-any
        const client = await app.mqtt.connectAsync(wsUrl, app.busConnectOptions({ tenantId, password }));
        const seen: Seen = { topics: [], events: [] };
        (window as unknown as { seen: Seen }).seen = seen;
        client.on('message', (topic: string) => seen.topics.push(topic));
        await app.subscribeEvents(client, tenantId, (event: Seen['events'][number], topic: string) =>
          seen.events.push({ ...event, topic }),
        );
      },
      { wsUrl, tenantId, password },
    );

    // Tenant B's check-in first, and seen on the broker (a Node client over TCP) before A's is made: had
    // the browser been given B's topics, B's message would have reached it ahead of A's.
    const watcher = await mqtt.connectAsync(t.deps.bus.url, serviceLogin(t));
    try {
      const otherCheckIn = new Promise<string>((resolve) =>
        watcher.on('message', (_topic, payload) => resolve(JSON.parse(payload.toString()).data.checkInId)),
      );
      await watcher.subscribeAsync(`portico/v1/tenants/${b.tenant.tenantId}/+`, { qos: 1 });
      const other = await manualCheckin(t, b.headers, await person(t, b.tenant.tenantId, 'Bruno Other'));
      expect(await otherCheckIn).toBe(other);
    } finally {
      await watcher.endAsync();
    }

    const own = await manualCheckin(t, a.headers, await person(t, a.tenant.tenantId, 'Ana Own'));
    await page.waitForFunction(
      (id) => (window as unknown as { seen: Seen }).seen.events.some((e) => e.data.checkInId === id),
      own,
      { timeout: 10_000 },
    );
    const seen = await page.evaluate(() => (window as unknown as { seen: Seen }).seen);
    const mine = seen.events.find((e) => e.data.checkInId === own)!;
    expect(mine).toMatchObject({
      event: 'checkin.success',
      tenantId,
      topic: `portico/v1/tenants/${tenantId}/checkin.success`,
    });
    expect(seen.events.filter((e) => e.tenantId !== tenantId)).toEqual([]);
    expect(seen.topics.length).toBeGreaterThan(0);
    expect(seen.topics.filter((topic) => !topic.startsWith(`portico/v1/tenants/${tenantId}/`))).toEqual([]);
  });
});
