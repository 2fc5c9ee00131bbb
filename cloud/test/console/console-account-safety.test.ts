// Account safety in real Chromium against the real cloud and a real SMTP sink: "Forgot your password?"
// -> the mailed link -> a new password -> signed in with it; turning MFA on shows ten recovery codes once;
// signing in with a recovery code in place of the authenticator; an admin held at the MFA setup their
// tenant requires. English and Brazilian Portuguese; screenshots go to test/console/screenshots/ only
// with UPDATE_SCREENSHOTS=1.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import { hashPassword } from '../../src/modules/auth/passwords.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { HAS_CHROMIUM, launchChromium } from '../support/chromium.js';
import { bearer, login, newTenant, PASSWORD, totpCodes } from '../support/identity.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp.js';
import { waitForMail } from '../portal/support.js';
import { goTo, newConsolePage, shot } from './support.js';

let app: TestApp;
let browser: Browser;
let smtp: SmtpSink;
const cspViolations: string[] = [];
const POLL = { timeout: 15_000 };

/** The link of the latest reset mail to `email`, on this test's server. */
async function resetLinkFor(email: string): Promise<string> {
  const mail = await waitForMail(smtp, email, /reset-password\?token=/, 15_000);
  const link = /(https?:\/\/\S+\/console#\/reset-password\?token=\S+)/.exec(mail)![1]!;
  const url = new URL(link);
  return `${app.url}${url.pathname}${url.hash}`;
}

async function passwordStep(p: Page, email: string, password: string) {
  await p.goto(`${app.url}/console`);
  await p.fill('#email', email);
  await p.fill('#password', password);
  await p.click('button[type=submit]');
}

describe.skipIf(!HAS_CHROMIUM)('admin console: account safety', () => {
  beforeAll(async () => {
    smtp = await startSmtpSink();
    app = await createTestApp({ env: { SMTP_URL: smtp.url } });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await smtp?.close();
  });

  for (const locale of ['en', 'pt-BR'] as const) {
    it(`forgot password -> mailed link -> new password -> signed in (${locale})`, async () => {
      const tenant = await newTenant(app);
      const email = tenant.adminEmail;
      const p = await newConsolePage(browser, locale, cspViolations);
      await p.goto(`${app.url}/console`);
      await p.click('#forgot-password');
      await p.locator('#forgot-email').waitFor();
      await shot(p, `forgot-password-${locale}`);
      await p.fill('#forgot-email', email);
      await p.click('#forgot-form button[type=submit]');
      await expect.poll(() => p.locator('[role=status]').innerText(), POLL).toContain(email);
      await shot(p, `forgot-password-sent-${locale}`);

      const link = await resetLinkFor(email);
      const q = await newConsolePage(browser, locale, cspViolations);
      await q.goto(link);
      await q.locator('#new-password').waitFor();
      // Two different passwords are caught before anything is sent.
      await q.fill('#new-password', 'a long new passphrase');
      await q.fill('#new-password-again', 'another long passphrase');
      await q.click('#reset-form button[type=submit]');
      await expect
        .poll(() => q.locator('[role=alert] .error-message').innerText(), POLL)
        .toBe(locale === 'en' ? 'The two passwords are not the same.' : 'As duas senhas não são iguais.');
      await q.fill('#new-password-again', 'a long new passphrase');
      // Typing again clears the refusal.
      await expect.poll(() => q.locator('[role=alert]').count(), POLL).toBe(0);
      await shot(q, `reset-password-${locale}`);
      await q.click('#reset-form button[type=submit]');
      await q.locator('[role=status]').waitFor(POLL);
      await shot(q, `reset-password-done-${locale}`);
      // The same link again: refused in the page's language.
      // The sign-in shown first: two hash changes in a row can reach the page after both, each handler
      // then reading the link, and the page (already on it) would not change.
      await q.goto(`${app.url}/console#/`);
      await q.locator('#email').waitFor();
      await q.goto(link);
      await q.fill('#new-password', 'yet another passphrase');
      await q.fill('#new-password-again', 'yet another passphrase');
      await q.click('#reset-form button[type=submit]');
      await expect
        .poll(() => q.locator('[role=alert]').getAttribute('data-code'), POLL)
        .toBe('invalid_reset_token');

      await q.click('#back-to-sign-in');
      await q.locator('#email').waitFor();
      await q.fill('#email', email);
      await q.fill('#password', 'a long new passphrase');
      await q.click('button[type=submit]');
      // A run under load once timed out here: the page's words say what it showed instead.
      await q
        .locator('nav[aria-label=Console]')
        .waitFor({ state: 'attached', ...POLL })
        .catch(async (e: Error) => {
          throw new Error(`${e.message}\nthe page showed: ${await q.locator('body').innerText()}`);
        });
      expect(await q.locator('.who').innerText()).toContain(email);
      await p.context().close();
      await q.context().close();
    }, 90_000);
  }

  it('turning MFA on in Settings shows ten recovery codes once, then signs in with one of them (en, pt-BR)', async () => {
    const tenant = await newTenant(app);
    const email = tenant.adminEmail;
    const en = await newConsolePage(browser, 'en', cspViolations);
    await passwordStep(en, email, PASSWORD);
    await en.locator('nav[aria-label=Console]').waitFor({ state: 'attached' });
    await goTo(en, app.url, 'settings');
    await en.click('#mfa-start');
    const secret = (await en.locator('#mfa-secret').innerText()).trim();
    const nextCode = totpCodes(secret);
    await en.fill('#mfa-enable-code', await nextCode());
    await en.click('#mfa-enable');
    const codes = en.locator('#recovery-codes li');
    await expect.poll(() => codes.count(), POLL).toBe(10);
    const shown = (await codes.allInnerTexts()).map((c) => c.trim());
    expect(new Set(shown).size).toBe(10);
    await en.locator('#recovery-codes').scrollIntoViewIfNeeded();
    await shot(en, 'settings-recovery-codes-en');
    await en.click('#recovery-saved');
    // Shown once: gone from the page, only the count is left.
    await expect
      .poll(() => en.locator('#recovery-left').innerText(), POLL)
      .toBe('Recovery codes left: 10 of 10.');
    expect(await en.content()).not.toContain(shown[0]!);
    await en.context().close();

    for (const [locale, code] of [
      ['en', shown[0]!],
      ['pt-BR', shown[1]!.toUpperCase()],
    ] as const) {
      const p = await newConsolePage(browser, locale, cspViolations);
      await passwordStep(p, email, PASSWORD);
      await p.locator('#mfa-code').waitFor();
      await p.click('#use-recovery-code');
      await p.locator('#recovery-code').waitFor();
      // The field takes the focus once the step has rendered (an effect after the paint), not at once.
      await expect.poll(() => p.evaluate('document.activeElement.id')).toBe('recovery-code');
      await p.fill('#recovery-code', code);
      await shot(p, `sign-in-recovery-code-${locale}`);
      await p.click('button[type=submit]');
      await p.locator('nav[aria-label=Console]').waitFor({ state: 'attached', ...POLL });
      // The mail follows the console's language, sent with the sign-in.
      await waitForMail(
        smtp,
        email,
        locale === 'en' ? /recovery code was just used/ : /código de recuperação acabou de ser usado/,
      );
      await p.context().close();
    }
    // A used code is refused with the console's sentence.
    const again = await newConsolePage(browser, 'en', cspViolations);
    await passwordStep(again, email, PASSWORD);
    await again.click('#use-recovery-code');
    await again.fill('#recovery-code', shown[0]!);
    await again.click('button[type=submit]');
    await expect
      .poll(() => again.locator('[role=alert]').getAttribute('data-code'), POLL)
      .toBe('invalid_mfa_code');
    await again.context().close();
  }, 120_000);

  it('takes an admin without MFA to the setup their tenant requires, then to the console (pt-BR)', async () => {
    const tenant = await newTenant(app);
    const owner = await login(app, tenant.adminEmail);
    const headers = bearer(owner.token);
    const setup = await app.request('POST', '/v1/auth/mfa/setup', { headers });
    const ownerCode = totpCodes(setup.body.secret);
    expect(
      (await app.request('POST', '/v1/auth/mfa/enable', { headers, body: { code: await ownerCode() } }))
        .status,
    ).toBe(200);
    const set = await app.request('PATCH', `/v1/tenants/${tenant.tenantId}/settings`, {
      headers,
      body: { requireMfaForAdmins: true },
    });
    expect(set.status, set.text).toBe(200);
    const adminEmail = `admin-${Date.now()}@example.com`;
    await app.deps.db.prisma.user.create({
      data: {
        id: newId(),
        tenantId: tenant.tenantId,
        email: adminEmail,
        passwordHash: await hashPassword(PASSWORD),
        role: 'admin',
      },
    });

    const p = await newConsolePage(browser, 'pt-BR', cspViolations);
    await passwordStep(p, adminEmail, PASSWORD);
    await p.locator('#mfa-required-intro').waitFor(POLL);
    expect(await p.locator('nav[aria-label=Console]').count()).toBe(0);
    await p.click('#mfa-start');
    await p.locator('#mfa-secret').waitFor();
    await shot(p, 'mfa-required-setup-pt-BR');
    const code = totpCodes((await p.locator('#mfa-secret').innerText()).trim());
    await p.fill('#mfa-enable-code', await code());
    await p.click('#mfa-enable');
    await p.locator('#recovery-codes').waitFor(POLL);
    await shot(p, 'mfa-required-codes-pt-BR');
    await p.click('#recovery-saved');
    await p.locator('nav[aria-label=Console]').waitFor({ state: 'attached', ...POLL });
    await p.context().close();
  }, 90_000);

  it('reports no Content-Security-Policy violation', () => {
    expect(cspViolations).toEqual([]);
  });
});
