// The portal for an address found only on guest lists, in real Chromium on a phone-sized screen: the
// sign-in link read from the SMTP sink, then each organisation listed apart with its guest entries and
// check-ins, in Brazilian Portuguese and English. Screenshots go to test/portal/screenshots/.
import { fileURLToPath } from 'node:url';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, launchChromium, screenshot } from '../support/chromium.js';
import { integratorOf } from '../persons/support.js';
import { adminHeaders, PUBLIC_URL, startPortalApp, waitForMail, type PortalApp } from './support.js';

// The committed screenshots are rewritten only when asked (UPDATE_SCREENSHOTS=1), as in pages.test.ts.
const SHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));
const EMAIL = 'lia.guest@example.com';

describe.skipIf(!HAS_CHROMIUM)('the portal of a guest-only address, in Chromium', () => {
  let app: PortalApp;
  let browser: Browser;

  /** A tenant named `name` with one event (opened, and the guest checked in, when asked). */
  async function guestAt(name: string, event: Record<string, unknown>, checkIn: boolean) {
    const org = await integratorOf(app);
    await app.deps.db.prisma.tenant.update({ where: { id: org.tenantId }, data: { name } });
    const headers = await adminHeaders(app, org);
    const created = await app.request('POST', '/v1/events', { headers, body: event });
    expect(created.status, created.text).toBe(201);
    for (const status of checkIn ? ['published', 'open'] : ['published']) {
      const res = await app.request('PATCH', `/v1/events/${created.body.id}/status`, {
        headers,
        body: { status },
      });
      expect(res.status, res.text).toBe(200);
    }
    const guest = await app.request('POST', `/v1/events/${created.body.id}/guests`, {
      headers,
      body: { name: 'Lia Guest', email: EMAIL },
    });
    expect(guest.status, guest.text).toBe(201);
    // Another guest of the same list: never shown to Lia.
    await app.request('POST', `/v1/events/${created.body.id}/guests`, {
      headers,
      body: { name: 'Zed Stranger', email: 'zed@example.com' },
    });
    if (checkIn) {
      const res = await app.request('POST', '/v1/checkin/manual', {
        headers,
        body: { guestId: guest.body.id, eventId: created.body.id },
      });
      expect(res.status, res.text).toBe(200);
    }
  }

  beforeAll(async () => {
    app = await startPortalApp();
    await guestAt(
      'Casa de Shows Aurora',
      {
        name: 'Noite de Jazz',
        startsAt: '2026-12-12T22:00:00.000Z',
        endsAt: '2026-12-13T01:00:00.000Z',
        timeZone: 'America/Sao_Paulo',
      },
      true,
    );
    await guestAt('Feira do Livro', { name: 'Lançamento', startsAt: '2027-02-03T18:00:00.000Z' }, false);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  const shot = (page: Page, name: string) => screenshot(page, SHOTS, name, { fullPage: true });

  async function phone(lang: string): Promise<Page> {
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 1,
      locale: lang,
    });
    return context.newPage();
  }

  for (const [lang, sent, guestOnly, checkedIn] of [
    ['pt-BR', 'link de acesso está a caminho', 'Sem cadastro pessoal', 'check-in feito'],
    ['en', 'sign-in link is on its way', 'No personal record', 'checked in'],
  ] as const) {
    it(`signs in from the e-mailed link and lists each organisation apart (${lang})`, async () => {
      await app.deps.db.prisma.rateLimitBucket.deleteMany({ where: { key: { startsWith: 'portal-link:' } } });
      const page = await phone(lang);
      await page.goto(`${app.url}/portal?lang=${lang}`);
      await page.fill('#email', EMAIL);
      await page.click('#send-link');
      await page.getByText(sent).waitFor();
      const mail = await waitForMail(app.smtp, EMAIL, /portal\/login\?token=/);
      const link = /(https:\/\/\S+\/portal\/login\?token=\S+)/.exec(mail)![1]!;
      await page.goto(link.replace(PUBLIC_URL, app.url));
      await page.locator('#organisations article.org').first().waitFor();

      const orgs = page.locator('#organisations article.org');
      expect(await orgs.count()).toBe(2);
      const aurora = await orgs.nth(0).innerText();
      const feira = await orgs.nth(1).innerText();
      expect(aurora).toContain('Casa de Shows Aurora');
      expect(aurora).toContain(guestOnly);
      expect(aurora).toContain('Noite de Jazz');
      expect(aurora).toContain(checkedIn);
      expect(await orgs.nth(0).locator('.checkins li').count()).toBe(1);
      expect(feira).toContain('Feira do Livro');
      expect(feira).toContain('Lançamento');
      expect(feira).not.toContain('Noite de Jazz');
      expect(await orgs.nth(1).locator('.checkins li').count()).toBe(0);
      const all = await page.locator('main, body').first().innerText();
      expect(all).not.toContain('Zed');
      expect(all).not.toMatch(/score|pontua/i);
      await shot(page, `portal-guest-${lang}`);
      await page.context().close();
    }, 60_000);
  }
});
