// The check-in link's landing page over a rate limit, in real Chromium on a phone-sized screen: a 429
// is waited out as its Retry-After says, with a "please wait" that counts down, and tried again by
// the page itself, in English and Brazilian Portuguese. The app's clock is the test's, so the window
// ends when the test says. Screenshots go to test/portal/screenshots/.
import { fileURLToPath } from 'node:url';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, launchChromium, screenshot } from '../support/chromium.js';
import { adminOf, bearer, startApp, type IdentityApp } from '../support/identity.js';

// The committed screenshots are rewritten only when asked (UPDATE_SCREENSHOTS=1), as in pages.test.ts.
const SHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));

describe.skipIf(!HAS_CHROMIUM)('the check-in landing page under a rate limit, in Chromium', () => {
  let app: IdentityApp;
  let browser: Browser;
  let key: Record<string, string>;

  beforeAll(async () => {
    app = await startApp();
    const admin = await adminOf(app);
    const created = await app.request('POST', '/v1/applications', {
      headers: admin.headers,
      body: { name: 'organiser' },
    });
    key = bearer(created.body.apiKey.key);
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

  /**
   * A guest of a published event whose link has been tried 10 times (the doors were not open yet: 409,
   * counted all the same), so the next try is over the link's limit; then the doors open, and the
   * window has 2 seconds left.
   */
  /** The landing speaks the event's language, so each language's case has an event in it. */
  async function linkOverItsLimit(name: string, locale: string) {
    const event = await app.request('POST', '/v1/events', {
      headers: key,
      body: { name: 'Festa', branding: { locale } },
    });
    const status = (s: string) =>
      app.request('PATCH', `/v1/events/${event.body.id}/status`, { headers: key, body: { status: s } });
    expect((await status('published')).status).toBe(200);
    const guest = await app.request('POST', `/v1/events/${event.body.id}/guests`, {
      headers: key,
      body: { name },
    });
    expect(guest.status, guest.text).toBe(201);
    const url = new URL(guest.body.checkinUrl as string);
    const api = () => app.request('GET', url.pathname, { headers: { accept: 'application/json' } });
    for (let i = 0; i < 10; i++) expect((await api()).body.code).toBe('event_not_open');
    expect((await api()).status).toBe(429);
    expect((await status('open')).status).toBe(200);
    app.clock.advance(58_000);
    return { landing: `${app.url}/c/${url.pathname.split('/').pop()}`, guestId: guest.body.id as string };
  }

  const checkIns = (guestId: string) => app.deps.db.prisma.checkIn.count({ where: { guestId } });

  for (const { lang, wait, done } of [
    {
      lang: 'en',
      wait: /Please wait a few seconds: we will try again by ourselves \(in \d s\)/,
      done: 'Welcome, Rita! You are checked in at Festa.',
    },
    {
      lang: 'pt-BR',
      wait: /Aguarde alguns segundos: tentaremos de novo automaticamente \(em \d s\)/,
      done: 'Bem-vindo, Rita! Seu check-in em Festa foi feito.',
    },
  ]) {
    it(`${lang}: a tap over the limit shows "please wait" counting down, then checks in by itself`, async () => {
      const { landing, guestId } = await linkOverItsLimit('Rita Souza', lang);
      const page = await phone(lang);
      await page.goto(landing);
      await page.click('#checkin');
      const banner = page.locator('#wait');
      await expect.poll(() => banner.textContent(), { timeout: 10_000 }).toMatch(wait);
      expect(await page.getByText(/Something went wrong|Algo deu errado/).count()).toBe(0);
      await shot(page, `checkin-link-wait-${lang}`);
      expect(await checkIns(guestId)).toBe(0);
      // The window ends; the page's next try (after Retry-After) goes through.
      app.clock.advance(3_000);
      await page.getByText(done).waitFor({ timeout: 15_000 });
      expect(await banner.count()).toBe(0);
      await shot(page, `checkin-link-wait-done-${lang}`);
      await page.context().close();
      expect(await checkIns(guestId)).toBe(1);
    }, 60_000);
  }
});
