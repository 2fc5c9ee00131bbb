// What a guest or person is addressed with: their organisation's name and the language chosen by the
// one order of modules/pages/language.ts (event, saved language, browser, tenant default).
import type { PersonLocale } from '@portico/contract';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { eventLocale, personLocale, supportedLocale } from '../pages/language.js';
import { tenantSettingsOf } from '../tenants/settings.js';

type Db = Pick<PrismaClient, 'tenant' | 'portalAccount'>;

/**
 * The language saved by the person behind an e-mail address: the language of their data portal's mails,
 * when they chose one. Null when there is none.
 */
export async function savedLanguageOf(prisma: Db, email: string | null): Promise<PersonLocale | null> {
  if (!email) return null;
  const account = await prisma.portalAccount.findUnique({
    where: { email: email.toLowerCase() },
    select: { notificationPreference: { select: { settings: true } } },
  });
  const settings = account?.notificationPreference?.settings as { language?: unknown } | undefined;
  return supportedLocale(typeof settings?.language === 'string' ? settings.language : null);
}

/** The tenant's name and default language. */
export async function organisationOf(prisma: Db, tenantId: string) {
  const tenant = await prisma.tenant.findUniqueOrThrow({
    where: { id: tenantId },
    select: { name: true, settings: true },
  });
  return { name: tenant.name, defaultLocale: tenantSettingsOf(tenant.settings).defaultLocale };
}

/**
 * Whom a page or mail speaks to, and for which organisation: the event's language when there is an event
 * (its own, else the tenant's default), else the person's saved language, the browser's
 * (`Accept-Language`), the tenant's default.
 */
export async function personLocaleOf(
  prisma: Db,
  whom: {
    tenantId: string;
    event?: { branding: unknown } | null;
    email: string | null;
    browser?: string | null;
  },
) {
  const organisation = await organisationOf(prisma, whom.tenantId);
  const locale = personLocale({
    event: whom.event ? eventLocale(whom.event.branding, organisation.defaultLocale) : null,
    saved: await savedLanguageOf(prisma, whom.email),
    browser: whom.browser,
    tenantDefault: organisation.defaultLocale,
  });
  return { organisation, locale };
}

/** A guest of an event: the event's language (its own, else the tenant's), their saved one, the browser's. */
export function guestLocale(
  prisma: Db,
  event: { tenantId: string; branding: unknown },
  guest: { email: string | null },
  browser?: string | null,
) {
  return personLocaleOf(prisma, { tenantId: event.tenantId, event, email: guest.email, browser });
}
