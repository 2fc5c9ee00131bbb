// The console's door view in real Chromium against the real cloud: one event of 123 guests read page
// by page as the list scrolls, a guest found as you type with accents and capitals ignored, checked in
// by hand, the check-in undone with a reason (voided in the API, the place freed), a walk-in added and
// checked in, several guests checked in, invited and removed at once; arrived / confirmed / capacity on
// the door and on Today (with a chart of arrivals over time), where a link check-in names its guest (as Check-ins does). On a laptop, a
// tablet and a 390 px phone, in English and Brazilian Portuguese, nothing wider than the screen.
// Screenshots go to test/console/screenshots/ only with UPDATE_SCREENSHOTS=1.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { HAS_CHROMIUM, launchChromium } from '../support/chromium.js';
import { bearer, loggedInUser, login, newTenant } from '../support/identity.js';
import { LAPTOP, newConsolePage, screen, shot, TABLET, signInWith } from './support.js';

const PHONE = { width: 390, height: 844 };
const NAMED = [
  ['João Conceição', 'joao.conceicao@example.com', '123.456.789-00'],
  ['Ana Souza', 'ana@example.com', '987.654.321-00'],
  ['Zé Ninguém', 'ze@example.com', ''],
  ['Márcia Lopes', 'marcia@example.com', ''],
] as const;

let app: TestApp;
let browser: Browser;
const cspViolations: string[] = [];
const org = { email: '', tenantId: '', headers: {} as Record<string, string> };
let eventId = '';

const row = (p: Page, name: string) => p.locator(`#door-guests li[data-guest="${name}"]`);
const guestByName = async (name: string) =>
  app.deps.db.prisma.guest.findFirstOrThrow({ where: { eventId, name, deletedAt: null } });

async function signedIn(locale: string, viewport = LAPTOP, email = org.email): Promise<Page> {
  const p = await newConsolePage(browser, locale, cspViolations, viewport);
  await signInWith(p, app.url, email);
  return p;
}

async function openDoor(p: Page): Promise<void> {
  await p.goto(`${app.url}/console#/door/${eventId}`);
  await p.locator('#door-guests li').first().waitFor();
  await expect.poll(() => p.locator('#door-attendance').count()).toBe(1);
}

/** Nothing on the page is wider than the screen (no sideways scrolling at the door). */
const overflow = (p: Page) =>
  p.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

async function search(p: Page, text: string) {
  await p.fill('#door-search', text);
  await expect.poll(() => p.locator('#door-guests').getAttribute('aria-busy')).toBe('false');
}

describe.skipIf(!HAS_CHROMIUM)('admin console: the door view', () => {
  beforeAll(async () => {
    app = await createTestApp();
    browser = await launchChromium();
    const tenant = await newTenant(app);
    const { token } = await login(app, tenant.adminEmail);
    Object.assign(org, { email: tenant.adminEmail, tenantId: tenant.tenantId, headers: bearer(token) });
    const created = await app.request('POST', '/v1/events', {
      headers: org.headers,
      body: { name: 'Launch Night', capacity: 100, startsAt: '2026-12-03T19:00:00.000Z' },
    });
    expect(created.status, created.text).toBe(201);
    eventId = created.body.id;
    expect(
      (
        await app.request('PATCH', `/v1/events/${eventId}/status`, {
          headers: org.headers,
          body: { status: 'open' },
        })
      ).status,
    ).toBe(200);
    // 123 guests: four named ones and Guest 001 … Guest 119, imported as a CSV file.
    const lines = ['name,email,document'];
    for (const [name, email, doc] of NAMED) lines.push(`${name},${email},${doc}`);
    for (let i = 1; i <= 119; i++) {
      const n = String(i).padStart(3, '0');
      lines.push(`Guest ${n},${i % 3 === 0 ? '' : `guest${n}@example.com`},`);
    }
    const form = new FormData();
    form.append('file', new Blob([lines.join('\n')], { type: 'text/csv' }), 'guests.csv');
    const imported = await fetch(`${app.url}/v1/events/${eventId}/guests/import`, {
      method: 'POST',
      headers: org.headers,
      body: form,
    });
    expect(imported.status, await imported.clone().text()).toBe(200);
    expect(((await imported.json()) as { created: number }).created).toBe(123);
    // A few have confirmed ahead of the day.
    for (const name of ['João Conceição', 'Ana Souza', 'Márcia Lopes', 'Guest 001', 'Guest 002']) {
      const g = await guestByName(name);
      await app.request('PATCH', `/v1/events/${eventId}/guests/${g.id}`, {
        headers: org.headers,
        body: { status: 'confirmed' },
      });
    }
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('reads the list page by page as it scrolls, and finds a guest as you type (accents, capitals, documents)', async () => {
    const p = await signedIn('en');
    await openDoor(p);
    expect(await p.locator('h1').innerText()).toBe('Door: Launch Night');
    expect(await p.locator('#door-count').innerText()).toBe('Showing 50 of 123 guests');
    expect(await p.locator('#door-attendance').innerText()).toMatch(
      /Arrived\s+0\s+Confirmed\s+5\s+Capacity\s+100/,
    );
    // Scrolling to the end reads the next page, and the next.
    await p.locator('.door-end').scrollIntoViewIfNeeded();
    await expect.poll(() => p.locator('#door-count').innerText()).toBe('Showing 100 of 123 guests');
    await p.locator('.door-end').scrollIntoViewIfNeeded();
    await expect.poll(() => p.locator('#door-count').innerText()).toBe('Showing 123 of 123 guests');
    expect(await p.locator('#door-more').count()).toBe(0);

    await p.locator('#door-search').focus();
    for (const [typed, found] of [
      ['joao', ['João Conceição']],
      ['CONCEIÇÃO', ['João Conceição']],
      ['12345678900', ['João Conceição']],
      ['zé nin', ['Zé Ninguém']],
      ['marcia', ['Márcia Lopes']],
    ] as const) {
      await search(p, typed);
      await expect
        .poll(() =>
          p.locator('#door-guests li').evaluateAll((li) => li.map((l) => l.getAttribute('data-guest'))),
        )
        .toEqual(found);
    }
    await search(p, 'nobody-like-this');
    await expect
      .poll(() => p.locator('#door-count').innerText())
      .toBe('No guest matches “nobody-like-this”.');
    await p.close();
  }, 90_000);

  it('checks a guest in by hand and undoes it with a reason: voided in the API, the place freed', async () => {
    const p = await signedIn('en');
    await openDoor(p);
    await search(p, 'joao');
    await p.getByRole('button', { name: 'Check in João Conceição' }).click();
    await expect.poll(() => p.locator('#door-notice').innerText()).toBe('João Conceição is checked in.');
    await expect.poll(() => row(p, 'João Conceição').innerText()).toMatch(/checked in\s+In at/);
    await expect.poll(() => p.locator('#door-attendance dd.arrived').innerText()).toBe('1');
    const joao = await guestByName('João Conceição');
    expect(joao.status).toBe('checked_in');
    await shot(p, 'door-checked-in-en');

    await p.getByRole('button', { name: 'Undo the check-in of João Conceição' }).click();
    await p.locator('#undo-reason').waitFor();
    expect(await p.locator('#undo-text').innerText()).toContain('The place is freed');
    await p.getByRole('button', { name: 'Wrong guest ticked' }).click();
    await screen(p, 'door-undo-en');
    await p.click('#undo-confirm');
    await expect
      .poll(() => p.locator('#door-notice').innerText())
      .toBe('The check-in of João Conceição is undone.');
    await expect.poll(() => row(p, 'João Conceição').innerText()).toContain('confirmed');
    await expect.poll(() => p.locator('#door-attendance dd.arrived').innerText()).toBe('0');
    const voided = await app.deps.db.prisma.checkIn.findFirstOrThrow({ where: { guestId: joao.id } });
    expect(voided.voidedAt).not.toBeNull();
    expect(voided.voidReason).toBe('Wrong guest ticked');
    expect((await guestByName('João Conceição')).status).toBe('confirmed');
    // Focus is back on the row's button, now offering the check-in again.
    await expect
      .poll(() => p.evaluate<string | null>('document.activeElement?.getAttribute("aria-label") ?? null'))
      .toBe('Check in João Conceição');
    await p.close();
  }, 90_000);

  it('adds a walk-in and checks them in', async () => {
    const p = await signedIn('en');
    await openDoor(p);
    await p.click('#walk-in');
    await p.locator('#walk-in-name').waitFor();
    await p.fill('#walk-in-name', 'Walk-in Wanda');
    await p.fill('#walk-in-email', 'wanda@example.com');
    await screen(p, 'door-walk-in-en');
    await p.click('#walk-in-submit');
    await expect.poll(() => p.locator('#door-notice').innerText()).toBe('Walk-in Wanda is checked in.');
    await expect.poll(() => row(p, 'Walk-in Wanda').innerText()).toContain('checked in');
    const wanda = await guestByName('Walk-in Wanda');
    expect(wanda).toMatchObject({ status: 'checked_in', email: 'wanda@example.com' });
    await p.close();
  }, 90_000);

  it('checks in, invites and removes several guests at once', async () => {
    const p = await signedIn('en');
    await openDoor(p);
    await search(p, 'guest 00');
    await expect.poll(() => p.locator('#door-guests li').count()).toBe(9);
    await p.check('#select-shown');
    expect(await p.locator('#selected-count').innerText()).toBe('9 selected');
    await shot(p, 'door-bulk-en');
    await p.click('#bulk-checkin');
    // Nine check-ins, four at a time: more than vitest's default second on PostgreSQL.
    await expect
      .poll(() => p.locator('#door-notice').innerText(), { timeout: 15_000 })
      .toBe('9 checked in, 0 not admitted.');
    await expect.poll(() => p.locator('#door-guests li.in').count()).toBe(9);
    expect(
      await app.deps.db.prisma.guest.count({
        where: { eventId, name: { startsWith: 'Guest 00' }, status: 'checked_in' },
      }),
    ).toBe(9);

    await search(p, 'guest 01');
    await p.getByRole('checkbox', { name: 'Select Guest 011' }).check();
    await p.getByRole('checkbox', { name: 'Select Guest 013' }).check();
    await p.click('#bulk-invite');
    // Guest 011 has an e-mail and is mailed; Guest 012… is not selected; Guest 013 has an e-mail too.
    await expect
      .poll(() => p.locator('#door-notice').innerText(), { timeout: 15_000 })
      .toMatch(/^Mailed 2, skipped 0, failed 0\.$/);
    expect((await guestByName('Guest 011')).status).toBe('invited');

    await p.getByRole('checkbox', { name: 'Select Guest 014' }).check();
    await p.getByRole('checkbox', { name: 'Select Guest 015' }).check();
    await p.click('#bulk-remove');
    await p.locator('#confirm-title').waitFor();
    expect(await p.locator('#confirm-title').innerText()).toBe('Remove 2 guests?');
    await p.locator('dialog').getByRole('button', { name: 'Remove', exact: true }).click();
    await expect
      .poll(() => p.locator('#door-notice').innerText(), { timeout: 15_000 })
      .toBe('2 removed, 0 not removed.');
    await expect.poll(() => p.locator('#door-guests li').count()).toBe(8);
    expect(await app.deps.db.prisma.guest.count({ where: { eventId, deletedAt: { not: null } } })).toBe(2);
    await p.close();
  }, 90_000);

  it('names a link check-in’s guest on Today and Check-ins, with arrived / confirmed / capacity per event', async () => {
    const ana = await guestByName('Ana Souza');
    const link = await app.request('GET', `/v1/public/checkin/link/${ana.linkToken}`, {
      headers: { accept: 'application/json' },
    });
    expect(link.body.result).toBe('checked_in');
    const p = await signedIn('en');
    await p.goto(`${app.url}/console#/today`);
    const card = p.locator('#attendance-today article[data-event="Launch Night"]');
    // Ana, Wanda and nine guests are in.
    await expect.poll(() => card.innerText()).toMatch(/Arrived\s+11\s+Confirmed\s+\d+\s+Capacity\s+100/);
    await expect.poll(() => p.locator('#live').innerText()).toContain('Ana Souza');
    await expect.poll(() => p.locator('#live').innerText()).toContain('João Conceição');
    expect(await p.locator('#live').innerText()).toContain('undone');
    // Arrivals over time, drawn by the charting library on a canvas, said in words too.
    await expect.poll(() => card.locator('.arrivals canvas').count()).toBe(1);
    await expect.poll(() => card.locator('.arrivals figcaption').innerText()).toMatch(/^11 arrived by /);
    await shot(p, 'today-attendance-en');
    // The same in Portuguese.
    const pt = await signedIn('pt-BR');
    await pt.goto(`${app.url}/console#/today`);
    const cartao = pt.locator('#attendance-today article[data-event="Launch Night"]');
    await expect.poll(() => cartao.locator('.arrivals figcaption').innerText()).toMatch(/^11 chegaram até /);
    expect(await cartao.innerText()).toMatch(/Chegaram\s+11\s+Confirmados\s+\d+\s+Capacidade\s+100/);
    await shot(pt, 'today-attendance-pt-BR');
    await pt.close();

    await p.goto(`${app.url}/console#/checkins`);
    await expect.poll(() => p.locator('main table').first().innerText()).toContain('Ana Souza');
    // Check-ins undoes an admission too (a face or QR check-in of someone on no list, say).
    await p.getByRole('button', { name: 'Undo the check-in of Ana Souza' }).click();
    await p.fill('#undo-reason', 'Test check-in');
    await p.click('#undo-confirm');
    await expect
      .poll(() => p.locator('#checkins tr', { hasText: 'Ana Souza' }).innerText())
      .toContain('undone');
    expect(await p.getByRole('button', { name: 'Undo the check-in of Ana Souza' }).count()).toBe(0);
    const anas = await app.deps.db.prisma.checkIn.findFirstOrThrow({ where: { guestId: ana.id } });
    expect(anas.voidReason).toBe('Test check-in');
    expect((await guestByName('Ana Souza')).status).toBe('confirmed');
    await shot(p, 'checkins-undone-en');
    await p.close();
  }, 90_000);

  it('lets an operator run the door (check in, undo) without the managers’ buttons', async () => {
    const email = `door-operator@${org.email.split('@')[1]}`;
    await loggedInUser(app, org.tenantId, 'operator', email);
    const p = await signedIn('en', LAPTOP, email);
    await openDoor(p);
    expect(await p.locator('#walk-in').count()).toBe(0);
    await search(p, 'guest 020');
    await p.getByRole('button', { name: 'Check in Guest 020' }).click();
    await expect.poll(() => p.locator('#door-notice').innerText()).toBe('Guest 020 is checked in.');
    await p.check('#select-shown');
    expect(await p.locator('#bulk-checkin').count()).toBe(1);
    expect(await p.locator('#bulk-invite, #bulk-remove').count()).toBe(0);
    await p.uncheck('#select-shown');
    await p.getByRole('button', { name: 'Undo the check-in of Guest 020' }).click();
    await p.fill('#undo-reason', 'Tapped the wrong row');
    await p.click('#undo-confirm');
    await expect
      .poll(() => p.locator('#door-notice').innerText())
      .toBe('The check-in of Guest 020 is undone.');
    const voided = await app.deps.db.prisma.checkIn.findFirstOrThrow({
      where: { guestId: (await guestByName('Guest 020')).id },
    });
    expect(voided.voidReason).toBe('Tapped the wrong row');
    await p.close();
  }, 90_000);

  it('runs the door in Brazilian Portuguese: search, check in, undo, walk-in, several at once', async () => {
    const p = await signedIn('pt-BR');
    await openDoor(p);
    await search(p, 'MARCIA');
    // The search is kept in the address: a reload shows the same list.
    await expect.poll(() => new URL(p.url()).hash, { timeout: 10_000 }).toBe(`#/door/${eventId}?q=MARCIA`);
    await p.reload();
    await p.locator('#door-guests li').first().waitFor();
    expect(await p.inputValue('#door-search')).toBe('MARCIA');
    await expect.poll(() => p.locator('#door-guests li').count(), { timeout: 10_000 }).toBe(1);
    await p.getByRole('button', { name: 'Registrar entrada de Márcia Lopes' }).click();
    await expect.poll(() => row(p, 'Márcia Lopes').innerText(), { timeout: 10_000 }).toMatch(/presente/);
    await shot(p, 'door-checked-in-pt-BR');
    await p.getByRole('button', { name: 'Desfazer a entrada de Márcia Lopes' }).click();
    await p.locator('#undo-reason').waitFor();
    await p.fill('#undo-reason', 'Marcada por engano');
    await screen(p, 'door-undo-pt-BR');
    await p.click('#undo-confirm');
    await expect.poll(() => row(p, 'Márcia Lopes').innerText(), { timeout: 10_000 }).toContain('confirmado');
    expect((await guestByName('Márcia Lopes')).status).toBe('confirmed');

    // A walk-in is added to the whole list: the search is cleared first.
    await search(p, '');
    await p.click('#walk-in');
    await p.locator('#walk-in-name').waitFor();
    await p.fill('#walk-in-name', 'Paulo Avulso');
    await screen(p, 'door-walk-in-pt-BR');
    await p.click('#walk-in-submit');
    await expect.poll(() => row(p, 'Paulo Avulso').innerText(), { timeout: 10_000 }).toContain('presente');

    await search(p, 'guest 10');
    // Guest 100 to Guest 109: the search has settled before the shown ones are selected.
    await expect.poll(() => p.locator('#door-guests li').count(), { timeout: 10_000 }).toBe(10);
    await p.check('#select-shown');
    await expect
      .poll(() => p.locator('#selected-count').innerText(), { timeout: 10_000 })
      .toMatch(/^\d+ selecionados?$/);
    await shot(p, 'door-bulk-pt-BR');
    await p.uncheck('#select-shown');
    await p.close();
  }, 90_000);

  for (const [locale, viewport, name] of [
    ['en', LAPTOP, 'door-en'],
    ['pt-BR', LAPTOP, 'door-pt-BR'],
    ['en', TABLET, 'door-tablet-en'],
    ['pt-BR', TABLET, 'door-tablet-pt-BR'],
    ['en', PHONE, 'door-phone-en'],
    ['pt-BR', PHONE, 'door-phone-pt-BR'],
  ] as const) {
    it(`fits a ${viewport.width} px screen in ${locale}, in its words (${name})`, async () => {
      const p = await signedIn(locale, viewport);
      await openDoor(p);
      await expect.poll(() => p.locator('#door-guests').getAttribute('aria-busy')).toBe('false');
      const words =
        locale === 'en'
          ? { title: 'Door: Launch Night', checkIn: 'Check in', search: 'Find a guest' }
          : { title: 'Portaria: Launch Night', checkIn: 'Registrar entrada', search: 'Buscar convidado' };
      expect(await p.locator('h1').innerText()).toBe(words.title);
      expect(await p.locator('label', { hasText: words.search }).count()).toBe(1);
      expect(await row(p, 'Guest 020').locator('button').innerText()).toBe(words.checkIn);
      expect(await overflow(p)).toBeLessThanOrEqual(0);
      // Every row's button is big enough to hit with a finger.
      const heights = await p
        .locator('#door-guests li button')
        .evaluateAll((b) => b.map((x) => x.getBoundingClientRect().height));
      expect(Math.min(...heights)).toBeGreaterThanOrEqual(44);
      await screen(p, name);
      // Further down a long list the search and the counter stay on screen (not on a phone: no room).
      await p.locator('#door-guests li').nth(30).scrollIntoViewIfNeeded();
      if (viewport.width > 600) expect(await p.locator('#door-search').isVisible()).toBe(true);
      await screen(p, `${name}-scrolled`);
      await p.close();
    }, 60_000);
  }

  it('had no Content-Security-Policy violation', () => {
    expect(cspViolations).toEqual([]);
  });
});
