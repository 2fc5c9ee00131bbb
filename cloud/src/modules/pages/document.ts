// The HTML the service writes itself for a person: the shell of each page, whose language and title are
// set before its script runs (screen readers and the browser's translation offer read them at once),
// and the pages without a script (the QR code's). Words come from the pages' own dictionary
// (assets/texts.js); every text is escaped, never HTML.
import type { PersonLocale } from '@portico/contract';
import { TEXTS } from './assets/texts.js';

/** A text of the pages' dictionary in `lang` (else English), `{placeholders}` filled, as the pages' `t()`. */
export function pageText(lang: PersonLocale, key: string, vars: Record<string, string> = {}): string {
  const text = TEXTS[lang][key] ?? TEXTS.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name: string) => vars[name] ?? '');
}

/** A page's title: what it is, then what it is about ("Convite — Noite de Gala"). */
export function pageTitle(lang: PersonLocale, key: string, about?: string | null): string {
  const title = pageText(lang, key);
  return about ? `${title} — ${about}` : title;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

export interface PageDocument {
  lang: PersonLocale;
  title: string;
  /** The page's ES module under /pages/assets/, which fills `<main>`. */
  script?: string;
  /** What a page without a script says: a heading and its paragraphs. */
  content?: { heading: string; paragraphs: readonly string[] };
  /** Kept out of search engines (a page behind a personal code). */
  noindex?: boolean;
}

export function pageDocument(page: PageDocument): string {
  const main = page.content
    ? `<main><section class="card"><h1>${escapeHtml(page.content.heading)}</h1>` +
      page.content.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('') +
      '</section></main>'
    : '<main id="app" aria-live="polite"></main>';
  return `<!doctype html>
<html lang="${page.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${page.noindex ? '<meta name="robots" content="noindex">\n' : ''}<title>${escapeHtml(page.title)}</title>
<link rel="stylesheet" href="/pages/assets/style.css">
${page.script ? `<script type="module" src="/pages/assets/${page.script}"></script>\n` : ''}</head>
<body>${main}</body>
</html>`;
}
