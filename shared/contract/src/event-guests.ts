// Wire types of events and their guests (contract 4.7, 4.8, and the link check-in of 4.6): the admin
// records, the public views by token (branding, confirmed list, guest by token) and the guest import.
// Public views never carry document number, phone, birth date, e-mail or biometric data.
import { Id, PageQuery, pageOf, queryNumber, Text, Timestamp } from './common.js';
import { GeoPoint } from './checkin.js';
import { CheckinMethod, Reentry } from './events.js';
import { PersonLocale } from './tenants.js';
import { z } from './zod.js';

/** Trimmed caller text (the shared `Text`: no NUL, no unpaired surrogates). */
const text = (max: number) => Text.trim().min(1).max(max);

const TimeZone = Text.max(64)
  .refine((tz) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: tz });
      return true;
    } catch {
      return false;
    }
  }, 'not an IANA time zone')
  .openapi({ description: 'IANA time zone the event is held in.', example: 'Europe/Lisbon' });

const Color = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, 'a #rrggbb colour')
  .openapi({ example: '#0b5fff' });

export const EventStatus = z.enum(['draft', 'published', 'open', 'closed', 'cancelled']).openapi({
  description:
    '`draft` being prepared (no public page); `published` public page and confirmations, no check-in by ' +
    'link; `open` doors open: check-ins and confirmations; `closed` over (check-ins denied `event_closed`); ' +
    '`cancelled` called off (final). Transitions: draft -> published | open | cancelled; published -> ' +
    'draft | open | cancelled; open -> closed | cancelled; closed -> open (reopen) | cancelled.',
});
export type EventStatus = z.infer<typeof EventStatus>;

/** Allowed moves of `PATCH /v1/events/{id}/status`; anything else is 409 `invalid_transition`. */
export const EVENT_TRANSITIONS: Record<EventStatus, readonly EventStatus[]> = {
  draft: ['published', 'open', 'cancelled'],
  published: ['draft', 'open', 'cancelled'],
  open: ['closed', 'cancelled'],
  closed: ['open', 'cancelled'],
  cancelled: [],
};

export const Venue = z
  .strictObject({
    name: text(200).optional(),
    address: text(500).optional(),
    location: GeoPoint.optional(),
  })
  .openapi('Venue', { example: { name: 'Centro de Congressos', address: 'Praça das Indústrias, Lisboa' } });

export const Geofence = z
  .strictObject({
    center: GeoPoint,
    radiusMetres: z.number().positive().max(100_000).nullable().optional().openapi({
      description: "Radius in metres; null or absent: the tenant's `geofenceRadiusMetros`.",
    }),
  })
  .openapi('Geofence');

export const Branding = z
  .strictObject({
    displayName: text(200).optional(),
    primaryColor: Color.optional(),
    secondaryColor: Color.optional(),
    logoUrl: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional()
      .openapi({ description: 'http(s) URL of the logo image.', example: 'https://acme.example/logo.png' }),
    welcomeText: text(2000).optional(),
    locale: z
      .string()
      .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'a BCP 47 tag such as pt-BR')
      .optional()
      .openapi({ example: 'pt-BR' }),
  })
  .openapi('Branding', {
    description: 'What kiosks and invitation pages show.',
    example: { displayName: 'Acme Summit', primaryColor: '#0b5fff', welcomeText: 'Welcome!', locale: 'en' },
  });
export type Branding = z.infer<typeof Branding>;

const Methods = z
  .array(CheckinMethod)
  .min(1)
  .refine((m) => new Set(m).size === m.length, 'each method once')
  .openapi({
    description: 'Check-in methods the event admits, each once.',
    uniqueItems: true,
    example: ['facial', 'qr', 'link'],
  });

const Capacity = z.number().int().min(1).max(1_000_000).nullable().openapi({
  description:
    'Most admitted people (distinct persons or guests) and most confirmed guests; null: unlimited.',
});

const EventFields = {
  name: text(200).openapi({ example: 'Acme Summit 2026' }),
  description: text(5000).nullable(),
  startsAt: Timestamp.nullable(),
  endsAt: Timestamp.nullable(),
  timeZone: TimeZone,
  venue: Venue.nullable(),
  branding: Branding,
};

export const CreateEventRequest = z
  .strictObject({
    name: EventFields.name,
    description: EventFields.description.optional(),
    startsAt: EventFields.startsAt.optional(),
    endsAt: EventFields.endsAt.optional(),
    timeZone: TimeZone.optional().openapi({ description: 'Default `UTC`.' }),
    venue: EventFields.venue.optional(),
    capacity: Capacity.optional(),
    checkinMethods: Methods.optional().openapi({ description: 'Default: all four methods.' }),
    geofence: Geofence.nullable().optional(),
    reentry: Reentry.optional(),
    branding: Branding.optional(),
  })
  .openapi('CreateEventRequest', {
    description:
      'A new event starts as `draft`. An `endsAt` before `startsAt` is refused with 400 `ends_before_start`.',
    example: {
      name: 'Acme Summit 2026',
      startsAt: '2026-12-01T09:00:00.000Z',
      endsAt: '2026-12-01T18:00:00.000Z',
      timeZone: 'Europe/Lisbon',
      venue: { name: 'Centro de Congressos', location: { lat: 38.6979, lng: -9.2066 } },
      capacity: 500,
      checkinMethods: ['facial', 'qr', 'link'],
      geofence: { center: { lat: 38.6979, lng: -9.2066 }, radiusMetres: 300 },
      branding: { displayName: 'Acme Summit', primaryColor: '#0b5fff', locale: 'en' },
    },
  });
export type CreateEventRequest = z.infer<typeof CreateEventRequest>;

export const UpdateEventRequest = z
  .strictObject(EventFields)
  .partial()
  .openapi('UpdateEventRequest', {
    description:
      'Only the fields sent change; null clears an optional one. Check-in rules go through `/config`, ' +
      'the status through `/status`. The dates are checked with the stored ones: an end before the start ' +
      'is refused with 400 `ends_before_start`.',
    example: { description: 'Doors at 08:30.', branding: { welcomeText: 'Bem-vindo!' } },
  });
export type UpdateEventRequest = z.infer<typeof UpdateEventRequest>;

export const EventConfigRequest = z
  .strictObject({
    checkinMethods: Methods,
    capacity: Capacity,
    geofence: Geofence.nullable(),
    reentry: Reentry,
  })
  .partial()
  .refine(
    (c) => Object.keys(c).length > 0,
    'send at least one of checkinMethods, capacity, geofence, reentry',
  )
  .openapi('EventConfigRequest', {
    description:
      'Check-in rules, one field at least; they apply to the next check-in. Null capacity or geofence removes it.',
    minProperties: 1,
    example: { checkinMethods: ['facial', 'link'], capacity: 800, reentry: 'refuse' },
  });
export type EventConfigRequest = z.infer<typeof EventConfigRequest>;

export const EventStatusRequest = z
  .strictObject({ status: EventStatus })
  .openapi('EventStatusRequest', { example: { status: 'open' } });

export const Event = z
  .object({
    id: Id,
    name: z.string(),
    description: z.string().nullable(),
    status: EventStatus,
    startsAt: Timestamp.nullable(),
    endsAt: Timestamp.nullable(),
    timeZone: z.string(),
    venue: z
      .object({
        name: z.string().nullable(),
        address: z.string().nullable(),
        // A union, not .nullable(): the OpenAPI generator writes a nullable reference as an allOf that
        // refuses null.
        location: z.union([GeoPoint, z.null()]),
      })
      .nullable(),
    capacity: z.number().int().nullable(),
    checkinMethods: z.array(CheckinMethod),
    reentry: Reentry,
    geofence: z
      .object({
        center: GeoPoint,
        radiusMetres: z.number().nullable(),
        effectiveRadiusMetres: z
          .number()
          .openapi({ description: 'The radius applied (tenant default if null).' }),
      })
      .nullable(),
    publicToken: z.string().openapi({
      description:
        'Public handle, in every invitation: `/v1/events/{token}/branding` and the guest’s own ' +
        '`/v1/events/{token}/guests/{guestToken}`. It does not read the confirmed list (that takes the ' +
        'list token or a device’s credentials).',
    }),
    listTokenCreatedAt: Timestamp.nullable().openapi({
      description:
        'When the current list token (`POST /v1/events/{id}/list-token`) was made; null: none, and the ' +
        'confirmed list answers only the tenant’s devices.',
    }),
    branding: Branding,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi('Event');
export type Event = z.infer<typeof Event>;

export const EventListQuery = PageQuery.extend({
  status: EventStatus.optional(),
  startsFrom: Timestamp.optional().openapi({ description: 'Events starting at or after this instant.' }),
  startsTo: Timestamp.optional().openapi({ description: 'Events starting before this instant.' }),
});
export type EventListQuery = z.infer<typeof EventListQuery>;

export const EventList = pageOf(Event).openapi('EventList', {
  description: 'Oldest first (createdAt, then id).',
});

export const EventDeleted = z
  .object({
    id: Id,
    result: z.enum(['deleted', 'archived']).openapi({
      description:
        '`deleted`: no check-in was ever recorded, the event and its guests are gone. `archived`: it has ' +
        'check-ins; it disappears from every route and its token stops working, but its check-ins keep ' +
        'their event and guest.',
    }),
  })
  .openapi('EventDeleted');

export const EventTokenParams = z.object({ token: Text.min(16).max(128) });

/** Header that carries an event's list token to `GET /v1/events/{token}/confirmed-list`. */
export const LIST_TOKEN_HEADER = 'x-list-token';

export const EventListToken = z
  .object({
    token: z.string().openapi({
      description:
        `Shown once. Send it as \`${LIST_TOKEN_HEADER}\` to \`GET /v1/events/{token}/confirmed-list\`; only its ` +
        'SHA-256 is stored. Making a new one ends the previous one at once.',
      example: 'plt_q5l2c1m0JwQ3nY8v0Xb1s2d3f4g5h6j7k8l9z0x1c2v',
    }),
    createdAt: Timestamp,
  })
  .openapi('EventListToken');

export const PublicBranding = z
  .object({
    name: z.string(),
    status: EventStatus,
    startsAt: Timestamp.nullable(),
    endsAt: Timestamp.nullable(),
    timeZone: z.string(),
    venue: z.object({ name: z.string().nullable(), address: z.string().nullable() }).nullable(),
    branding: Branding,
  })
  .openapi('PublicBranding', { description: 'What a kiosk or an invitation page shows; nothing internal.' });

// ---------------------------------------------------------------------------------------------
// Guests
// ---------------------------------------------------------------------------------------------

export const GuestStatus = z.enum(['pending', 'invited', 'confirmed', 'declined', 'checked_in']).openapi({
  description:
    '`pending` on the list, not invited yet; `invited` an invitation was mailed; `confirmed` attendance ' +
    'confirmed (by token or by an admin); `declined`; `checked_in` admitted at the event (by any method).',
});
export type GuestStatus = z.infer<typeof GuestStatus>;

const GuestEmail = z.email().max(320).openapi({ example: 'rita@example.com' });
const GuestPhone = text(32).openapi({ example: '+351 912 345 678' });
const GuestDocument = text(64).openapi({ example: '12345678' });
const GuestBirthDate = z.iso.date().openapi({ example: '1990-04-30' });
/** What an admin may set; `checked_in` comes only from a check-in. */
const SettableStatus = z.enum(['pending', 'invited', 'confirmed', 'declined']);

export const GuestFields = z.strictObject({
  name: text(200).openapi({ example: 'Rita Lobo' }),
  email: GuestEmail.optional(),
  phone: GuestPhone.optional(),
  document: GuestDocument.optional(),
  birthDate: GuestBirthDate.optional(),
});

export const CreateGuestRequest = GuestFields.extend({
  personId: Id.optional().openapi({
    description:
      'Link to a person of the tenant: their facial or QR check-in at this event admits the guest.',
  }),
  status: SettableStatus.optional().openapi({ description: 'Default `pending`.' }),
}).openapi('CreateGuestRequest', { example: { name: 'Rita Lobo', email: 'rita@example.com' } });
export type CreateGuestRequest = z.infer<typeof CreateGuestRequest>;

export const UpdateGuestRequest = z
  .strictObject({
    name: GuestFields.shape.name,
    email: GuestEmail.nullable(),
    phone: GuestPhone.nullable(),
    document: GuestDocument.nullable(),
    birthDate: GuestBirthDate.nullable(),
    personId: Id.nullable(),
    status: SettableStatus,
  })
  .partial()
  .openapi('UpdateGuestRequest', {
    description: 'Only the fields sent change; null clears. `personId` links or unlinks a person.',
    example: { personId: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11' },
  });
export type UpdateGuestRequest = z.infer<typeof UpdateGuestRequest>;

export const Guest = z
  .object({
    id: Id,
    eventId: Id,
    personId: Id.nullable(),
    name: z.string(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    document: z.string().nullable(),
    birthDate: z.string().nullable(),
    status: GuestStatus,
    guestToken: z.string(),
    confirmUrl: z.string().openapi({ description: 'Personal confirmation page (`PUBLIC_URL`/e/...).' }),
    checkinUrl: z
      .string()
      .openapi({ description: 'Personal check-in link (`/v1/public/checkin/link/...`).' }),
    invitedAt: Timestamp.nullable(),
    inviteCount: z.number().int(),
    lastInviteError: z.string().nullable(),
    confirmedAt: Timestamp.nullable(),
    checkedInAt: Timestamp.nullable(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi('Guest', { description: 'Admin view of a guest.' });
export type Guest = z.infer<typeof Guest>;

export const EventGuestParams = z.object({ id: Id, guestId: Id });

export const GuestListQuery = PageQuery.extend({
  q: text(200)
    .optional()
    .openapi({
      description:
        'A piece of the name, e-mail or document, case and accents ignored (`joao` finds João); in a document ' +
        'dots, dashes, slashes and spaces are ignored too (`12345` finds 123.45…).',
    }),
  status: GuestStatus.optional(),
});
export type GuestListQuery = z.infer<typeof GuestListQuery>;

export const GuestList = pageOf(Guest)
  .extend({
    total: z.number().int().openapi({ description: 'Guests matching `q` and `status`, on every page.' }),
  })
  .openapi('GuestList', { description: 'By name, then id.' });

export const EventAttendance = z
  .object({
    event: z.object({ id: Id, name: z.string(), status: z.string() }),
    arrived: z
      .number()
      .int()
      .openapi({
        description:
          'Distinct persons or guests admitted and not voided: what the capacity counts (a guest linked to a ' +
          'person is one).',
      }),
    confirmed: z.number().int().openapi({
      description:
        'Guests on the confirmed list (`confirmed` or `checked_in`): what the capacity bounds ahead.',
    }),
    guests: z.number().int().openapi({ description: 'Guests on the list (not removed), any status.' }),
    capacity: z.number().int().nullable(),
  })
  .openapi('EventAttendance', {
    example: {
      event: { id: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d14', name: 'Launch night', status: 'open' },
      arrived: 112,
      confirmed: 180,
      guests: 240,
      capacity: 200,
    },
  });
export type EventAttendance = z.infer<typeof EventAttendance>;

export const ArrivalsQuery = z.object({
  minutes: queryNumber(z.number().int().min(1).max(1440))
    .default(15)
    .openapi({ description: 'Width of a bucket in minutes, 1 to 1440 (default 15).' }),
});

export const EventArrivals = z
  .object({
    minutes: z.number().int(),
    buckets: z
      .array(
        z.object({
          at: Timestamp.openapi({ description: 'Start of the bucket.' }),
          arrived: z.number().int().openapi({ description: 'Persons or guests who first came in then.' }),
          total: z.number().int().openapi({ description: 'Arrived up to the end of the bucket.' }),
        }),
      )
      .openapi({
        description:
          'From the first arrival’s bucket to the last’s, every bucket (empty ones too), at most the last 1,000.',
      }),
  })
  .openapi('EventArrivals');
export type EventArrivals = z.infer<typeof EventArrivals>;

export const PublicGuestParams = z.object({
  eventToken: Text.min(16).max(128),
  guestToken: Text.min(16).max(128),
});

export const PublicGuest = z
  .object({
    displayName: z.string().openapi({ description: 'First name only.' }),
    status: GuestStatus,
    confirmedAt: Timestamp.nullable(),
    checkedInAt: Timestamp.nullable(),
    event: PublicBranding,
  })
  .openapi('PublicGuest', {
    description: 'A guest by token: never document, phone, birth date or e-mail.',
  });

export const ConfirmedListQuery = z.object({
  since: Text.regex(/^\d{1,18}$/, 'a checkpoint this API issued')
    .optional()
    .openapi({ description: 'A `checkpoint` from an earlier fetch: only changes after it (with removals).' }),
  cursor: Text.max(512).optional().openapi({ description: '`nextCursor` of the previous page.' }),
  limit: queryNumber(z.number().int().min(1).max(5000))
    .default(1000)
    .openapi({ description: 'Page size, 1 to 5,000 (default 1,000).' }),
});

export const ConfirmedGuest = z
  .object({
    guestId: Id,
    name: z.string(),
    status: z.enum(['confirmed', 'checked_in']),
    checkedInAt: Timestamp.nullable(),
  })
  .openapi('ConfirmedGuest');

export const ConfirmedList = z
  .object({
    items: z.array(ConfirmedGuest).openapi({ description: 'Guests to add or replace in the local copy.' }),
    removed: z
      .array(Id)
      .openapi({ description: 'Guest ids to drop (deleted, declined or unconfirmed since the checkpoint).' }),
    nextCursor: z.string().nullable(),
    checkpoint: z.string().openapi({
      description: 'After the last page: keep it and send it as `since` next time to get only changes.',
    }),
  })
  .openapi('ConfirmedList', {
    description:
      'Confirmed and checked-in guests for a reader working offline (read with the event’s list token or ' +
      'a device’s credentials, never the invitation’s event token). Never contact or document data.',
  });

export const ConfirmResult = PublicGuest.openapi('ConfirmResult');

export const InvitationQuery = z.object({
  lang: PersonLocale.optional().openapi({
    description: 'The language the guest chose on the page; it wins over every other.',
  }),
});

export const GuestInvitation = PublicGuest.extend({
  locale: PersonLocale.openapi({
    description:
      'The language to address the guest in: `lang` when sent, else the event’s `branding.locale`, else the ' +
      'tenant’s `defaultLocale` (an event always has one of these two; the guest’s saved language and the ' +
      'browser’s `Accept-Language` only decide where neither is a supported language).',
  }),
  organisation: z.object({ name: z.string() }).openapi({ description: 'Who invites: the tenant’s name.' }),
  when: z.string().nullable().openapi({
    description: 'The start written out in `locale` and the event’s time zone; null: no date yet.',
    example: 'sábado, 29 de novembro, 19:00 (Horário Padrão de Brasília)',
  }),
  calendarUrl: z.string().nullable().openapi({
    description: 'Path of the add-to-calendar file (`text/calendar`); null while the event has no date.',
  }),
  ticket: z
    .object({
      url: z
        .string()
        .openapi({ description: 'The guest’s personal check-in link, which the QR code carries.' }),
      qrCode: z.string().openapi({ description: 'PNG data URL of the QR code for `url`.' }),
    })
    .openapi({ description: 'The guest’s ticket: shown at the door, scanned there.' }),
}).openapi('GuestInvitation', {
  description:
    'A guest by token, as their invitation page shows it: never document, phone, birth date or e-mail.',
});
export type GuestInvitation = z.infer<typeof GuestInvitation>;

export const LinkCheckinParams = z.object({ token: Text.min(16).max(128) });

export const LinkCheckinResult = z
  .object({
    result: z.enum(['checked_in', 'already_checked_in', 'denied']).openapi({
      description: '`already_checked_in`: a check-in was recorded before; nothing new is recorded.',
    }),
    reason: z.string().nullable().openapi({ description: 'Why a check-in was denied.' }),
    guest: z.object({ displayName: z.string() }),
    event: z.object({ name: z.string() }),
    checkInId: Id.nullable(),
    checkedInAt: Timestamp.nullable(),
  })
  .openapi('LinkCheckinResult');

export const LinkLanding = z
  .object({
    locale: GuestInvitation.shape.locale,
    organisation: z.object({ name: z.string() }),
    guest: z.object({ displayName: z.string().openapi({ description: 'First name only.' }) }),
    event: z.object({
      name: z.string(),
      status: EventStatus,
      when: GuestInvitation.shape.when,
      venue: z.string().nullable().openapi({ description: 'Venue name and address, comma-separated.' }),
      colors: z.object({ primary: z.string().nullable(), text: z.string().nullable() }).openapi({
        description: 'The branding’s primary and secondary colours, as the invitation page uses them.',
      }),
    }),
  })
  .openapi('LinkLanding', {
    description: 'What the landing page of a check-in link shows before the tap; reading it records nothing.',
  });
export type LinkLanding = z.infer<typeof LinkLanding>;

export const GUEST_IMPORT_MAX_ROWS = 20_000;

export const GuestImportUpload = z
  .object({
    file: z.string().openapi({
      format: 'binary',
      description:
        'CSV (comma, semicolon or tab separated, UTF-8) or XLSX (first sheet), at most 10 MB. Row 1 is the ' +
        'header: name (required; also "full name", "nome"), email, phone, document, birthDate (YYYY-MM-DD); ' +
        'other columns are ignored.',
    }),
  })
  .openapi('GuestImportUpload');

export const GuestImportResult = z
  .object({
    created: z.number().int(),
    duplicates: z.number().int(),
    failed: z.number().int(),
    results: z.array(
      z.object({
        row: z.number().int().openapi({ description: 'Spreadsheet row number (the header is row 1).' }),
        status: z.enum(['created', 'duplicate', 'failed']),
        guestId: Id.optional(),
        duplicateOf: z.string().optional().openapi({
          description: 'Row number or guest id the duplicate repeats (same e-mail or document).',
        }),
        errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
      }),
    ),
  })
  .openapi('GuestImportResult');

export const InviteRequest = z
  .strictObject({
    guestIds: z
      .array(Id)
      .min(1)
      .max(1000)
      .optional()
      .openapi({
        description:
          'Whom to mail. Without it: invite mails every `pending` guest with an e-mail; reinvite mails every ' +
          '`invited` guest (not yet confirmed).',
      }),
  })
  .openapi('InviteRequest');

export const InviteResult = z
  .object({
    sent: z.number().int(),
    skipped: z.number().int(),
    failed: z.number().int(),
    remaining: z.number().int().openapi({
      description: 'Without `guestIds`: guests still to mail beyond this call’s batch (call again).',
    }),
    results: z.array(
      z.object({
        guestId: Id,
        status: z.enum(['sent', 'skipped', 'failed']),
        reason: z
          .string()
          .optional()
          .openapi({
            description:
              'Skipped: `already_invited`, `recently_sent` (reinvite within an hour), `no_email`, `declined`, ' +
              '`checked_in`, `not_found`, `in_progress` (another call is mailing them). Failed: the mail error.',
          }),
      }),
    ),
  })
  .openapi('InviteResult');
