// What a person reads or hears on a page in Chromium, and the words of an English dictionary that its
// Portuguese says differently: what the browser tests look for on a Portuguese page.
import type { Page } from 'playwright-core';

/** Every text a person reads or hears on the page: text nodes, labels, placeholders, titles and alt texts. */
export const textsOn = (p: Page) =>
  p.evaluate<string[]>(`(() => {
    const out = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const parent = n.parentElement;
      if (parent && !parent.closest('script, style, code, pre')) out.push((n.textContent ?? '').trim());
    }
    for (const el of document.querySelectorAll('[aria-label], [placeholder], [title], [alt]')) {
      for (const a of ['aria-label', 'placeholder', 'title', 'alt']) {
        const v = el.getAttribute(a);
        if (v) out.push(v.trim());
      }
    }
    return out.filter(Boolean);
  })()`);

/**
 * The words of a text, lower-case ("check-in" and "e-mail" stay one word); `{placeholders}` left out,
 * and tokens with a digit too: a generated name such as "Tenant tmwzpm6on5" holds no word "on".
 */
export function wordsOf(text: string): string[] {
  return (text.replace(/\{\w+\}/g, ' ').match(/[\p{L}\p{N}]+(?:[-'’][\p{L}\p{N}]+)*/gu) ?? [])
    .filter((w) => !/\p{N}/u.test(w))
    .map((w) => w.toLowerCase());
}

/**
 * The words of an English dictionary that its Portuguese one never uses ("link", "e-mail" or "QR" are
 * both): any of them on a Portuguese page is English left behind. Derived, so a new string is covered.
 */
export function englishOnlyWords(
  en: Record<string, string>,
  pt: Record<string, string>,
): ReadonlySet<string> {
  const portuguese = new Set(Object.values(pt).flatMap(wordsOf));
  return new Set(
    Object.values(en)
      .flatMap(wordsOf)
      .filter((w) => !portuguese.has(w)),
  );
}

/** The texts among `texts` holding a word of `english`, each with the words found. */
export function englishIn(texts: readonly string[], english: ReadonlySet<string>): string[] {
  const found = new Set<string>();
  for (const text of texts) {
    const words = wordsOf(text).filter((w) => english.has(w));
    if (words.length) found.add(`${text} [${[...new Set(words)].join(', ')}]`);
  }
  return [...found];
}
