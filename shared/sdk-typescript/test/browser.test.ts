// The SDK in a real browser (Chromium), bundled as an integrator's bundler would, against a real
// service on the same origin: fetch, WebCrypto and the browser's own httpOnly refresh cookie.
import { createHmac } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { type Browser, type Page } from 'playwright-core';
import { launchChromium } from '@portico/test-support/chromium';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@portico/test-support/app';
import { newTenant, TestClock } from '@portico/test-support/identity';

const entry = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'index.ts');

describe('@portico/sdk in Chromium', () => {
  const clock = new TestClock(new Date());
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let tenant: Awaited<ReturnType<typeof newTenant>>;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    tenant = await newTenant(t);
    const bundle = await build({
      entryPoints: [entry],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
    });
    browser = await launchChromium();
    page = await browser.newPage();
    // The page and the bundle are served at the service's origin (an app the integrator hosts there).
    await page.route(`${t.url}/sdk-test/**`, (route) =>
      route.request().url().endsWith('.js')
        ? route.fulfill({ contentType: 'text/javascript', body: bundle.outputFiles[0]!.text })
        : route.fulfill({
            contentType: 'text/html',
            body: '<!doctype html><script type="module">import * as sdk from "./sdk.js"; window.sdk = sdk;</script>',
          }),
    );
    await page.goto(`${t.url}/sdk-test/index.html`);
    await page.waitForFunction(() => 'sdk' in window);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('logs in, renews the expired session from the browser-held cookie, and reads problem codes', async () => {
    const login = await page.evaluate(
      async ({ email, password }) => {
        const sdk = (window as any).sdk; // eslint-disable-line @typescript-eslint/no-explicit-any
        const portico = sdk.createPortico({ baseUrl: location.origin });
        (globalThis as Record<string, unknown>).portico = portico;
        await portico.login(email, password);
        const me = sdk.ok(await portico.api.GET('/v1/auth/me'));
        return { email: me.email, token: portico.accessToken, cookieVisible: document.cookie };
      },
      { email: tenant.adminEmail, password: tenant.adminPassword },
    );
    expect(login.email).toBe(tenant.adminEmail);
    expect(login.cookieVisible).toBe(''); // httpOnly: the page's script never sees the refresh token

    clock.advance(16 * 60_000); // past the 15-minute access token
    const after = await page.evaluate(async () => {
      const sdk = (window as any).sdk; // eslint-disable-line @typescript-eslint/no-explicit-any
      const portico = (globalThis as Record<string, any>).portico; // eslint-disable-line @typescript-eslint/no-explicit-any
      const me = sdk.ok(await portico.api.GET('/v1/auth/me'));
      const missing = await portico.api.GET('/v1/persons/{id}', { params: { path: { id: 'nobody' } } });
      let problem: { name: string; code: string; status: number } | undefined;
      try {
        sdk.ok(missing);
      } catch (e) {
        problem = {
          name: (e as Error).name,
          code: (e as { code: string }).code,
          status: (e as { status: number }).status,
        };
      }
      return { email: me.email, token: portico.accessToken, problem };
    });
    expect(after.email).toBe(tenant.adminEmail);
    expect(after.token).not.toBe(login.token);
    expect(after.problem).toEqual({ name: 'PorticoError', code: 'not_found', status: 404 });
  });

  it('verifies a webhook signature with WebCrypto and refuses a tampered body', async () => {
    const rawBody = JSON.stringify({
      id: 'e1',
      event: 'person.deleted',
      tenantId: tenant.tenantId,
      data: {},
    });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = createHmac('sha256', tenant.webhookSecret)
      .update(`${timestamp}.${rawBody}`)
      .digest('hex');
    const verdicts = await page.evaluate(
      async ({ rawBody, signature, timestamp, secret }) => {
        const sdk = (window as any).sdk; // eslint-disable-line @typescript-eslint/no-explicit-any
        const verify = (body: string, header: string, at = timestamp) =>
          sdk.verifyWebhookSignature({
            rawBody: body,
            headers: new Headers({ 'x-service-timestamp': at, 'x-service-signature-v2': header }),
            secret,
          });
        return {
          genuine: await verify(rawBody, signature),
          rotation: await verify(rawBody, `${'0'.repeat(64)},${signature}`),
          tampered: await verify(rawBody.replace('e1', 'e2'), signature),
          stale: await verify(rawBody, signature, String(Number(timestamp) - 600)),
        };
      },
      { rawBody, signature, timestamp, secret: tenant.webhookSecret },
    );
    expect(verdicts).toEqual({ genuine: true, rotation: true, tampered: false, stale: false });
  });
});
