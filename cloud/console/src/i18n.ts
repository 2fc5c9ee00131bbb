// The console's language: the admin's choice (kept in localStorage), else the browser's; every page reads
// `t` while rendering, so switching re-renders all. The words themselves are in texts.ts.
import { ENUM_WORDS, type EnumWords } from '@portico/contract/words';
import { TEXTS, type Lang, type TextKey } from './texts.js';

const KEY = 'portico.console.lang';

export function initialLang(): Lang {
  const kept = localStorage.getItem(KEY);
  if (kept === 'en' || kept === 'pt-BR') return kept;
  return navigator.language.toLowerCase().startsWith('pt') ? 'pt-BR' : 'en';
}

let current: Lang = 'en';

export function setLang(lang: Lang): void {
  current = lang;
  localStorage.setItem(KEY, lang);
  document.documentElement.lang = lang;
}

export function lang(): Lang {
  return current;
}

/** The text for `key`, with `{name}` placeholders filled from `vars`. */
export function t(key: TextKey, vars: Record<string, string | number> = {}): string {
  return TEXTS[current][key].replace(/\{(\w+)\}/g, (_, k: string) => String(vars[k] ?? ''));
}

/** A contract enum's value as a word in the admin's language (`term('guestStatus', g.status)`). */
export function term<K extends keyof EnumWords>(kind: K, value: keyof EnumWords[K]): string {
  return (ENUM_WORDS[current][kind] as Record<keyof EnumWords[K], string>)[value];
}

/** A calendar date in the admin's language. */
export function day(iso: string): string {
  return new Date(iso).toLocaleDateString(current, { dateStyle: 'full' });
}

/** A date and time in the admin's language. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(current, { dateStyle: 'short', timeStyle: 'medium' });
}
