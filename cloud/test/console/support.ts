// What the console's browser tests share: pages of a Chromium with a viewport and a language (CSP
// violations collected), going to a console page, and screenshots into the committed folder (taken only
// with UPDATE_SCREENSHOTS=1).
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { screenshot } from '../support/chromium.js';
import { PASSWORD } from '../support/identity.js';

export const LAPTOP = { width: 1280, height: 800 };
export const TABLET = { width: 820, height: 1180 };

const SHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));

/** The whole page. */
export const shot = (p: Page, name: string) => screenshot(p, SHOTS, name, { fullPage: true });

/** A dialog as a person sees it: the screen, not the whole page behind the backdrop. */
export const screen = (p: Page, name: string) => screenshot(p, SHOTS, name);

/** A page in its own browser context; a Content-Security-Policy violation it reports lands in `violations`. */
export async function newConsolePage(
  browser: Browser,
  locale: string,
  violations: string[],
  viewport = LAPTOP,
): Promise<Page> {
  const context = await browser.newContext({
    viewport,
    deviceScaleFactor: 1,
    locale,
    permissions: ['camera'],
  });
  const p = await context.newPage();
  p.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  return p;
}

/** Opens the console's page `hash` (e.g. `settings`) and waits for its heading. */
export async function goTo(p: Page, baseUrl: string, hash: string): Promise<void> {
  await p.goto(`${baseUrl}/console#/${hash}`);
  await p.locator('main h1').first().waitFor();
}

/** Signs `p` in through the console's form as `email` (an account without MFA) and waits for the console. */
export async function signInWith(p: Page, baseUrl: string, email: string): Promise<void> {
  await p.goto(`${baseUrl}/console`);
  await p.fill('#email', email);
  await p.fill('#password', PASSWORD);
  await p.click('button[type=submit]');
  await p.locator('nav[aria-label=Console]').waitFor({ state: 'attached' });
}
