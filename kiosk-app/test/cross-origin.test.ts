// A web page of another origin cannot drive the kiosk or the device agent (issue 23, item 4): in real
// Chromium, a page served from another local port posts check-ins and wrong staff PINs to both servers
// (JSON sent as text/plain, as a form could, and as application/json), and nothing happens; a host name
// rebound to 127.0.0.1 (Chromium's resolver rules stand in for DNS rebinding) reads nothing; the
// kiosk's own page still checks in and opens a staff session, and its answers carry the security headers.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, HAS_CHROMIUM } from '@portico/test-support/chromium';
import { adminOf } from '@portico/test-support/identity';
import {
  agentCall,
  agentEnv,
  confirmedGuest,
  deviceToken,
  openEvent,
  startAgentProcess,
  startCloud,
  until,
  type AgentProcess,
  type Cloud,
} from '../../test/support/edge.js';
import { hashPin } from '../../device-agent/src/pin.js';
import { startKioskServer, type KioskServer } from '../src/server.js';

const PIN = '482913';
const REBOUND = 'rebound.example';

if (!HAS_CHROMIUM) console.warn(`[kiosk] cross-origin tests skipped: ${CHROMIUM} not installed`);

/** A raw request with the Host header chosen (fetch does not let a caller set it). */
function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe.skipIf(!HAS_CHROMIUM)(
  'a page of another origin against the kiosk and the agent (real Chromium)',
  { timeout: 60_000 },
  () => {
    let cloud: Cloud;
    let agent: AgentProcess | undefined;
    let kiosk: KioskServer | undefined;
    let attacker: http.Server | undefined;
    let attackerUrl: string;
    let browser: Browser | undefined;
    let event: { id: string; publicToken: string };
    let checkinUrl: string;

    beforeAll(async () => {
      cloud = await startCloud();
      const admin = await adminOf(cloud.app);
      event = await openEvent(cloud.app, admin.headers, { name: 'Expo' });
      checkinUrl = (await confirmedGuest(cloud.app, admin.headers, event.id, { name: 'Ana Lima' }))
        .checkinUrl;
      const token = await deviceToken(cloud.app, admin.headers, 'Gate 1');
      agent = await startAgentProcess(
        await agentEnv(cloud.url, token, [event.publicToken], {
          STAFF_PIN_HASH: hashPin(PIN),
          STAFF_PIN_ATTEMPTS: '2',
          STAFF_LOCKOUT_S: '300',
        }),
      );
      await until(
        async () => (await agentCall(agent!, 'GET', '/status')).body.events[0].guests === 1,
        20_000,
        'replica',
      );
      kiosk = await startKioskServer({ agentUrl: agent.url, cloudUrl: cloud.url });
      attacker = http.createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<!doctype html><title>elsewhere</title>');
      });
      await new Promise<void>((resolve) => attacker!.listen(0, '127.0.0.1', resolve));
      attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
      // The ordinary flags of cloud/test/support/chromium.ts, and a resolver rule that plays the part of
      // a DNS rebinding: a name of the attacker's answering with 127.0.0.1.
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          `--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`,
        ],
      });
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await new Promise((resolve) => attacker?.close(resolve));
      await kiosk?.close();
      await agent?.kill('SIGKILL');
      await cloud?.close();
    });

    it('creates no check-in and locks no PIN from a page of another origin, text/plain or JSON', async () => {
      const page = await browser!.newPage();
      await page.goto(attackerUrl);
      const targets = [agent!.url, `${kiosk!.url}/agent`];
      await page.evaluate(
        async ({ targets, token, code }) => {
          const post = (url: string, body: unknown, type: string) =>
            fetch(url, {
              method: 'POST',
              mode: type === 'text/plain' ? 'no-cors' : 'cors',
              headers: { 'content-type': type },
              body: JSON.stringify(body),
            }).catch(() => undefined);
          for (const base of targets) {
            for (const type of ['text/plain', 'application/json']) {
              await post(`${base}/events/${token}/qr`, { code }, type);
              for (const pin of ['000000', '111111', '222222'])
                await post(`${base}/staff/session`, { pin }, type);
            }
          }
        },
        { targets, token: event.publicToken, code: checkinUrl },
      );
      await page.close();

      const status = (await agentCall(agent!, 'GET', '/status')).body;
      expect(status.queueLength + status.uploaded).toBe(0);

      // The kiosk's own page: its check-in is admitted and the right PIN opens a session (no lock-out).
      const own = await browser!.newPage();
      await own.goto(kiosk!.url);
      const answers = await own.evaluate(
        async ({ token, code, pin }) => {
          const post = async (path: string, body: unknown) => {
            const res = await fetch(`/agent${path}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(body),
            });
            return { status: res.status, body: (await res.json()) as Record<string, unknown> };
          };
          return [await post(`/events/${token}/qr`, { code }), await post('/staff/session', { pin })];
        },
        { token: event.publicToken, code: checkinUrl, pin: PIN },
      );
      await own.close();
      expect(answers[0]).toMatchObject({ status: 200, body: { outcome: 'success' } });
      expect(answers[1]).toMatchObject({ status: 200, body: { token: expect.any(String) } });
    });

    it('reads nothing through a rebound host name: 421 host_not_allowed, on the agent and the kiosk', async () => {
      const page = await browser!.newPage();
      for (const base of [agent!.url, kiosk!.url]) {
        const port = new URL(base).port;
        const path = base === agent!.url ? '/status' : '/agent/status';
        const answer = await page.goto(`http://${REBOUND}:${port}${path}`);
        expect(answer!.status()).toBe(421);
        expect(JSON.parse(await answer!.text())).toMatchObject({ code: 'host_not_allowed' });
      }
      await page.close();
      const evil = await rawRequest(`${kiosk!.url}/`, { headers: { host: 'evil.example' } });
      expect(evil.status).toBe(421);
      expect(evil.body).not.toContain('<script');
    });

    it('refuses a foreign Origin with 403 origin_not_allowed, a body not sent as JSON with 415, a PIN from no page with 403', async () => {
      for (const base of [agent!.url, `${kiosk!.url}/agent`]) {
        const url = `${base}/events/${event.publicToken}/qr`;
        const body = JSON.stringify({ code: 'unknown-code' });
        const foreign = await rawRequest(url, {
          method: 'POST',
          headers: { origin: attackerUrl.slice(0, -1), 'content-type': 'application/json' },
          body,
        });
        expect(foreign.status).toBe(403);
        expect(JSON.parse(foreign.body)).toMatchObject({ code: 'origin_not_allowed' });
        const plain = await rawRequest(url, {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body,
        });
        expect(plain.status).toBe(415);
        expect(JSON.parse(plain.body)).toMatchObject({ code: 'unsupported_media_type' });
      }
      // A wrong PIN counts toward the lock-out: the kiosk relays one only from its own page.
      const bare = await rawRequest(`${kiosk!.url}/agent/staff/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ pin: '000000' }),
      });
      expect(bare.status).toBe(403);
      expect(JSON.parse(bare.body)).toMatchObject({ code: 'origin_not_allowed' });
    });

    it("serves the kiosk's page with CSP, frame-ancestors 'none', nosniff and no referrer", async () => {
      const page = await rawRequest(`${kiosk!.url}/`);
      expect(page.status).toBe(200);
      const csp = String(page.headers['content-security-policy']);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect(page.headers['x-content-type-options']).toBe('nosniff');
      expect(page.headers['referrer-policy']).toBe('no-referrer');

      // The page still runs under its policy: it draws its screen and the browser reports no violation.
      const tab = await browser!.newPage();
      const violations: string[] = [];
      tab.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      await tab.goto(`${kiosk!.url}/?event=${event.publicToken}`);
      await tab.waitForSelector('#app main');
      await new Promise((r) => setTimeout(r, 500));
      await tab.close();
      expect(violations).toEqual([]);
    });
  },
);
