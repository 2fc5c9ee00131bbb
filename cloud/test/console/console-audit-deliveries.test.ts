// The audit log and the webhook delivery log in real Chromium against the real cloud: the audit names
// its actors and says its actions in English and Brazilian Portuguese, its filter lives in the address
// (it survives a reload); a delivery queued behind the page's back shows up by itself, opens with the
// exact body sent and every attempt (a real receiver answering 500, then 200 after "retry now").
// Screenshots go to test/console/screenshots/ only with UPDATE_SCREENSHOTS=1.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { HAS_CHROMIUM, launchChromium } from '../support/chromium.js';
import { bearer, login, newTenant } from '../support/identity.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { goTo, newConsolePage, screen, shot, signInWith } from './support.js';

let app: TestApp;
let browser: Browser;
let receiver: WebhookReceiver;
const cspViolations: string[] = [];
const org = { email: '', tenantId: '', headers: {} as Record<string, string> };
const POLL = { timeout: 15_000 };

const go = (p: Page, hash: string) => goTo(p, app.url, hash);

async function signIn(p: Page) {
  await signInWith(p, app.url, org.email);
}

describe.skipIf(!HAS_CHROMIUM)('admin console: the audit log and the webhook delivery log', () => {
  let en: Page;
  let pt: Page;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await createTestApp();
    browser = await launchChromium();
    const tenant = await newTenant(app);
    org.email = tenant.adminEmail;
    org.tenantId = tenant.tenantId;
    await app.deps.db.prisma.user.update({ where: { email: org.email }, data: { name: 'Olga Owner' } });
    org.headers = bearer((await login(app, org.email)).token!);
    const created = await app.request('POST', '/v1/persons', {
      headers: org.headers,
      body: { name: 'Bruna Alves', document: 'AUD-0001' },
    });
    expect(created.status, created.text).toBe(201);
    const set = await app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
      headers: org.headers,
      body: { webhookUrl: receiver.url },
    });
    expect(set.status, set.text).toBe(200);
    en = await newConsolePage(browser, 'en', cspViolations);
    await signIn(en);
    pt = await newConsolePage(browser, 'pt-BR', cspViolations);
    await signIn(pt);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await receiver?.close();
  });

  it('names the actor by name and e-mail and says the action in English', async () => {
    await go(en, 'audit');
    const row = en.locator('#audit tbody tr', { hasText: 'Added a person' });
    await expect.poll(() => row.count(), POLL).toBeGreaterThan(0);
    const text = await row.first().innerText();
    expect(text).toContain('Olga Owner');
    expect(text).toContain(org.email);
    expect(text).toMatch(/Person\s/);
    // The table scrolls by keyboard: its wrapper takes focus and is named.
    const wrap = en.locator('.table-wrap', { has: en.locator('#audit') });
    expect(await wrap.getAttribute('tabindex')).toBe('0');
    expect(await wrap.getAttribute('aria-label')).toBe('Audit log');
  });

  it('keeps the action filter in the address: a reload shows the same filtered list', async () => {
    await go(en, 'audit');
    await en.selectOption('#audit-action', 'person.');
    await en.click('form[aria-label=Filter] button[type=submit]');
    await expect.poll(() => en.url(), POLL).toContain('action=person.');
    await en.reload();
    await en.locator('#audit').waitFor();
    expect(await en.locator('#audit-action').inputValue()).toBe('person.');
    await expect.poll(() => en.locator('#audit tbody tr').count(), POLL).toBeGreaterThan(0);
    const codes = await en.locator('#audit tbody td:nth-child(2) code').allInnerTexts();
    expect(codes.length).toBeGreaterThan(0);
    expect(codes.every((c) => c.startsWith('person.'))).toBe(true);
    expect(await en.locator('#audit tbody').innerText()).not.toContain('Signed in');
    await shot(en, 'audit-readable-en');
  });

  it('says the actions in Brazilian Portuguese', async () => {
    await go(pt, 'audit');
    const row = pt.locator('#audit tbody tr', { hasText: 'Cadastrou uma pessoa' });
    await expect.poll(() => row.count(), POLL).toBeGreaterThan(0);
    expect(await row.first().innerText()).toContain('Olga Owner');
    expect(await pt.locator('#audit tbody').innerText()).toContain('Entrou no console');
    await shot(pt, 'audit-readable-pt-BR');
  });

  it('shows a new delivery without a reload, opens it with the body sent and each attempt, and retries it now', async () => {
    await go(en, 'integrations');
    await en.locator('#deliveries').waitFor();
    receiver.respondWith = 500;
    receiver.respondBody = () => '{"error":"database down"}';
    try {
      // Queued behind the page's back: only the page's own refresh can show it.
      const queued = await app.request('POST', '/v1/admin/webhooks/test', { headers: org.headers });
      expect(queued.status, queued.text).toBe(202);
      const row = en.locator('#deliveries tbody tr', { hasText: 'webhook.test' });
      await expect.poll(() => row.count(), POLL).toBe(1);
      await expect.poll(() => row.innerText(), POLL).toContain('HTTP 500');
      await row.getByRole('button', { name: /^Details/ }).click();
      const dialog = en.locator('dialog#delivery[open]');
      await dialog.waitFor();
      const payload = JSON.parse(await dialog.locator('#delivery-payload').innerText());
      const sent = receiver.received.find((r) => r.headers['x-service-delivery-id'] === queued.body.id)!;
      expect(payload).toEqual(JSON.parse(sent.rawBody));
      expect(payload).toMatchObject({ event: 'webhook.test', tenantId: org.tenantId });
      await expect.poll(() => dialog.locator('#delivery-attempts').innerText(), POLL).toContain('HTTP 500');
      expect(await dialog.locator('#delivery-attempts').innerText()).toContain('database down');
      await screen(en, 'integrations-delivery-en');
      receiver.respondWith = 200;
      receiver.respondBody = () => 'ok';
      // Waiting for its next retry (1 s, then 5 s): "Retry now" sends it at once.
      await dialog.locator('#retry-now').click({ timeout: 15_000 });
      await expect.poll(() => dialog.locator('#delivery-attempts').innerText(), POLL).toContain('HTTP 200');
      await expect.poll(() => dialog.innerText(), POLL).toContain('delivered');
      await dialog.getByRole('button', { name: 'Close' }).click();
    } finally {
      receiver.respondWith = 200;
      receiver.respondBody = null;
    }
  });

  it('shows the delivery log and a delivery in Brazilian Portuguese', async () => {
    await go(pt, 'integrations');
    const row = pt.locator('#deliveries tbody tr', { hasText: 'webhook.test' });
    await expect.poll(() => row.count(), POLL).toBeGreaterThan(0);
    expect(await pt.locator('#deliveries').innerText()).toContain('entregue');
    await row
      .first()
      .getByRole('button', { name: /^Detalhes/ })
      .click();
    const dialog = pt.locator('dialog#delivery[open]');
    await expect.poll(() => dialog.innerText(), POLL).toContain('Conteúdo (o corpo exato enviado)');
    expect(await dialog.innerText()).toContain('Tentativas');
    await screen(pt, 'integrations-delivery-pt-BR');
    await dialog.getByRole('button', { name: 'Fechar' }).click();
    expect(cspViolations).toEqual([]);
  });
});
