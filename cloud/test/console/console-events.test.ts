// The console's event form and its errors in real Chromium against the real cloud, in Brazilian
// Portuguese: times typed in the event's time zone (named beside them), an end before the start said
// before anything is sent, a capacity below the guests already in refused by the API and said in
// Portuguese (the code only in the support details), a draft's invitations offered as "publish and
// invite" (mailed through a real SMTP exchange only once published), closing asked first. Laptop and
// 390 px phone. Screenshots go to test/console/screenshots/ only with UPDATE_SCREENSHOTS=1.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { HAS_CHROMIUM, launchChromium } from '../support/chromium.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp.js';
import { bearer, login, newTenant } from '../support/identity.js';
import { LAPTOP, newConsolePage, screen, shot, signInWith } from './support.js';

const PHONE = { width: 390, height: 844 };
const ZONE = 'America/Sao_Paulo';
const ZONE_SHOWN = 'America/Sao Paulo';

let app: TestApp;
let smtp: SmtpSink;
let browser: Browser;
const cspViolations: string[] = [];
const org = { email: '', headers: {} as Record<string, string> };
let eventId = '';

/** A dialog as a person sees it: the screen, not the whole page behind the backdrop. */
const apiEvent = async () =>
  (await app.request('GET', `/v1/events/${eventId}`, { headers: org.headers })).body as {
    status: string;
    startsAt: string;
    endsAt: string;
    timeZone: string;
    capacity: number | null;
  };

async function signedIn(viewport = LAPTOP): Promise<Page> {
  const p = await newConsolePage(browser, 'pt-BR', cspViolations, viewport);
  await signInWith(p, app.url, org.email);
  return p;
}

async function openEvent(p: Page, name: string) {
  await p.goto(`${app.url}/console#/events`);
  await p.locator('#events tbody tr', { hasText: name }).getByRole('button').click();
  await p.locator('#event-when').waitFor();
}

/** The alert's sentence, and the whole alert as read (its closed support details show no code). */
const alertOf = async (p: Page) => ({
  message: await p.locator('[role=alert] .error-message').innerText(),
  shown: await p.locator('[role=alert]').innerText(),
  code: await p.locator('[role=alert]').getAttribute('data-code'),
});

describe.skipIf(!HAS_CHROMIUM)('admin console: event form, errors and invitations (pt-BR)', () => {
  beforeAll(async () => {
    smtp = await startSmtpSink();
    app = await createTestApp({ env: { SMTP_URL: smtp.url } });
    browser = await launchChromium();
    const tenant = await newTenant(app);
    const { token } = await login(app, tenant.adminEmail);
    Object.assign(org, { email: tenant.adminEmail, headers: bearer(token) });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await smtp?.close();
  });

  it('types the times in the chosen time zone, names it beside them, and says an end before the start before sending', async () => {
    const p = await signedIn();
    await p.goto(`${app.url}/console#/events`);
    await p.click('#new-event');
    await p.fill('#event-name', 'Noite de Lançamento');
    await p.selectOption('#event-zone', ZONE);
    await expect
      .poll(() => p.locator('label:has(#event-starts)').innerText())
      .toContain(`Início (${ZONE_SHOWN})`);
    expect(await p.locator('label:has(#event-zone)').innerText()).toContain(
      'O início e o fim acima são horários neste fuso.',
    );
    await p.fill('#event-starts', '2026-12-03T19:00');
    await p.fill('#event-ends', '2026-12-03T18:00');
    await p.click('#save-event');
    await expect
      .poll(() => alertOf(p))
      .toEqual({
        message: 'O evento não pode terminar antes de começar. Confira o início e o término.',
        shown: expect.not.stringContaining('ends_before_start'),
        code: 'ends_before_start',
      });
    expect((await app.request('GET', '/v1/events', { headers: org.headers })).body.items).toHaveLength(0);
    await shot(p, 'event-form-zone-error-pt-BR');

    await p.fill('#event-ends', '2026-12-03T23:30');
    await p.click('#save-event');
    await p.locator('#event-when').waitFor();
    const events = (await app.request('GET', '/v1/events', { headers: org.headers })).body.items;
    eventId = events[0].id;
    // 19:00 in São Paulo (UTC-3) is 22:00 UTC, whatever zone the browser is in.
    expect(await apiEvent()).toMatchObject({
      timeZone: ZONE,
      startsAt: '2026-12-03T22:00:00.000Z',
      endsAt: '2026-12-04T02:30:00.000Z',
    });
    expect(await p.locator('#event-when').innerText()).toBe(
      `03/12/2026, 19:00 (${ZONE_SHOWN}) – 03/12/2026, 23:30 (${ZONE_SHOWN})`,
    );
    await p.getByRole('button', { name: 'Configurar' }).click();
    expect(await p.inputValue('#event-starts')).toBe('2026-12-03T19:00');
    expect(await p.inputValue('#event-zone')).toBe(ZONE);
    await p.getByRole('button', { name: 'Cancelar', exact: true }).click();
    await p.context().close();
  });

  it('offers a draft’s invitations as "publish and invite": nothing is mailed before, and the links work after', async () => {
    for (const [name, email] of [
      ['Ana Souza', 'ana@example.com'],
      ['João Reis', 'joao@example.com'],
    ]) {
      const res = await app.request('POST', `/v1/events/${eventId}/guests`, {
        headers: org.headers,
        body: { name, email },
      });
      expect(res.status, res.text).toBe(201);
    }
    const p = await signedIn();
    await openEvent(p, 'Noite de Lançamento');
    expect(await p.locator('#draft-invite-note').innerText()).toBe(
      'Este evento é um rascunho: os links dos convites só funcionam depois de publicado. Nada é enviado até você publicá-lo.',
    );
    expect(await p.locator('#invite').count()).toBe(0);
    await shot(p, 'event-draft-invite-pt-BR');
    await p.click('#publish-invite');
    const dialog = p.locator('dialog[open]');
    expect(await dialog.locator('#confirm-title').innerText()).toBe(
      'Publicar Noite de Lançamento e enviar os convites?',
    );
    await screen(p, 'event-publish-invite-dialog-pt-BR');
    expect(smtp.messages).toHaveLength(0);
    await dialog.getByRole('button', { name: 'Publicar e convidar' }).click();
    await expect
      .poll(() => p.locator('[role=status]').innerText())
      .toBe('Enviados 2, ignorados 0, com erro 0.');
    expect(smtp.messages).toHaveLength(2);
    expect((await apiEvent()).status).toBe('published');
    await expect.poll(() => p.locator('main > p').first().innerText()).toContain('publicado');
    expect(await p.locator('#invite').count()).toBe(1);
    // The confirmation link in a mail answers (a draft's would be "not valid").
    const raw = smtp.messages[0]!.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    const [, eventToken, guestToken] = /\/e\/(ev_[\w-]+)\/g\/([\w-]+)/.exec(raw)!;
    const page = await app.request('GET', `/v1/events/${eventToken}/guests/${guestToken}`);
    expect(page.status, page.text).toBe(200);
    await p.context().close();
  });

  for (const [viewport, suffix] of [
    [LAPTOP, ''],
    [PHONE, '-390'],
  ] as const) {
    it(`says in Portuguese, without the raw code, that the capacity cannot go below the guests in${suffix}`, async () => {
      if ((await apiEvent()).status !== 'open') {
        await app.request('PATCH', `/v1/events/${eventId}/status`, {
          headers: org.headers,
          body: { status: 'open' },
        });
        const guests = await app.request('GET', `/v1/events/${eventId}/guests`, { headers: org.headers });
        for (const g of guests.body.items) {
          const res = await app.request('POST', '/v1/checkin/manual', {
            headers: org.headers,
            body: { guestId: g.id, eventId },
          });
          expect(res.body.outcome, res.text).toBe('success');
        }
      }
      const p = await signedIn(viewport);
      await openEvent(p, 'Noite de Lançamento');
      await p.getByRole('button', { name: 'Configurar' }).click();
      await p.fill('#event-capacity', '1');
      await p.click('#save-event');
      await expect
        .poll(() => alertOf(p))
        .toEqual({
          message: 'A capacidade não pode ser menor que os 2 convidados que já entraram.',
          shown: expect.not.stringMatching(/capacity_below_checked_in|\(\w+_\w+\)/),
          code: 'capacity_below_checked_in',
        });
      expect((await apiEvent()).capacity).toBeNull();
      // The code and request id are there for support, behind a closed "details".
      await p.locator('[role=alert] summary').click();
      expect(await p.locator('[role=alert] code').innerText()).toMatch(/^capacity_below_checked_in · req_/);
      await p.locator('[role=alert] summary').click();
      await p.locator('[role=alert]').scrollIntoViewIfNeeded();
      await shot(p, `event-capacity-error-pt-BR${suffix}`);
      expect(
        await p.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
      ).toBe(0);
      await p.context().close();
    });
  }

  for (const [viewport, suffix] of [
    [LAPTOP, ''],
    [PHONE, '-390'],
  ] as const) {
    it(`asks before closing the event; cancelling keeps it open${suffix}`, async () => {
      const p = await signedIn(viewport);
      await openEvent(p, 'Noite de Lançamento');
      await p.click('#status-closed');
      const dialog = p.locator('dialog[open]');
      expect(await dialog.locator('#confirm-title').innerText()).toBe('Encerrar Noite de Lançamento?');
      expect(await dialog.locator('#confirm-text').innerText()).toContain('As entradas param');
      await screen(p, `event-close-confirm-pt-BR${suffix}`);
      await dialog.getByRole('button', { name: 'Cancelar', exact: true }).click();
      await dialog.waitFor({ state: 'detached' });
      expect((await apiEvent()).status).toBe('open');
      if (suffix) {
        await p.click('#status-closed');
        await p.locator('dialog[open]').getByRole('button', { name: 'Encerrar o evento' }).click();
        await expect.poll(async () => (await apiEvent()).status).toBe('closed');
        await expect.poll(() => p.locator('main > p').first().innerText()).toContain('encerrado');
      }
      await p.context().close();
    });
  }

  it('asks before cancelling an event, says it is final, and keeps it when asked to', async () => {
    const made = await app.request('POST', '/v1/events', {
      headers: org.headers,
      body: { name: 'Evento Adiado', startsAt: '2026-12-10T22:00:00.000Z' },
    });
    expect(made.status, made.text).toBe(201);
    const status = async () =>
      (
        (await app.request('GET', `/v1/events/${made.body.id}`, { headers: org.headers })).body as {
          status: string;
        }
      ).status;
    const p = await signedIn();
    await openEvent(p, 'Evento Adiado');
    await p.click('#status-cancelled');
    const dialog = p.locator('dialog[open]');
    expect(await dialog.locator('#confirm-title').innerText()).toBe('Cancelar Evento Adiado?');
    expect(await dialog.locator('#confirm-text').innerText()).toContain('não pode ser reaberto');
    await screen(p, 'event-cancel-confirm-pt-BR');
    await dialog.getByRole('button', { name: 'Manter o evento' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await status()).toBe('draft');
    await p.click('#status-cancelled');
    await p.locator('dialog[open]').getByRole('button', { name: 'Cancelar o evento' }).click();
    await expect.poll(status, { timeout: 10_000 }).toBe('cancelled');
    await expect
      .poll(() => p.locator('main > p').first().innerText(), { timeout: 10_000 })
      .toContain('cancelado');
    // Nothing more to do with it: no status button is left.
    expect(await p.locator('[id^=status-]').count()).toBe(0);
    await p.context().close();
  });

  it('met no Content-Security-Policy violation', () => {
    expect(cspViolations).toEqual([]);
  });
});
