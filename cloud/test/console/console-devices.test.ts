// The console's Devices page in real Chromium against the real cloud: a device added by a pairing
// code (the code shown large with its countdown and the command to run, paired through the API while
// the dialog waits, the table then showing it online with its events), renamed, given other events,
// and revoked after a confirmation (its token refused at once); focus goes back where it was after each
// dialog. Screenshots of the page and the pairing dialog on a laptop and a 390 px phone, in English and
// Brazilian Portuguese, go to test/console/screenshots/ (only with UPDATE_SCREENSHOTS=1).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { HAS_CHROMIUM, launchChromium } from '../support/chromium.js';
import { bearer, login, newTenant } from '../support/identity.js';
import { goTo, newConsolePage, shot, signInWith, screen } from './support.js';

const SECRET = 'console-devices-internal-secret-0123456789';
const PHONE = { width: 390, height: 844 };

let app: TestApp;
let browser: Browser;
let page: Page;
const cspViolations: string[] = [];
const org = { email: '', tenantId: '', headers: {} as Record<string, string> };
const events: Record<string, string> = {};
/** The device paired from the dialog: its id and token. */
const door = { id: '', token: '' };

/** A dialog as a person sees it: the screen, not the whole page behind the backdrop. */

async function signIn(p: Page) {
  await signInWith(p, app.url, org.email);
}

const asDevice = (token: string) => ({ 'x-internal-secret': SECRET, 'x-device-token': token });
const focusedId = (p: Page) => p.evaluate<string>('document.activeElement?.id ?? ""');
const focusedLabel = (p: Page) =>
  p.evaluate<string | null>('document.activeElement?.getAttribute("aria-label") ?? null');
const row = (p: Page, name: string) => p.locator('#devices tbody tr', { hasText: name });

/** Opens the add dialog, names the device, ticks `eventNames` and answers the code shown. */
async function askForCode(p: Page, name: string, eventNames: string[], formShot?: string): Promise<string> {
  await p.click('#add-device');
  await p.locator('#add-device-dialog #device-name').waitFor();
  await expect.poll(() => focusedId(p)).toBe('device-name');
  await p.fill('#device-name', name);
  for (const e of eventNames) await p.getByLabel(e).check();
  if (formShot) {
    await p.waitForTimeout(400); // the checkboxes' transition
    await screen(p, formShot);
  }
  await p.click('#get-code');
  await p.locator('#pairing-code').waitFor();
  return (await p.locator('#pairing-code').innerText()).trim();
}

describe.skipIf(!HAS_CHROMIUM)('admin console: devices paired by code', () => {
  beforeAll(async () => {
    app = await createTestApp({ env: { INTERNAL_SECRET: SECRET } });
    browser = await launchChromium();
    const tenant = await newTenant(app);
    const { token } = await login(app, tenant.adminEmail);
    Object.assign(org, { email: tenant.adminEmail, tenantId: tenant.tenantId, headers: bearer(token) });
    for (const [name, startsAt] of [
      ['Acme Summit 2026', '2026-12-03T09:00:00.000Z'],
      ['Partner Day', '2026-12-04T13:00:00.000Z'],
    ] as const) {
      const res = await app.request('POST', '/v1/events', { headers: org.headers, body: { name, startsAt } });
      expect(res.status, res.text).toBe(201);
      events[name] = res.body.id;
    }
    // A device that has been at work for a while, so the table has more than one row.
    const made = await app.request('POST', '/v1/devices/pairing-codes', {
      headers: org.headers,
      body: { name: 'Hall B, kiosk 1', eventIds: [events['Partner Day']] },
    });
    const paired = await app.request('POST', '/v1/devices/pair', { body: { code: made.body.code } });
    expect(paired.status, paired.text).toBe(201);
    page = await newConsolePage(browser, 'en', cspViolations);
    await signIn(page);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('adds a device: its code shown large with a countdown and the command, paired through the API while the dialog waits', async () => {
    await goTo(page, app.url, 'devices');
    await expect.poll(() => page.locator('#devices').innerText()).toContain('Hall B, kiosk 1');
    const code = await askForCode(page, 'Entrance A, kiosk 2', ['Acme Summit 2026'], 'devices-add-en');
    expect(code).toMatch(/^[A-HJKMNP-Z2-9]{4}-[A-HJKMNP-Z2-9]{4}$/);
    expect(await page.locator('#pairing-expiry').innerText()).toMatch(/Expires in (10:00|9:5\d)/);
    expect(await page.locator('#pairing-command').innerText()).toBe(
      `pnpm agent pair --cloud ${app.url} --code ${code}`,
    );
    await expect.poll(() => focusedId(page)).toBe('copy-command');
    await screen(page, 'devices-pairing-en');

    // The device exchanges the code (as `pnpm agent pair` does); the dialog sees it arrive.
    const paired = await app.request('POST', '/v1/devices/pair', { body: { code: code.toLowerCase() } });
    expect(paired.status, paired.text).toBe(201);
    expect(paired.body.device.eventIds).toEqual([events['Acme Summit 2026']]);
    Object.assign(door, { id: paired.body.device.id, token: paired.body.deviceToken });
    await expect
      .poll(() => page.locator('#add-device-dialog [role=status]').innerText(), { timeout: 10_000 })
      .toContain('“Entrance A, kiosk 2” is paired');
    await page.click('#pairing-done');
    await expect.poll(() => page.locator('#add-device-dialog').count()).toBe(0);
    await expect.poll(() => focusedId(page)).toBe('add-device');

    // Once it calls the cloud it is online, with its events, sync and queue.
    const sync = await app.request('POST', '/v1/sync/batch', {
      headers: asDevice(door.token),
      body: {
        queueLength: 2,
        items: [
          {
            clientId: crypto.randomUUID(),
            method: 'facial',
            outcome: 'denied',
            reason: 'not_recognised',
            recordedAt: new Date(Date.now() - 60_000).toISOString(),
          },
        ],
      },
    });
    expect(sync.status, sync.text).toBe(200);
    await page.reload();
    await page.locator('main h1').waitFor();
    const added = row(page, 'Entrance A, kiosk 2');
    await expect.poll(() => added.innerText()).toMatch(/Acme Summit 2026\s+online/);
    expect(await added.locator('td').nth(5).innerText()).toBe('2');
    await expect.poll(() => page.locator('[aria-busy=true]').count()).toBe(0);
    await shot(page, 'devices-en');
  }, 60_000);

  it('renames a device and changes its events; the device reads its new events at once', async () => {
    await page.getByRole('button', { name: 'Rename: Entrance A, kiosk 2' }).click();
    await page.locator('#rename-name').waitFor();
    await page.fill('#rename-name', 'Entrance A, kiosk 3');
    await page.click('#rename-save');
    await expect.poll(() => page.locator('#devices').innerText()).toContain('Entrance A, kiosk 3');
    expect(await focusedLabel(page)).toBe('Rename: Entrance A, kiosk 3');

    await page.getByRole('button', { name: 'Events: Entrance A, kiosk 3' }).click();
    const dialog = page.locator('#device-events-dialog');
    await dialog.getByLabel('Partner Day').check();
    await dialog.getByLabel('Acme Summit 2026').uncheck();
    await page.click('#device-events-save');
    await expect.poll(() => row(page, 'Entrance A, kiosk 3').innerText()).toContain('Partner Day');
    const seen = await app.request('GET', '/v1/sync/device', { headers: asDevice(door.token) });
    expect(seen.status, seen.text).toBe(200);
    expect(seen.body).toMatchObject({
      device: { id: door.id, name: 'Entrance A, kiosk 3' },
      events: [{ id: events['Partner Day'], name: 'Partner Day' }],
    });
    expect(seen.body.events).toHaveLength(1);
  }, 60_000);

  it('revokes a device after a confirmation; its token is refused at once and focus returns to the page', async () => {
    await page.getByRole('button', { name: 'Revoke: Entrance A, kiosk 3' }).click();
    await page.locator('#confirm-title').waitFor();
    expect(await page.locator('#confirm-text').innerText()).toContain('It stops working at once');
    // Cancel first: nothing happens and focus is back on the row's button.
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('#confirm-title').count()).toBe(0);
    // The dialog's close hands focus back on its next frame: polled, not read at once.
    await expect.poll(() => focusedLabel(page)).toBe('Revoke: Entrance A, kiosk 3');
    expect((await app.request('GET', '/v1/sync/device', { headers: asDevice(door.token) })).status).toBe(200);

    await page.keyboard.press('Enter');
    await page.locator('#confirm-title').waitFor();
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    await expect.poll(() => row(page, 'Entrance A, kiosk 3').innerText()).toContain('revoked');
    await expect.poll(() => focusedId(page)).toBe('add-device');
    const refused = await app.request('GET', '/v1/sync/device', { headers: asDevice(door.token) });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('invalid_token');
  }, 60_000);

  it('shows an expired code as expired, offering a new one', async () => {
    await page.clock.install();
    await goTo(page, app.url, 'devices');
    await askForCode(page, 'Spare kiosk', []);
    await page.clock.fastForward('10:01');
    await expect.poll(() => page.locator('#pairing-expiry').innerText()).toContain('This code has expired');
    await page.click('#new-code');
    await expect.poll(() => page.locator('#pairing-expiry').innerText()).toMatch(/Expires in/);
    await page.click('#pairing-done');
    await page.context().close();
  }, 60_000);

  it('on a 390 px phone and in Brazilian Portuguese', async () => {
    const phone = await newConsolePage(browser, 'en', cspViolations, PHONE);
    await signIn(phone);
    await goTo(phone, app.url, 'devices');
    await expect.poll(() => phone.locator('#devices').innerText()).toContain('Hall B, kiosk 1');
    await expect.poll(() => phone.locator('[aria-busy=true]').count()).toBe(0);
    await shot(phone, 'devices-phone-en');
    await askForCode(phone, 'Side door', ['Partner Day'], 'devices-add-phone-en');
    await screen(phone, 'devices-pairing-phone-en');
    await phone.context().close();

    const pt = await newConsolePage(browser, 'pt-BR', cspViolations);
    await signIn(pt);
    await goTo(pt, app.url, 'devices');
    expect(await pt.locator('main h1').first().innerText()).toBe('Dispositivos');
    await expect.poll(() => pt.locator('#devices').innerText()).toContain('revogado');
    await expect.poll(() => pt.locator('[aria-busy=true]').count()).toBe(0);
    await shot(pt, 'devices-pt-BR');
    await askForCode(pt, 'Porta lateral', ['Acme Summit 2026']);
    expect(await pt.locator('#pairing-expiry').innerText()).toMatch(/Expira em/);
    await screen(pt, 'devices-pairing-pt-BR');
    await pt.context().close();
    expect(cspViolations).toEqual([]);
  }, 90_000);
});
