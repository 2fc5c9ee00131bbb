// The language a guest or person is served in, and dates written out for them, shared by the
// person-facing pages and the mails sent to guests and persons (one order, one wording everywhere).
import { PERSON_LOCALES, type PersonLocale } from '@portico/contract';

/** A supported language for a tag (`pt`, `pt-PT`, `pt-BR` -> `pt-BR`; `en-GB` -> `en`), else null. */
export function supportedLocale(tag: string | null | undefined): PersonLocale | null {
  if (!tag) return null;
  const lower = tag.trim().toLowerCase();
  if (lower.startsWith('pt')) return 'pt-BR';
  if (lower.startsWith('en')) return 'en';
  return (PERSON_LOCALES as readonly string[]).includes(tag) ? (tag as PersonLocale) : null;
}

/** The first supported language of an `Accept-Language` header, by its q-values. */
export function acceptedLocale(header: string | null | undefined): PersonLocale | null {
  if (!header) return null;
  const ranked = header
    .split(',')
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find(Boolean);
      return { tag: tag!.trim(), q: q === undefined ? 1 : Number(q), i };
    })
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const r of ranked) {
    const locale = supportedLocale(r.tag);
    if (locale) return locale;
  }
  return null;
}

/** An event's language: its own `branding.locale`, else the tenant's default. */
export function eventLocale(branding: unknown, tenantDefault: PersonLocale): PersonLocale {
  const own = (branding as { locale?: unknown } | null)?.locale;
  return supportedLocale(typeof own === 'string' ? own : null) ?? tenantDefault;
}

/**
 * Whom a page or mail speaks to, first answer wins: the event's language (its own, else the tenant's
 * default), the guest's or person's saved language, the browser's, then the tenant's default.
 */
export function personLocale(choice: {
  event?: PersonLocale | null;
  saved?: string | null;
  browser?: string | null;
  tenantDefault: PersonLocale;
}): PersonLocale {
  return (
    choice.event ?? supportedLocale(choice.saved) ?? acceptedLocale(choice.browser) ?? choice.tenantDefault
  );
}

const DATE_LOCALE: Record<PersonLocale, string> = { en: 'en-GB', 'pt-BR': 'pt-BR' };

/**
 * An instant written out in `timeZone` for a person: "sábado, 29 de novembro, 19:00 (Horário Padrão de
 * Brasília)", "Saturday, 29 November, 19:00 (Brasilia Standard Time)". The year is added when it is
 * not `now`'s year there.
 */
export function writtenWhen(lang: PersonLocale, at: Date, timeZone: string, now?: Date): string {
  const locale = DATE_LOCALE[lang];
  const yearOf = (d: Date) => new Intl.DateTimeFormat('en', { year: 'numeric', timeZone }).format(d);
  const withYear = now !== undefined && yearOf(now) !== yearOf(at);
  const weekday = new Intl.DateTimeFormat(locale, { weekday: 'long', timeZone }).format(at);
  const day = new Intl.DateTimeFormat(locale, {
    day: 'numeric',
    month: 'long',
    ...(withYear ? { year: 'numeric' } : {}),
    timeZone,
  }).format(at);
  const time = new Intl.DateTimeFormat(locale, {
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZone,
  }).format(at);
  const zone =
    new Intl.DateTimeFormat(locale, { timeZone, timeZoneName: 'long' })
      .formatToParts(at)
      .find((p) => p.type === 'timeZoneName')?.value ?? timeZone;
  return `${weekday}, ${day}, ${time} (${zone})`;
}
