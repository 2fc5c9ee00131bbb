// The console for everyone, in real Chromium against the real cloud: axe-core (4.14) run over every
// page, signed out and signed in, in English and Brazilian Portuguese, on a laptop and a 390 px phone,
// with no serious or critical violation; no English text left on a Portuguese page; a skip link as the
// first Tab; focus back on the button that opened a dialog; on a phone the menu folds behind a button;
// a list's filters kept in the address across a reload.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENUM_WORDS } from '@portico/contract/words';
import { TEXTS } from '../../console/src/texts.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { HAS_CHROMIUM, launchChromium } from '../support/chromium.js';
import { bearer, login, newTenant } from '../support/identity.js';
import { textsOn } from '../support/page-language.js';
import { LAPTOP, newConsolePage, shot, signInWith, screen } from './support.js';

const PHONE = { width: 390, height: 844 };
const VIEWPORTS = { laptop: LAPTOP, phone: PHONE } as const;
const LOCALES = ['en', 'pt-BR'] as const;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

let app: TestApp;
let browser: Browser;
let axeSource: string;
const cspViolations: string[] = [];
const org = { email: '', headers: {} as Record<string, string> };
let pages: string[] = [];

async function signedIn(locale: string, viewport = LAPTOP): Promise<Page> {
  const p = await newConsolePage(browser, locale, cspViolations, viewport);
  await signInWith(p, app.url, org.email);
  return p;
}

/** Opens a console page and waits until nothing on it is loading. */
async function open(p: Page, hash: string): Promise<void> {
  await p.goto(`${app.url}/console#/${hash}`);
  await p.locator('main h1').first().waitFor();
  await p.locator('main [aria-busy="true"]').first().waitFor({ state: 'detached', timeout: 15_000 });
}

/** axe-core's violations on the page as it is now (injected through the debugger: the CSP is untouched). */
async function axe(p: Page): Promise<AxeViolation[]> {
  await p.evaluate(axeSource);
  return p.evaluate(async () => {
    const run = (
      globalThis as unknown as { axe: { run: (o: object) => Promise<{ violations: AxeViolation[] }> } }
    ).axe.run;
    return (await run({ resultTypes: ['violations'] })).violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target })),
    }));
  });
}

const blocking = (vs: AxeViolation[]) => vs.filter((v) => v.impact === 'serious' || v.impact === 'critical');
const describeViolations = (vs: AxeViolation[]) =>
  vs.map(
    (v) => `${v.impact} ${v.id}: ${v.help} at ${JSON.stringify(v.nodes.slice(0, 3).map((n) => n.target))}`,
  );

/** The console's English texts (and enum words) that its Portuguese says differently, placeholders left out. */
const ENGLISH_ONLY: ReadonlySet<string> = (() => {
  const pairs: [string, string][] = Object.entries(TEXTS.en).map(([k, en]) => [
    en,
    TEXTS['pt-BR'][k as keyof typeof TEXTS.en],
  ]);
  for (const [kind, words] of Object.entries(ENUM_WORDS.en)) {
    const pt = ENUM_WORDS['pt-BR'][kind as keyof typeof ENUM_WORDS.en] as Record<string, string>;
    for (const [value, en] of Object.entries(words as Record<string, string>)) pairs.push([en, pt[value]!]);
  }
  return new Set(pairs.filter(([en, pt]) => en !== pt && !en.includes('{')).map(([en]) => en.trim()));
})();

describe.skipIf(!HAS_CHROMIUM)('admin console: accessibility and language', () => {
  beforeAll(async () => {
    axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    app = await createTestApp();
    browser = await launchChromium();
    const tenant = await newTenant(app);
    const { token } = await login(app, tenant.adminEmail);
    Object.assign(org, { email: tenant.adminEmail, headers: bearer(token) });
    // Something on every page: an open event with guests (one checked in), a person, an integration.
    const event = await app.request('POST', '/v1/events', {
      headers: org.headers,
      body: { name: 'Launch Night', capacity: 50, startsAt: '2026-12-03T19:00:00.000Z' },
    });
    expect(event.status, event.text).toBe(201);
    const eventId = event.body.id as string;
    await app.request('PATCH', `/v1/events/${eventId}/status`, {
      headers: org.headers,
      body: { status: 'open' },
    });
    const guestIds: string[] = [];
    for (const [name, email] of [
      ['Ana Souza', 'ana@example.com'],
      ['João Conceição', 'joao@example.com'],
      ['Márcia Lopes', 'marcia@example.com'],
    ]) {
      const g = await app.request('POST', `/v1/events/${eventId}/guests`, {
        headers: org.headers,
        body: { name, email },
      });
      expect(g.status, g.text).toBe(201);
      guestIds.push(g.body.id as string);
    }
    const manual = await app.request('POST', '/v1/checkin/manual', {
      headers: org.headers,
      body: { guestId: guestIds[0], eventId },
    });
    expect(manual.status, manual.text).toBe(200);
    const person = await app.request('POST', '/v1/persons', {
      headers: org.headers,
      body: { name: 'Beatriz Lima', document: '123.456.789-09', email: 'beatriz@example.com' },
    });
    expect(person.status, person.text).toBe(201);
    const application = await app.request('POST', '/v1/applications', {
      headers: org.headers,
      body: { name: 'Front desk' },
    });
    expect(application.status, application.text).toBe(201);
    pages = [
      'today',
      `door/${eventId}`,
      'checkins',
      'persons',
      'events',
      'devices',
      'team',
      'integrations',
      'settings',
      'audit',
    ];
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  for (const locale of LOCALES) {
    for (const [screen, viewport] of Object.entries(VIEWPORTS)) {
      it(`has no serious or critical axe violation on any page (${locale}, ${screen})`, async () => {
        const signIn = await newConsolePage(browser, locale, cspViolations, viewport);
        await signIn.goto(`${app.url}/console`);
        await signIn.locator('#email').waitFor();
        const found: Record<string, string[]> = {};
        const signInViolations = blocking(await axe(signIn));
        if (signInViolations.length) found['sign-in'] = describeViolations(signInViolations);
        await signIn.context().close();

        const p = await signedIn(locale, viewport);
        for (const hash of pages) {
          await open(p, hash);
          const vs = blocking(await axe(p));
          if (vs.length) found[hash] = describeViolations(vs);
        }
        await p.context().close();
        expect(found).toEqual({});
      }, 120_000);
    }
  }

  it('leaves no English text on a Portuguese page', async () => {
    const p = await signedIn('pt-BR');
    const english: Record<string, string[]> = {};
    for (const hash of pages) {
      await open(p, hash);
      const left = (await textsOn(p)).filter((s) => ENGLISH_ONLY.has(s));
      if (left.length) english[hash] = [...new Set(left)];
    }
    await p.context().close();
    expect(english).toEqual({});
    // The check can see English: the same pages in English are full of it.
    const en = await signedIn('en');
    await open(en, 'persons');
    expect((await textsOn(en)).filter((s) => ENGLISH_ONLY.has(s)).length).toBeGreaterThan(5);
    await en.context().close();
  }, 120_000);

  it('offers a skip link as the first Tab, which moves focus to the page', async () => {
    const p = await signedIn('en');
    await open(p, 'persons');
    await p.keyboard.press('Tab');
    await shot(p, 'skip-link-en');
    const skip = p.locator('a.skip-link');
    await expect
      .poll(() => p.evaluate<boolean>('document.activeElement?.classList.contains("skip-link") ?? false'))
      .toBe(true);
    const box = await skip.boundingBox();
    expect(box && box.y >= 0 && box.height > 0).toBe(true);
    await p.keyboard.press('Enter');
    await expect.poll(() => p.evaluate<string | undefined>('document.activeElement?.id')).toBe('main');
    expect(new URL(p.url()).hash).toBe('#/persons');
    await p.context().close();
  }, 60_000);

  it('gives focus back to the button that opened a dialog', async () => {
    const p = await signedIn('en');
    await open(p, 'devices');
    await p.click('#add-device');
    await p.locator('#add-device-dialog[open]').waitFor();
    await p.keyboard.press('Escape');
    await p.locator('#add-device-dialog').waitFor({ state: 'detached' });
    await expect.poll(() => p.evaluate<string | undefined>('document.activeElement?.id')).toBe('add-device');
    await open(p, pages[1]!);
    await p.click('#walk-in');
    await p.locator('dialog[open]').waitFor();
    await p.keyboard.press('Escape');
    await expect.poll(() => p.evaluate<string | undefined>('document.activeElement?.id')).toBe('walk-in');
    await p.context().close();
  }, 60_000);

  it('folds the menu behind a button on a phone, and not on a laptop', async () => {
    const laptop = await signedIn('en');
    await open(laptop, 'today');
    expect(await laptop.locator('.menu-toggle').isVisible()).toBe(false);
    expect(await laptop.locator('nav[aria-label=Console]').isVisible()).toBe(true);
    await laptop.context().close();

    const p = await signedIn('pt-BR', PHONE);
    await open(p, 'today');
    const toggle = p.locator('.menu-toggle');
    const nav = p.locator('nav[aria-label=Console]');
    expect(await toggle.isVisible()).toBe(true);
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await nav.isVisible()).toBe(false);
    await screen(p, 'menu-folded-phone-pt-BR');
    // The page starts near the top of the screen, not below a column of links.
    expect((await p.locator('main h1').first().boundingBox())!.y).toBeLessThan(150);
    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    expect(await nav.isVisible()).toBe(true);
    await screen(p, 'menu-open-phone-pt-BR');
    await nav.getByRole('link', { name: TEXTS['pt-BR'].navPersons }).click();
    await expect.poll(() => new URL(p.url()).hash).toBe('#/persons');
    await expect.poll(() => nav.isVisible()).toBe(false);
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    await p.context().close();
  }, 60_000);

  it("keeps a list's filters in the address, so a reload shows the same list", async () => {
    const p = await signedIn('en');
    await open(p, 'persons');
    await p.fill('#person-search', 'beatriz');
    await expect.poll(() => new URL(p.url()).hash, { timeout: 10_000 }).toBe('#/persons?q=beatriz');
    await p.reload();
    await p.locator('#persons tbody tr').first().waitFor();
    expect(await p.inputValue('#person-search')).toBe('beatriz');
    await expect.poll(() => p.locator('#persons tbody tr').count(), { timeout: 10_000 }).toBe(1);

    await open(p, 'checkins');
    await p.selectOption('select[name=method]', 'manual');
    await p.click('form[aria-label] button[type=submit]');
    await expect.poll(() => new URL(p.url()).hash, { timeout: 10_000 }).toBe('#/checkins?method=manual');
    await p.reload();
    await p.locator('#checkins tbody tr').first().waitFor();
    expect(await p.locator('select[name=method]').inputValue()).toBe('manual');
    await p.context().close();
    expect(cspViolations).toEqual([]);
  }, 60_000);
});
