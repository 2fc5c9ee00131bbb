// Shared by the person-facing pages: language choice, the text dictionary, DOM building and API calls.
import { TEXTS } from './texts.js';

export const LANGUAGES = ['en', 'pt-BR'];

/** `?lang=` wins (and is remembered), then the remembered choice, then the page's or browser's language. */
export function chooseLanguage(fallback) {
  const asked = new URLSearchParams(location.search).get('lang');
  if (asked && LANGUAGES.includes(asked)) {
    localStorage.setItem('portico.lang', asked);
    return asked;
  }
  const kept = localStorage.getItem('portico.lang');
  if (kept && LANGUAGES.includes(kept)) return kept;
  const wanted = (fallback ?? navigator.language ?? 'en').toLowerCase();
  return wanted.startsWith('pt') ? 'pt-BR' : 'en';
}

/**
 * The language of a page the service chose for a guest (`served`: the event's, else the tenant's, then
 * the guest's saved one and the browser's): only the person's own choice on the page (`?lang=`) wins.
 */
export function pageLanguage(served) {
  const asked = new URLSearchParams(location.search).get('lang');
  if (asked && LANGUAGES.includes(asked)) return asked;
  if (served && LANGUAGES.includes(served)) return served;
  return (navigator.language ?? 'en').toLowerCase().startsWith('pt') ? 'pt-BR' : 'en';
}

/** `?lang=` to pass on to the API, when the person chose a language on the page. */
export function askedLanguage() {
  const asked = new URLSearchParams(location.search).get('lang');
  return asked && LANGUAGES.includes(asked) ? `?lang=${encodeURIComponent(asked)}` : '';
}

/** The language the service served the page in (its `<html lang>`, with its title), before any choice here. */
const SERVED = document.documentElement.lang;

export function translator(lang) {
  document.documentElement.lang = lang;
  return (key, vars = {}) =>
    (TEXTS[lang][key] ?? TEXTS.en[key] ?? key).replace(/\{(\w+)\}/g, (_, k) => String(vars[k] ?? ''));
}

/** An element with attributes, properties (`on*` handlers) and children (strings become text, never HTML). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (k === 'text') node.textContent = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

export function header(t, lang, title) {
  // The service titled the page in the language it chose; another choice here (one remembered) retitles it.
  if (lang !== SERVED) document.title = title;
  const link = (code, label) => {
    const url = new URL(location.href);
    url.searchParams.set('lang', code);
    return el(
      'a',
      { href: url.pathname + url.search, 'aria-current': code === lang ? 'true' : 'false' },
      label,
    );
  };
  return el(
    'header',
    { class: 'top' },
    el('h1', {}, title),
    el('nav', { class: 'lang', 'aria-label': t('language') }, link('en', 'EN'), link('pt-BR', 'PT')),
  );
}

export function notice(kind, text) {
  return el('div', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

/** A wait the pages sit out by themselves; a longer `Retry-After` is shown as an error instead. */
const MAX_WAIT_SECONDS = 90;
/** Waits in a row before the page gives up and says so. */
const MAX_WAITS = 5;

/**
 * Calls the API. A 429 (a limit refuses before anything is done, so a retry is safe) is waited out as
 * its `Retry-After` says, with a notice that counts down, and tried again, up to `MAX_WAITS` times.
 */
export async function api(method, path, { body, token } = {}) {
  for (let waits = 0; ; waits++) {
    const res = await call(method, path, body, token);
    if (res.status !== 429 || waits >= MAX_WAITS) return res;
    const seconds = Math.max(1, Number(res.retryAfter) || res.data?.retryAfterSeconds || 5);
    if (seconds > MAX_WAIT_SECONDS) return res;
    // Up to 1.5 s more at random, so a crowd refused in the same second does not come back together.
    await waitOut(seconds * 1000 + Math.random() * 1500);
  }
}

async function call(method, path, body, token) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    return { status: 0, ok: false, data: { code: 'network_error' } };
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  return { status: res.status, ok: res.ok, data, retryAfter: res.headers.get('retry-after') };
}

/** Shows "please wait" above the page, counting down the seconds, for `ms`. */
async function waitOut(ms) {
  const texts = TEXTS[document.documentElement.lang] ?? TEXTS.en;
  const banner =
    document.getElementById('wait') ?? el('div', { id: 'wait', class: 'notice wait', role: 'status' });
  document.body.prepend(banner);
  const end = Date.now() + ms;
  for (let left = ms; left > 0; left = end - Date.now()) {
    banner.textContent = texts.waitRetry.replace('{seconds}', String(Math.ceil(left / 1000)));
    await new Promise((resolve) => setTimeout(resolve, Math.min(left, 1000)));
  }
  banner.remove();
}

/**
 * What to tell the person about a failed call: no connection, too many tries, or that something went
 * wrong, with the service's code on a line of its own for support staff (a code, not a word of the
 * sentence: it is in no language).
 */
export function problemText(t, res) {
  if (res.status === 0) return t('networkError');
  if (res.status === 429) return t('rateLimited');
  const code = String(res.data?.code ?? res.status);
  return [
    t('genericError'),
    el('small', { class: 'code' }, t('errorCode'), ' ', el('code', { translate: 'no' }, code)),
  ];
}

export function formatDate(lang, iso, timeZone) {
  if (!iso) return '';
  return new Intl.DateTimeFormat(lang, {
    dateStyle: 'medium',
    timeStyle: 'short',
    ...(timeZone ? { timeZone } : {}),
  }).format(new Date(iso));
}

/** A quality score as the language writes it, two decimals: "0.79" in English, "0,79" in Portuguese. */
export function formatScore(lang, n) {
  if (n === null || n === undefined || Number.isNaN(Number(n))) return '';
  return new Intl.NumberFormat(lang, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(
    Number(n),
  );
}

export function render(...nodes) {
  const app = document.getElementById('app');
  app.replaceChildren(...nodes.flat().filter(Boolean));
}
