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

/** A guest of an event: the event's language (its own, else the tenant's), their saved one, the browser's. */
export async function guestLocale(
  prisma: Db,
  event: { tenantId: string; branding: unknown },
  guest: { email: string | null },
  browser?: string | null,
) {
  const organisation = await organisationOf(prisma, event.tenantId);
  const locale = personLocale({
    event: eventLocale(event.branding, organisation.defaultLocale),
    saved: await savedLanguageOf(prisma, guest.email),
    browser,
    tenantDefault: organisation.defaultLocale,
  });
  return { organisation, locale };
}
