// A guest's invitation page and check-in landing in real Chromium on a phone-sized screen, in Brazilian
// Portuguese (the tenant's default, though the browser speaks English) and in English (the guest's
// choice): who invites, when and where written out, the add-to-calendar file and the QR ticket.
// Screenshots go to test/guests/screenshots/ with UPDATE_SCREENSHOTS=1.
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { HAS_CHROMIUM, launchChromium, screenshot } from '../support/chromium.js';
import { adminOf } from '../support/identity.js';

const SHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));
const PUBLIC_URL = 'https://portico.example.com';

let app: TestApp;
let browser: Browser;
let admin: Awaited<ReturnType<typeof adminOf>>;

async function phone(locale: string): Promise<{ page: Page; violations: string[] }> {
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 1,
    locale,
  });
  const page = await context.newPage();
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  return { page, violations };
}

const shot = (page: Page, name: string) => screenshot(page, SHOTS, name, { fullPage: true });

describe.skipIf(!HAS_CHROMIUM)('the invitation page in Chromium', () => {
  let event: { id: string; publicToken: string };
  let guest: { guestToken: string; checkinUrl: string };

  beforeAll(async () => {
    app = await createTestApp({ env: { PUBLIC_URL } });
    admin = await adminOf(app);
    await app.deps.db.prisma.tenant.update({
      where: { id: admin.tenant.tenantId },
      data: { name: 'Associação Cultural Aurora' },
    });
    const set = await app.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, {
      headers: admin.headers,
      body: { defaultLocale: 'pt-BR' },
    });
    expect(set.status, set.text).toBe(200);
    const created = await app.request('POST', '/v1/events', {
      headers: admin.headers,
      body: {
        name: 'Noite de Gala',
        startsAt: '2026-11-29T22:00:00.000Z',
        endsAt: '2026-11-30T01:30:00.000Z',
        timeZone: 'America/Sao_Paulo',
        venue: { name: 'Teatro Municipal', address: 'Praça Ramos de Azevedo, São Paulo' },
        branding: { primaryColor: '#5b2a86', secondaryColor: '#ffffff' },
      },
    });
    expect(created.status, created.text).toBe(201);
    event = created.body;
    const published = await app.request('PATCH', `/v1/events/${event.id}/status`, {
      headers: admin.headers,
      body: { status: 'published' },
    });
    expect(published.status, published.text).toBe(200);
    const added = await app.request('POST', `/v1/events/${event.id}/guests`, {
      headers: admin.headers,
      body: { name: 'Rita Lobo', email: 'rita@example.com' },
    });
    expect(added.status, added.text).toBe(201);
    guest = added.body;
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  const pageUrl = (lang?: string) =>
    `${app.url}/e/${event.publicToken}/g/${guest.guestToken}${lang ? `?lang=${lang}` : ''}`;

  it('speaks the tenant default (pt-BR) to an English browser, with the organisation, date, calendar and ticket', async () => {
    const { page, violations } = await phone('en-US');
    await page.goto(pageUrl());
    await page.locator('#ticket-qr').waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('pt-BR');
    expect(await page.locator('#organiser').innerText()).toBe('Convite de Associação Cultural Aurora');
    expect(await page.locator('#when').innerText()).toBe(
      'Quando: domingo, 29 de novembro, 19:00 (Horário Padrão de Brasília)',
    );
    expect(await page.locator('#where').innerText()).toBe(
      'Onde: Teatro Municipal, Praça Ramos de Azevedo, São Paulo',
    );
    expect(await page.locator('#add-to-calendar').innerText()).toBe('Adicionar à agenda');
    // The QR image decoded and drawn.
    const qrWidth = await page
      .locator('#ticket-qr')
      .evaluate((img: { naturalWidth: number }) => img.naturalWidth);
    expect(qrWidth).toBeGreaterThan(100);
    expect(await page.locator('#ticket').innerText()).toContain('Mostre este código QR na entrada.');

    // The calendar link downloads the event.
    const href = await page.locator('#add-to-calendar').getAttribute('href');
    const ics = await (await fetch(app.url + href!)).text();
    expect(ics).toContain('DTSTART:20261129T220000Z');
    expect(ics).toContain('SUMMARY:Noite de Gala');

    const text = await page.locator('main').innerText();
    expect(text).not.toMatch(/\b(Invitation|Hello|When|Where|Confirm|Decline|Add to calendar|Your ticket)\b/);
    await shot(page, 'invitation-pt-BR');
    expect(violations).toEqual([]);
    await page.context().close();
  });

  it('switches to English when the guest picks EN, and keeps it for their answer', async () => {
    const { page, violations } = await phone('pt-BR');
    await page.goto(pageUrl());
    await page.locator('#ticket-qr').waitFor();
    await page.click('nav.lang a:text("EN")');
    await page.locator('#ticket-qr').waitFor();
    await expect.poll(() => page.locator('html').getAttribute('lang')).toBe('en');
    expect(await page.locator('#organiser').innerText()).toBe('Invited by Associação Cultural Aurora');
    expect(await page.locator('#when').innerText()).toBe(
      'When: Sunday, 29 November, 19:00 (Brasilia Standard Time)',
    );
    expect(await page.locator('#add-to-calendar').innerText()).toBe('Add to calendar');
    await page.click('#confirm');
    await page.locator('#status .notice').waitFor();
    await shot(page, 'invitation-en');
    expect(violations).toEqual([]);
    await page.context().close();
  });

  it('shows on the check-in landing whose link it is and for which event, before any tap', async () => {
    const { page, violations } = await phone('en-US');
    const token = guest.checkinUrl.split('/').pop()!;
    await page.goto(`${app.url}/c/${token}`);
    await page.locator('#checkin').waitFor();
    expect(await page.locator('#organiser').innerText()).toBe('Associação Cultural Aurora');
    expect(await page.locator('main').innerText()).toContain(
      'Rita, este é o seu link de check-in para Noite de Gala.',
    );
    expect(await page.locator('#when').innerText()).toContain('domingo, 29 de novembro, 19:00');
    await shot(page, 'checkin-landing-pt-BR');
    expect(violations).toEqual([]);
    await page.context().close();
  });
});
