// The language and title each person page is served with, decided before its script runs: the order
// its own API call follows (modules/guests/locale.ts), the page's `?lang=` first as on the page. A token
// is looked up as a check-in link's is (one that resolves to nothing counts as a guess of the address);
// a page whose token names nothing, or an address out of guesses, speaks the browser's language.
import { PERSON_LOCALES, type PersonLocale } from '@portico/contract';
import type { Request } from 'express';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { createCheckinLimits } from '../checkin/limits.js';
import { activeQrCode } from '../checkin/qr-code.js';
import { personLocaleOf } from '../guests/locale.js';
import { guestByLink, invitationOf } from '../guests/invitation-page.js';
import { usableToken } from '../onboarding/tokens.js';
import { pageTitle } from './document.js';
import { acceptedLocale } from './language.js';

export interface PageHead {
  lang: PersonLocale;
  title: string;
}

type Deps = Pick<AppDeps, 'db' | 'clock'>;

/** The language the person chose on the page (`?lang=`), as the pages take it. */
function askedOn(req: Request): PersonLocale | null {
  const asked = req.query.lang;
  return typeof asked === 'string' && (PERSON_LOCALES as readonly string[]).includes(asked)
    ? (asked as PersonLocale)
    : null;
}

/** Without a token that names someone: the page's choice, else the browser's, else English. */
const unknownTo = (req: Request) =>
  askedOn(req) ?? acceptedLocale(req.get('accept-language')) ?? ('en' as PersonLocale);

export function createPageHeads(deps: Deps) {
  const { prisma } = deps.db;
  const guesses = createCheckinLimits(deps);

  /** `find`'s answer, a miss counted as a guess of the address; null once the address is out of guesses. */
  async function lookup<T>(req: Request, find: () => Promise<T | null>): Promise<T | null> {
    try {
      return await guesses.lookup({ kind: 'public' }, req.ip ?? 'unknown', find);
    } catch (error) {
      if (error instanceof AppError && error.status === 429) return null;
      throw error;
    }
  }

  /**
   * The head in the language of whom the page speaks to (`whom`), or the browser's without one; titled
   * with what the page is about (`about`, given the organisation's name), when anything.
   */
  async function headFor(
    req: Request,
    titleKey: string,
    whom: (Parameters<typeof personLocaleOf>[1] & { about: (organisation: string) => string | null }) | null,
  ): Promise<PageHead> {
    if (!whom) {
      const lang = unknownTo(req);
      return { lang, title: pageTitle(lang, titleKey) };
    }
    const chosen = await personLocaleOf(prisma, { ...whom, browser: req.get('accept-language') });
    const lang = askedOn(req) ?? chosen.locale;
    return { lang, title: pageTitle(lang, titleKey, whom.about(chosen.organisation.name)) };
  }

  return {
    /** `/e/{eventToken}/g/{guestToken}`: "Convite — Noite de Gala". */
    async invitation(req: Request, eventToken: string, guestToken: string): Promise<PageHead> {
      const found = await lookup(req, () => invitationOf(prisma, eventToken, guestToken));
      return headFor(
        req,
        'invitationTitle',
        found && {
          tenantId: found.event.tenantId,
          event: found.event,
          email: found.guest.email,
          about: () =>
            (found.event.branding as { displayName?: string } | null)?.displayName ?? found.event.name,
        },
      );
    },

    /** `/c/{linkToken}`: "Check-in — Noite de Gala". */
    async checkinLink(req: Request, linkToken: string): Promise<PageHead> {
      const guest = await lookup(req, () => guestByLink(prisma, linkToken));
      return headFor(
        req,
        'checkinTitle',
        guest && {
          tenantId: guest.tenantId,
          event: guest.event,
          email: guest.email,
          about: () => guest.event.name,
        },
      );
    },

    /** `/enroll?token=`: "Cadastre seu rosto — <organisation>", in the person's language (no event). */
    async enroll(req: Request, token: unknown): Promise<PageHead> {
      const row =
        typeof token === 'string'
          ? await lookup(req, () =>
              usableToken(prisma, token, deps.clock.now()).catch((error: unknown) => {
                if (error instanceof AppError && error.status < 500) return null;
                throw error;
              }),
            )
          : null;
      const person =
        row && (await prisma.person.findUnique({ where: { id: row.personId }, select: { email: true } }));
      return headFor(
        req,
        'enrollTitle',
        row && {
          tenantId: row.tenantId,
          email: person?.email ?? null,
          about: (organisation) => organisation,
        },
      );
    },

    /** The portal speaks to no organisation's person: the page's choice, else the browser's. */
    portal(req: Request, titleKey: 'portalTitle' | 'confirmDeleteTitle'): PageHead {
      const lang = unknownTo(req);
      return { lang, title: pageTitle(lang, titleKey) };
    },

    /**
     * A check-in QR code opened in a browser: the event's language when the code is read for an event
     * (`eventId`), else its holder's saved language, the browser's, the tenant's default.
     */
    async qrCode(req: Request, token: string, eventId: string | undefined): Promise<PageHead> {
      const code = await lookup(req, () => activeQrCode(prisma, token));
      const event =
        code && eventId
          ? await prisma.event.findFirst({
              where: { id: eventId, tenantId: code.tenantId, deletedAt: null },
              select: { branding: true },
            })
          : null;
      return headFor(
        req,
        'qrTitle',
        code && { tenantId: code.tenantId, event, email: code.identity.person.email, about: () => null },
      );
    },
  };
}

export type PageHeads = ReturnType<typeof createPageHeads>;
