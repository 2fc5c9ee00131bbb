// The console's account and administration screens in real Chromium against the real cloud, each
// checked from outside through the API: two-step verification turned on from the QR code's secret
// (login then asks for a code) and off again; an application created with scopes, its key rotated (the
// old one refused at once) and revoked; one guest edited and another removed (both read back through
// the API). Screenshots go to test/console/screenshots/ (rewritten
// only with UPDATE_SCREENSHOTS=1).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { HAS_CHROMIUM, launchChromium } from '../support/chromium.js';
import {
  bearer,
  login,
  newTenant,
  PASSWORD,
  ShiftedClock,
  totp,
  TOTP_STEP_MS,
  totpCodes,
} from '../support/identity.js';
import { goTo, newConsolePage, shot, signInWith } from './support.js';

let app: TestApp;
let browser: Browser;
let page: Page;
const cspViolations: string[] = [];
const org = { email: '', tenantId: '' };
/** The service's clock: the three TOTP steps of the MFA test are taken, not waited for. */
const clock = new ShiftedClock();

const go = (p: Page, hash: string) => goTo(p, app.url, hash);

/** Signs in through the form with the password (the owner starts without MFA). */
async function signIn(p: Page) {
  await signInWith(p, app.url, org.email);
}

const apiLogin = () =>
  app.request('POST', '/v1/auth/login', { body: { email: org.email, password: PASSWORD } });

describe.skipIf(!HAS_CHROMIUM)('admin console: account and administration screens', () => {
  beforeAll(async () => {
    app = await createTestApp({ clock });
    browser = await launchChromium();
    const tenant = await newTenant(app);
    Object.assign(org, { email: tenant.adminEmail, tenantId: tenant.tenantId });
    page = await newConsolePage(browser, 'en', cspViolations);
    await signIn(page);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('turns MFA on from the QR code’s secret (a wrong code refused with its code), and login then asks for a code', async () => {
    await go(page, 'settings');
    await expect.poll(() => page.locator('#mfa-state').innerText()).toMatch(/^off\s/);
    await page.click('#mfa-start');
    const secret = (await page.locator('#mfa-secret').innerText()).trim();
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    const qr = page.locator('#mfa img.qr');
    expect(await qr.evaluate((img: { naturalWidth: number }) => img.naturalWidth)).toBeGreaterThan(0);
    const code = totpCodes(secret, clock);
    const first = await code();
    // A code that is none of the accepted ones (this step's, the one before and the one after).
    const around = await Promise.all(
      [-1, 0, 1].map((d) => totp(secret, new Date(clock.now().getTime() + d * TOTP_STEP_MS))),
    );
    const wrong = ['000000', '111111', '222222', '333333'].find((c) => !around.includes(c))!;
    await page.fill('#mfa-enable-code', wrong);
    await page.click('#mfa-enable');
    await expect
      .poll(() => page.locator('#mfa [role=alert] .error-message').innerText())
      .toBe('That code is not right. Enter the current 6-digit code from your authenticator app.');
    expect(await page.locator('#mfa [role=alert]').getAttribute('data-code')).toBe('invalid_mfa_code');
    await shot(page, 'settings-mfa-setup-en');
    // Enter in the code field submits it (the form works from the keyboard).
    await page.fill('#mfa-enable-code', first);
    await page.press('#mfa-enable-code', 'Enter');
    await expect.poll(() => page.locator('#mfa-state').innerText()).toMatch(/^on\s/);
    expect(await page.locator('#mfa [role=status]').innerText()).toContain('Two-step verification is on');
    // The secret is gone from the page once MFA is on; the ten recovery codes are shown this once.
    expect(await page.content()).not.toContain(secret);
    await expect.poll(() => page.locator('#recovery-codes ol.recovery-codes li').count()).toBe(10);
    await shot(page, 'settings-mfa-on-en');
    await page.click('#recovery-saved');
    await page.locator('#recovery-codes').waitFor({ state: 'detached' });

    const login = await apiLogin();
    expect(login.body, login.text).toMatchObject({ mfaRequired: true });
    expect(login.body.accessToken).toBeUndefined();
    const verified = await app.request('POST', '/v1/auth/mfa/verify', {
      body: { mfaTicket: login.body.mfaTicket, code: await code() },
    });
    expect(verified.status, verified.text).toBe(200);
    expect(verified.body.accessToken).toEqual(expect.any(String));

    // Off again with a current code: login answers a session at once.
    await page.fill('#mfa-disable-code', await code());
    await page.click('#mfa-disable');
    await expect.poll(() => page.locator('#mfa-state').innerText(), { timeout: 10_000 }).toMatch(/^off\s/);
    const plain = await apiLogin();
    expect(plain.status, plain.text).toBe(200);
    expect(plain.body.accessToken).toEqual(expect.any(String));
  }, 90_000);

  it('creates an application with scopes, rotates its key (the old one refused at once) and revokes the new one', async () => {
    await go(page, 'integrations');
    await page.fill('#app-name', 'Door sync');
    await page.check('#app-scopes input[value="persons:read"]');
    await page.check('#app-scopes input[value="checkin"]');
    await page.click('#create-app');
    const first = await page.locator('#new-key-value').innerText();
    expect(first).toMatch(/^pk_live_[\w-]{43}$/);
    const call = (key: string, route: string) =>
      fetch(`${app.url}${route}`, { headers: { authorization: `Bearer ${key}` } });
    const settings = `/v1/tenants/${org.tenantId}/settings`;
    expect((await call(first, '/v1/persons')).status).toBe(200);
    const outside = await call(first, settings);
    expect(outside.status).toBe(403);
    expect(((await outside.json()) as { code: string }).code).toBe('insufficient_scope');
    await page.click('#dismiss-key');

    const row = page.locator('#applications tbody tr', { hasText: 'Door sync' });
    const keyItem = (key: string) => row.locator('li', { hasText: `${key.slice(0, 12)}…${key.slice(-4)}` });
    await expect.poll(() => keyItem(first).innerText()).toMatch(/active\s+persons:read, checkin/);
    expect(await keyItem(first).innerText()).toMatch(/created \d.* · last used /);

    await keyItem(first).getByRole('button', { name: 'Rotate' }).click();
    const dialog = page.locator('dialog[open]');
    expect(await dialog.innerText()).toMatch(/stops working at once, with no grace period/);
    await dialog.getByRole('button', { name: 'Rotate' }).click();
    await expect
      .poll(() => page.locator('#new-key').innerText())
      .toContain('The key it replaces no longer works.');
    const second = await page.locator('#new-key-value').innerText();
    expect(second).not.toBe(first);
    await page.click('#copy-key');
    await shot(page, 'integrations-rotated-en');
    // The new key holds the old one's scopes; the old one is refused from now on.
    expect((await call(second, '/v1/persons')).status).toBe(200);
    expect((await call(second, settings)).status).toBe(403);
    const old = await call(first, '/v1/persons');
    expect(old.status).toBe(401);
    expect(((await old.json()) as { code: string }).code).toBe('invalid_api_key');
    await page.click('#dismiss-key');
    await expect.poll(() => keyItem(first).innerText()).toMatch(/rotated[\s\S]*stopped \d/);
    expect(await keyItem(first).getByRole('button').count()).toBe(0);

    await keyItem(second).getByRole('button', { name: 'Revoke' }).click();
    expect(await dialog.innerText()).toMatch(/every integration using it is refused \(401\)/);
    await shot(page, 'integrations-revoke-en');
    // Escape cancels: the key still works.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect((await call(second, '/v1/persons')).status).toBe(200);
    await keyItem(second).getByRole('button', { name: 'Revoke' }).click();
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => keyItem(second).innerText()).toMatch(/revoked/);
    expect((await call(second, '/v1/persons')).status).toBe(401);
  });

  it('edits one guest (an emptied field cleared, the status set) and removes another after a confirmation', async () => {
    const { token } = await login(app, org.email);
    const headers = bearer(token);
    const created = await app.request('POST', '/v1/events', { headers, body: { name: 'Board meeting' } });
    expect(created.status, created.text).toBe(201);
    const guestsPath = `/v1/events/${created.body.id}/guests`;
    for (const body of [
      { name: 'Rita Lobo', email: 'rita@example.com', document: '111' },
      { name: 'Joao Reis', email: 'joao@example.com', document: '222' },
    ]) {
      const guest = await app.request('POST', guestsPath, { headers, body });
      expect(guest.status, guest.text).toBe(201);
    }
    await go(page, 'events');
    await page.locator('#events tbody tr', { hasText: 'Board meeting' }).getByRole('button').click();
    const rita = page.locator('#guests tbody tr', { hasText: 'Rita Lobo' });
    await rita.getByRole('button', { name: 'Edit' }).click();
    await expect.poll(() => page.evaluate('document.activeElement.id')).toBe('guest-name');
    await page.fill('#guest-name', 'Rita Lobo Antunes');
    await page.fill('#guest-email', 'rita.antunes@example.com');
    await page.fill('#guest-document', '');
    await page.selectOption('#guest-status', 'confirmed');
    await shot(page, 'event-guest-edit-en');
    await page.click('#save-guest');
    await page.locator('#guest-form').waitFor({ state: 'detached' });
    await expect
      .poll(() => page.locator('#guests').innerText())
      .toMatch(/Rita Lobo Antunes\s+rita\.antunes@example\.com\s+confirmed/);
    await expect.poll(() => page.locator('#attendance').innerText()).toContain('confirmed: 1');
    const edited = await app.request('GET', guestsPath, { headers });
    expect(edited.body.items.find((g: { name: string }) => g.name === 'Rita Lobo Antunes')).toMatchObject({
      email: 'rita.antunes@example.com',
      document: null,
      status: 'confirmed',
    });

    const joao = page.locator('#guests tbody tr', { hasText: 'Joao Reis' });
    await joao.getByRole('button', { name: 'Remove' }).click();
    const dialog = page.locator('dialog[open]');
    expect(await dialog.innerText()).toMatch(/e-mail, phone, document and birth date are erased/);
    await shot(page, 'event-guest-remove-en');
    await dialog.getByRole('button', { name: 'Remove' }).click();
    await expect.poll(() => page.locator('#guests').innerText()).not.toContain('Joao Reis');
    const after = await app.request('GET', guestsPath, { headers });
    expect(after.body.items.map((g: { name: string }) => g.name)).toEqual(['Rita Lobo Antunes']);
  });

  it('shows the MFA set-up, the API keys and a guest’s form in Brazilian Portuguese', async () => {
    const pt = await newConsolePage(browser, 'pt-BR', cspViolations);
    await signIn(pt);
    await go(pt, 'settings');
    await expect.poll(() => pt.locator('#mfa-state').innerText()).toMatch(/^desligada\s/);
    await pt.getByRole('button', { name: 'Ligar a verificação em duas etapas' }).click();
    await pt.locator('#mfa-secret').waitFor();
    expect(await pt.locator('#mfa').innerText()).toContain('Escaneie este código QR');
    await shot(pt, 'settings-mfa-pt-BR');
    await go(pt, 'integrations');
    const row = pt.locator('#applications tbody tr', { hasText: 'Door sync' });
    await expect.poll(() => row.innerText()).toMatch(/substituída[\s\S]*revogada/);
    expect(await pt.locator('#app-scopes legend').innerText()).toBe('Escopos da primeira chave');
    await shot(pt, 'integrations-keys-pt-BR');
    await go(pt, 'events');
    await pt.locator('#events tbody tr', { hasText: 'Board meeting' }).getByRole('button').click();
    await pt
      .locator('#guests tbody tr', { hasText: 'Rita Lobo' })
      .getByRole('button', { name: 'Editar' })
      .click();
    expect(await pt.locator('#guest-status option:checked').innerText()).toBe('confirmado');
    await shot(pt, 'event-guest-edit-pt-BR');
    await pt.context().close();
    expect(cspViolations).toEqual([]);
  });
});
