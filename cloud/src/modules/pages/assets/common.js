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

export async function api(method, path, { body, token } = {}) {
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
  return { status: res.status, ok: res.ok, data };
}

export function formatDate(lang, iso, timeZone) {
  if (!iso) return '';
  return new Intl.DateTimeFormat(lang, {
    dateStyle: 'medium',
    timeStyle: 'short',
    ...(timeZone ? { timeZone } : {}),
  }).format(new Date(iso));
}

export function render(...nodes) {
  const app = document.getElementById('app');
  app.replaceChildren(...nodes.flat().filter(Boolean));
}
