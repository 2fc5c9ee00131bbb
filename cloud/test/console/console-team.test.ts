// The console's Team page in real Chromium against the real cloud and a real SMTP server: the owner
// invites an operator from the dialog, the mail's link is opened in another browser, a name and password
// set, and the new operator is signed in and sees only operator pages; the owner changes a role and
// deactivates someone after a confirmation (their session ends). Screenshots of the page, the invite
// dialog, the acceptance page and the confirmation, in English and Brazilian Portuguese, on a laptop and
// a 390 px phone, go to test/console/screenshots/ (only with UPDATE_SCREENSHOTS=1).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMail } from '../portal/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { HAS_CHROMIUM, launchChromium } from '../support/chromium.js';
import { bearer, login, newTenant } from '../support/identity.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp.js';
import { newConsolePage, screen, shot, signInWith } from './support.js';

const PHONE = { width: 390, height: 844 };
const NEW_PASSWORD = 'a passphrase of my own';
const POLL = { timeout: 15_000 };

let app: TestApp;
let smtp: SmtpSink;
let browser: Browser;
const cspViolations: string[] = [];
const org = { email: '', tenantId: '', headers: {} as Record<string, string> };

async function signedIn(locale: string, viewport?: { width: number; height: number }): Promise<Page> {
  const p = await newConsolePage(browser, locale, cspViolations, viewport);
  await signInWith(p, app.url, org.email);
  return p;
}

async function openTeam(p: Page): Promise<void> {
  await p.goto(`${app.url}/console#/team`);
  await p.locator('#team tbody tr').first().waitFor();
}

/** The acceptance page's address from the newest invitation mail to `email`, on this test's server. */
async function mailedLink(email: string): Promise<{ url: string; mail: string }> {
  const mail = await waitForMail(smtp, email, /accept-invite\?token=/);
  const hash = /#\/accept-invite\?token=inv_[A-Za-z0-9_-]+/.exec(mail)![0];
  return { url: `${app.url}/console${hash}`, mail };
}

const row = (p: Page, email: string) => p.locator(`#team tbody tr[data-member="${email}"]`);
const navLinks = (p: Page) =>
  p.locator('nav[aria-label=Console] a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));

describe.skipIf(!HAS_CHROMIUM)('admin console: the team', () => {
  beforeAll(async () => {
    smtp = await startSmtpSink();
    app = await createTestApp({ env: { SMTP_URL: smtp.url } });
    browser = await launchChromium();
    const tenant = await newTenant(app);
    const { token } = await login(app, tenant.adminEmail);
    Object.assign(org, { email: tenant.adminEmail, tenantId: tenant.tenantId, headers: bearer(token) });
    // A team of a few: an admin who joined, an operator still invited.
    for (const [email, role, name] of [
      ['bruno.admin@example.com', 'admin', 'Bruno Costa'],
      ['carla.door@example.com', 'operator', null],
    ] as const) {
      const res = await app.request('POST', '/v1/team/members', {
        headers: org.headers,
        body: { email, role },
      });
      expect(res.status, res.text).toBe(201);
      const token = /token=(inv_[A-Za-z0-9_-]+)/.exec((await mailedLink(email)).url)![1];
      if (name) {
        const accepted = await app.request('POST', '/v1/team/invitations/accept', {
          body: { token, name, password: NEW_PASSWORD },
        });
        expect(accepted.status, accepted.text).toBe(200);
      }
    }
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await smtp?.close();
  });

  it('invites an operator who opens the mailed link, sets a password and sees only operator pages', async () => {
    const p = await signedIn('en');
    await openTeam(p);
    expect(await row(p, 'carla.door@example.com').locator('.member-status').innerText()).toContain('invited');
    await shot(p, 'team-en');

    await p.click('#invite-member');
    await p.locator('#invite-email').waitFor();
    await expect.poll(() => p.evaluate<string>('document.activeElement?.id ?? ""')).toBe('invite-email');
    await p.fill('#invite-email', 'dora.ops@example.com');
    await p.selectOption('#invite-role', 'operator');
    await screen(p, 'team-invite-en');
    await p.click('#invite-send');
    await expect
      .poll(
        () =>
          p
            .locator('.notice')
            .innerText()
            .catch(() => ''),
        POLL,
      )
      .toContain('dora.ops@example.com');
    await row(p, 'dora.ops@example.com').waitFor();

    const { url, mail } = await mailedLink('dora.ops@example.com');
    expect(mail).toContain('as an operator');
    const invitee = await newConsolePage(browser, 'en', cspViolations);
    await invitee.goto(url);
    await invitee.locator('#accept-name').waitFor();
    expect(await invitee.locator('#accept-intro').innerText()).toContain('dora.ops@example.com');
    await invitee.fill('#accept-name', 'Dora Lima');
    await invitee.fill('#accept-password', NEW_PASSWORD);
    await invitee.fill('#accept-again', 'not the same passphrase');
    await invitee.click('#accept-save');
    await invitee.locator('[role=alert]').waitFor();
    expect(await invitee.locator('[role=alert]').innerText()).toContain('not the same');
    await invitee.fill('#accept-again', NEW_PASSWORD);
    await shot(invitee, 'team-accept-en');
    await invitee.click('#accept-save');
    await invitee.locator('nav[aria-label=Console]').waitFor({ state: 'attached', timeout: 15_000 });
    expect(await navLinks(invitee)).toEqual(['#/today', '#/door', '#/checkins', '#/persons', '#/events']);
    expect(await invitee.locator('.who').innerText()).toContain('dora.ops@example.com');

    // The link worked once.
    await invitee.goto(url);
    await invitee.reload();
    await expect
      .poll(
        () =>
          invitee
            .locator('[role=alert]')
            .getAttribute('data-code')
            .catch(() => null),
        POLL,
      )
      .toBe('invitation_invalid');

    await p.reload();
    await p.locator('#team tbody tr').first().waitFor();
    await expect
      .poll(() => row(p, 'dora.ops@example.com').locator('.member-status').innerText(), POLL)
      .toContain('active');
    expect(await row(p, 'dora.ops@example.com').locator('.member-name').innerText()).toContain('Dora Lima');
    await invitee.context().close();
    await p.context().close();
    expect(cspViolations).toEqual([]);
  }, 90_000);

  it('changes a role and deactivates after a confirmation; the deactivated member’s session ends', async () => {
    const bruno = await login(app, 'bruno.admin@example.com', NEW_PASSWORD);
    expect(bruno.res.status).toBe(200);
    const p = await signedIn('en');
    await openTeam(p);

    await p.getByRole('button', { name: 'Change role: Bruno Costa' }).click();
    await p.locator('#role-choice').waitFor();
    await p.selectOption('#role-choice', 'operator');
    await p.click('#role-save');
    await expect
      .poll(() => row(p, 'bruno.admin@example.com').locator('.member-role').innerText(), POLL)
      .toBe('Operator');
    expect(await p.locator('.notice').innerText()).toContain('Bruno Costa is now Operator');

    await p.getByRole('button', { name: 'Deactivate: Bruno Costa' }).click();
    await p.locator('#confirm-title').waitFor();
    expect(await p.locator('#confirm-text').innerText()).toContain('can no longer sign in');
    await screen(p, 'team-deactivate-en');
    await p.locator('dialog[open] button.contrast').click();
    await expect
      .poll(() => row(p, 'bruno.admin@example.com').locator('.member-status').innerText(), POLL)
      .toContain('deactivated');
    expect(await p.evaluate<string>('document.activeElement?.id ?? ""')).toBe('invite-member');

    // Bruno's session (from before the role change) and his password no longer let him in.
    expect((await app.request('GET', '/v1/auth/me', { headers: bearer(bruno.token) })).status).toBe(401);
    expect((await login(app, 'bruno.admin@example.com', NEW_PASSWORD)).res.status).toBe(401);

    await p.getByRole('button', { name: 'Reactivate: Bruno Costa' }).click();
    await p.locator('dialog[open] button.contrast').click();
    await expect
      .poll(() => row(p, 'bruno.admin@example.com').locator('.member-status').innerText(), POLL)
      .toContain('active');
    expect((await login(app, 'bruno.admin@example.com', NEW_PASSWORD)).res.status).toBe(200);
    await p.context().close();
  }, 90_000);

  it('speaks Brazilian Portuguese on the page, in the mail and on the acceptance page, laptop and phone', async () => {
    const p = await signedIn('pt-BR');
    await openTeam(p);
    await shot(p, 'team-pt-BR');
    await p.click('#invite-member');
    await p.locator('#invite-email').waitFor();
    await p.fill('#invite-email', 'eduardo@example.com');
    await p.selectOption('#invite-role', 'admin');
    await screen(p, 'team-invite-pt-BR');
    await p.click('#invite-send');
    await row(p, 'eduardo@example.com').waitFor();
    await p.context().close();

    const phone = await signedIn('pt-BR', PHONE);
    await openTeam(phone);
    expect(await phone.locator('h1').innerText()).toBe('Equipe');
    await shot(phone, 'team-pt-BR-390');
    await phone.context().close();
    const enPhone = await signedIn('en', PHONE);
    await openTeam(enPhone);
    await shot(enPhone, 'team-en-390');
    await enPhone.context().close();

    const { url, mail } = await mailedLink('eduardo@example.com');
    expect(mail).toContain('Convite para a equipe');
    expect(mail).toContain('como administrador(a)');
    expect(mail).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:/);
    const invitee = await newConsolePage(browser, 'pt-BR', cspViolations, PHONE);
    await invitee.goto(url);
    await invitee.locator('#accept-name').waitFor();
    expect(await invitee.locator('h1').innerText()).toContain('Entrar na equipe de');
    await invitee.fill('#accept-name', 'Eduardo Nunes');
    await invitee.fill('#accept-password', NEW_PASSWORD);
    await invitee.fill('#accept-again', NEW_PASSWORD);
    await shot(invitee, 'team-accept-pt-BR-390');
    await invitee.click('#accept-save');
    await invitee.locator('nav[aria-label=Console]').waitFor({ state: 'attached', timeout: 15_000 });
    expect(await navLinks(invitee)).toContain('#/team');
    await invitee.context().close();
    expect(cspViolations).toEqual([]);
  }, 90_000);
});
