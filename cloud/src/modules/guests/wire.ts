// Guest rows <-> wire shapes: the admin view (every field, with the personal links) and the public
// views, which never carry document, phone, birth date, e-mail or biometric data.
import type { Guest as GuestWire, GuestStatus } from '@portico/contract';
import type { Event, Guest } from '../../generated/prisma/client.js';
import { firstName } from '../checkin/record.js';
import { toPublicBranding } from '../events/service.js';

const base = (publicUrl: string) => publicUrl.replace(/\/$/, '');

/** The invitation's confirmation page (served by the portal) and its check-in link. */
export function guestLinks(
  publicUrl: string,
  event: Pick<Event, 'publicToken'>,
  guest: Pick<Guest, 'guestToken' | 'linkToken'>,
) {
  return {
    confirmUrl: `${base(publicUrl)}/e/${event.publicToken}/g/${guest.guestToken}`,
    checkinUrl: `${base(publicUrl)}/v1/public/checkin/link/${guest.linkToken}`,
  };
}

export function toGuestWire(g: Guest, event: Pick<Event, 'publicToken'>, publicUrl: string): GuestWire {
  return {
    id: g.id,
    eventId: g.eventId,
    personId: g.personId,
    name: g.name,
    email: g.email,
    phone: g.phone,
    document: g.document,
    birthDate: g.birthDate ? g.birthDate.toISOString().slice(0, 10) : null,
    status: g.status as GuestStatus,
    guestToken: g.guestToken,
    ...guestLinks(publicUrl, event, g),
    invitedAt: g.invitedAt?.toISOString() ?? null,
    inviteCount: g.inviteCount,
    lastInviteError: g.lastInviteError,
    confirmedAt: g.confirmedAt?.toISOString() ?? null,
    checkedInAt: g.checkedInAt?.toISOString() ?? null,
    createdAt: g.createdAt.toISOString(),
    updatedAt: g.updatedAt.toISOString(),
  };
}

/** A guest by token: first name, status and the event's public face. */
export function toPublicGuest(g: Guest, event: Event) {
  return {
    displayName: firstName(g.name),
    status: g.status as GuestStatus,
    confirmedAt: g.confirmedAt?.toISOString() ?? null,
    checkedInAt: g.checkedInAt?.toISOString() ?? null,
    event: toPublicBranding(event),
  };
}
