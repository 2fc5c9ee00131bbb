// What a guest's pages show: the invitation page, beyond the guest by token, who invites, in which language, when
// (written out in the event's time zone), the add-to-calendar file and the QR ticket; the check-in
// link's landing page, whom and what the link is for.
import QRCode from 'qrcode';
import type { Branding, GuestInvitation, LinkLanding, PersonLocale } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { AppError, notFound } from '../../http/errors.js';
import { createRateLimiter } from '../../http/rate-limit.js';
import type { RequestMeta } from '../../http/request-context.js';
import type { Tx } from '../../infra/db/index.js';
import { createCheckinLimits } from '../checkin/limits.js';
import { firstName } from '../checkin/record.js';
import { eventByToken } from '../events/service.js';
import { writtenWhen } from '../pages/language.js';
import { calendarFileName, guestCalendar } from './calendar.js';
import { guestLocale } from './locale.js';
import { PUBLIC_GUEST_LIMITS } from './service.js';
import { guestLinks, toPublicGuest } from './wire.js';

type Deps = Pick<AppDeps, 'db' | 'clock' | 'config'>;

export const calendarPath = (eventToken: string, guestToken: string) =>
  `/v1/events/${encodeURIComponent(eventToken)}/guests/${encodeURIComponent(guestToken)}/calendar.ics`;

type Db = AppDeps['db']['prisma'];

/** The event and guest an invitation's two tokens name; null when they name none (or not together). */
export async function invitationOf(prisma: Db, eventToken: string, guestToken: string) {
  const event = await eventByToken(prisma as Pick<Tx, 'event'>, eventToken).catch((error: unknown) => {
    if (error instanceof AppError && error.status === 404) return null;
    throw error;
  });
  if (!event) return null;
  const guest = await prisma.guest.findUnique({ where: { guestToken } });
  if (!guest || guest.eventId !== event.id || guest.deletedAt) return null;
  return { event, guest };
}

/** The guest a check-in link names, with its event; null when removed, or its event or tenant is gone. */
export async function guestByLink(prisma: Db, linkToken: string) {
  const found = await prisma.guest.findUnique({
    where: { linkToken },
    include: { event: true, tenant: { select: { status: true } } },
  });
  const gone = !found || found.deletedAt || found.event.deletedAt || found.tenant.status !== 'active';
  return gone ? null : found;
}

export function createInvitationPage(deps: Deps) {
  const { prisma } = deps.db;
  const limiter = createRateLimiter(deps.db, deps.clock);
  const checkinLimits = createCheckinLimits(deps);

  /** The event and guest the two tokens name, counted against the address's public reads. */
  async function byTokens(eventToken: string, guestToken: string, meta: RequestMeta) {
    await limiter.enforce(`guests:read:${meta.ip}`, PUBLIC_GUEST_LIMITS.read);
    const found = await invitationOf(prisma, eventToken, guestToken);
    if (!found) throw notFound('Guest');
    return found;
  }

  return {
    async view(
      eventToken: string,
      guestToken: string,
      meta: RequestMeta,
      asked: { lang?: PersonLocale; acceptLanguage?: string | null },
    ): Promise<GuestInvitation> {
      const { event, guest } = await byTokens(eventToken, guestToken, meta);
      const chosen = await guestLocale(prisma, event, guest, asked.acceptLanguage);
      const locale = asked.lang ?? chosen.locale;
      const url = guestLinks(deps.config.publicUrl, event, guest).checkinUrl;
      return {
        ...toPublicGuest(guest, event),
        locale,
        organisation: { name: chosen.organisation.name },
        when: event.startsAt ? writtenWhen(locale, event.startsAt, event.timeZone, deps.clock.now()) : null,
        calendarUrl: event.startsAt ? calendarPath(eventToken, guestToken) : null,
        ticket: {
          url,
          qrCode: await QRCode.toDataURL(url, { errorCorrectionLevel: 'M', margin: 2, width: 320 }),
        },
      };
    },

    /**
     * The invitation as an iCalendar file and its name (the event's); 404 while the event has no start
     * (no entry to make).
     */
    async calendar(
      eventToken: string,
      guestToken: string,
      meta: RequestMeta,
    ): Promise<{ fileName: string; body: string }> {
      const { event, guest } = await byTokens(eventToken, guestToken, meta);
      if (!event.startsAt) throw notFound('Event date');
      const organisation = (await guestLocale(prisma, event, guest)).organisation;
      const links = guestLinks(deps.config.publicUrl, event, guest);
      const place = [event.venueName, event.venueAddress].filter(Boolean).join(', ');
      const fileName = calendarFileName(event.name, event.startsAt, event.timeZone);
      const body = guestCalendar({
        guestId: guest.id,
        eventId: event.id,
        host: new URL(deps.config.publicUrl).hostname,
        summary: event.name,
        description: [organisation.name, event.description, links.confirmUrl].filter(Boolean).join('\n\n'),
        location: place || null,
        url: links.confirmUrl,
        start: event.startsAt,
        end: event.endsAt,
        stamp: deps.clock.now(),
      });
      return { fileName, body };
    },

    /**
     * The landing of a check-in link: the guest's first name, organisation, event and language. Records
     * nothing; a link that resolves to nothing counts as a guess, as the check-in itself does.
     */
    async landing(
      actor: ActorOf<'public'>,
      token: string,
      meta: RequestMeta,
      asked: { lang?: PersonLocale; acceptLanguage?: string | null },
    ): Promise<LinkLanding> {
      const guest = await checkinLimits.lookup(actor, meta.ip, () => guestByLink(prisma, token));
      if (!guest) throw notFound('Check-in link');
      const { event } = guest;
      const chosen = await guestLocale(prisma, event, guest, asked.acceptLanguage);
      const locale = asked.lang ?? chosen.locale;
      return {
        locale,
        organisation: { name: chosen.organisation.name },
        guest: { displayName: firstName(guest.name) },
        event: {
          name: event.name,
          status: event.status as LinkLanding['event']['status'],
          when: event.startsAt ? writtenWhen(locale, event.startsAt, event.timeZone, deps.clock.now()) : null,
          venue: [event.venueName, event.venueAddress].filter(Boolean).join(', ') || null,
          colors: {
            primary: (event.branding as Branding).primaryColor ?? null,
            text: (event.branding as Branding).secondaryColor ?? null,
          },
        },
      };
    },
  };
}
