// The console's Persons page in real Chromium against the real cloud: 150 persons read page by page with
// their total, newest first (a person just created is on top), found as you type with accents, capitals
// and a document's dots ignored, and one button per row with the other actions in its menu. On a laptop
// and a 390 px phone, in English and Brazilian Portuguese, nothing wider than the screen.
// Screenshots go to test/console/screenshots/ only with UPDATE_SCREENSHOTS=1.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { HAS_CHROMIUM, launchChromium } from '../support/chromium.js';
import { bearer, login, newTenant } from '../support/identity.js';
import { LAPTOP, newConsolePage, shot, signInWith } from './support.js';

const PHONE = { width: 390, height: 844 };

let app: TestApp;
let browser: Browser;
const cspViolations: string[] = [];
const org = { email: '', headers: {} as Record<string, string> };

const total = (p: Page) => p.locator('#persons-total').innerText();
const names = (p: Page) =>
  p.locator('#persons tbody tr td:first-child').evaluateAll((tds) => tds.map((td) => td.textContent));
/** Nothing on the page is wider than the screen. */
const overflow = (p: Page) =>
  p.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

async function signedIn(locale: string, viewport = LAPTOP): Promise<Page> {
  const p = await newConsolePage(browser, locale, cspViolations, viewport);
  await signInWith(p, app.url, org.email);
  await p.goto(`${app.url}/console#/persons`);
  await p.locator('#persons tbody tr').first().waitFor();
  return p;
}

describe.skipIf(!HAS_CHROMIUM)('admin console: persons at scale', () => {
  beforeAll(async () => {
    app = await createTestApp();
    browser = await launchChromium();
    const tenant = await newTenant(app);
    const { token } = await login(app, tenant.adminEmail);
    Object.assign(org, { email: tenant.adminEmail, headers: bearer(token) });
    // 150 persons, imported oldest first: Person 001 … Person 147, then three with accents and documents.
    const rows = [
      ...Array.from({ length: 147 }, (_, i) => {
        const n = String(i + 1).padStart(3, '0');
        return {
          name: `Person ${n}`,
          document: `P-${n}`,
          ...(i % 2 ? { email: `person${n}@example.com` } : {}),
        };
      }),
      { name: 'João Conceição', document: '123.456.789-00', email: 'joao@example.com' },
      { name: 'Zé Ninguém', document: 'ZN-1' },
      { name: 'Márcia Lopes', document: '987.654.321-00', email: 'marcia@example.com' },
    ];
    const imported = await app.request('POST', '/v1/persons/import', {
      headers: org.headers,
      body: { rows },
    });
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.created).toBe(150);
    // Another tenant's João is never shown.
    const other = await newTenant(app);
    const otherLogin = await login(app, other.adminEmail);
    await app.request('POST', '/v1/persons', {
      headers: bearer(otherLogin.token),
      body: { name: 'João Alheio', document: '123.456.789-00' },
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('shows the total and reads the next pages, newest first', async () => {
    const p = await signedIn('en');
    await expect.poll(() => total(p)).toBe('Showing 50 of 150 persons');
    expect((await names(p)).slice(0, 3)).toEqual(['Márcia Lopes', 'Zé Ninguém', 'João Conceição']);
    await shot(p, 'persons-paging-en');
    await p.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => total(p)).toBe('Showing 100 of 150 persons');
    await p.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => total(p)).toBe('Showing 150 of 150 persons');
    expect(await p.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    const all = await names(p);
    expect(new Set(all).size).toBe(150);
    expect(all.at(-1)).toBe('Person 001');
    await p.close();
  }, 60_000);

  it('finds persons as you type, accents, capitals and a document’s dots ignored, never another tenant’s', async () => {
    const p = await signedIn('en');
    for (const [typed, found] of [
      ['joao', ['João Conceição']],
      ['CONCEIÇÃO', ['João Conceição']],
      ['12345678900', ['João Conceição']],
      ['ze nin', ['Zé Ninguém']],
      ['MARCIA@', ['Márcia Lopes']],
    ] as const) {
      await p.fill('#person-search', typed);
      await expect.poll(() => names(p)).toEqual(found);
      await expect.poll(() => total(p)).toBe('Showing 1 of 1 persons');
    }
    await p.fill('#person-search', 'joao');
    await expect.poll(() => names(p)).toEqual(['João Conceição']);
    await shot(p, 'persons-search-en');
    await p.fill('#person-search', 'person 14');
    await expect.poll(() => total(p)).toBe('Showing 8 of 8 persons');
    await p.fill('#person-search', '');
    await expect.poll(() => total(p)).toBe('Showing 50 of 150 persons');
    await p.close();
  }, 60_000);

  it('pages and searches in Brazilian Portuguese, the search kept in the address', async () => {
    const p = await signedIn('pt-BR');
    await expect.poll(() => total(p)).toBe('Exibindo 50 de 150 pessoas');
    await shot(p, 'persons-paging-pt-BR');
    await p.fill('#person-search', 'conceicao');
    await expect.poll(() => names(p)).toEqual(['João Conceição']);
    await expect.poll(() => new URL(p.url()).hash).toBe('#/persons?q=conceicao');
    await shot(p, 'persons-search-pt-BR');
    await p.close();
  }, 60_000);

  it('shows a person just created on top of the list, the search cleared', async () => {
    const p = await signedIn('en');
    await p.fill('#person-search', 'marcia');
    await expect.poll(() => total(p)).toBe('Showing 1 of 1 persons');
    await p.click('#new-person');
    await p.fill('#person-name', 'Íris Nova');
    await p.fill('#person-document', '555.444.333-22');
    await p.fill('#person-email', 'iris@example.com');
    await p.click('#save-person');
    await p.locator('#save-person').waitFor({ state: 'detached' });
    await expect.poll(() => total(p)).toBe('Showing 50 of 151 persons');
    expect((await names(p))[0]).toBe('Íris Nova');
    expect(await p.inputValue('#person-search')).toBe('');
    expect(await p.locator('main [role=status]').first().innerText()).toBe('Saved: Íris Nova');
    await shot(p, 'persons-new-on-top-en');
    await p.close();
  }, 60_000);

  it('gives each row one button, Edit, and the other actions in its menu', async () => {
    const p = await signedIn('en');
    const row = p.locator('#persons tbody tr', { hasText: 'João Conceição' });
    expect(await row.getByRole('button').allInnerTexts()).toEqual(['Edit', 'More']);
    await row.getByRole('button', { name: 'More actions: João Conceição' }).click();
    const inMenu = await row.locator('.row-menu ul button').allInnerTexts();
    expect(inMenu).toEqual(['Send enrollment link', 'QR code', 'Anonymise', 'Delete']);
    await shot(p, 'persons-menu-en');
    await row.getByRole('button', { name: 'QR code' }).click();
    await p.locator('dialog[open] img.qr').waitFor();
    await p.locator('dialog[open]').getByRole('button', { name: 'Close' }).click();
    await p.locator('dialog[open]').waitFor({ state: 'detached' });
    await p.close();
  }, 60_000);

  for (const [locale, shown, more, menu] of [
    ['en', 'Showing 50 of 151 persons', 'Load more', 'More actions'],
    ['pt-BR', 'Exibindo 50 de 151 pessoas', 'Carregar mais', 'Mais ações'],
  ] as const) {
    it(`works on a 390 px phone in ${locale}: each person a card, the menu inside it, nothing wider than the screen`, async () => {
      const p = await signedIn(locale, PHONE);
      await expect.poll(() => total(p)).toBe(shown);
      expect(await overflow(p)).toBeLessThanOrEqual(0);
      await p.fill('#person-search', 'joao');
      await expect.poll(() => names(p)).toEqual(['João Conceição']);
      const row = p.locator('#persons tbody tr').first();
      await row.getByRole('button', { name: `${menu}: João Conceição` }).click();
      expect(await overflow(p)).toBeLessThanOrEqual(0);
      await shot(p, `persons-phone-${locale}`);
      await p.fill('#person-search', '');
      await expect.poll(() => total(p)).toBe(shown);
      await p.getByRole('button', { name: more }).click();
      await expect.poll(() => total(p)).toBe(shown.replace('50', '100'));
      expect(await overflow(p)).toBeLessThanOrEqual(0);
      await p.close();
    }, 60_000);
  }

  it('breaks no Content-Security-Policy rule', () => {
    expect(cspViolations).toEqual([]);
  });
});
