import {
  ConfirmedList,
  ConfirmedListQuery,
  ConfirmResult,
  CreateGuestRequest,
  EventGuestParams,
  EventTokenParams,
  GUEST_IMPORT_MAX_ROWS,
  Guest,
  GuestImportResult,
  GuestImportUpload,
  GuestList,
  GuestListQuery,
  IdParams,
  InviteRequest,
  LIST_TOKEN_HEADER,
  InviteResult,
  LinkCheckinParams,
  LinkCheckinResult,
  LinkLanding,
  GuestInvitation,
  InvitationQuery,
  PublicGuestParams,
  UpdateGuestRequest,
  ArrivalsQuery,
  EventArrivals,
  EventAttendance,
  z,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { isLinkPreview, requestMeta } from '../../http/request-context.js';
import { notFound as notFoundError } from '../../http/errors.js';
import { defineRoute } from '../../http/route.js';
import { readUpload } from '../../http/upload.js';
import { spreadsheetErrors, spreadsheetLimitsDoc } from '../../infra/spreadsheet/read.js';
import { personContextOf } from '../persons/routes.js';
import { arrivalsOf, attendanceOf } from './attendance.js';
import { createGuestImport } from './import.js';
import { createInvitations, INVITE_BATCH } from './invitations.js';
import { createInvitationPage } from './invitation-page.js';
import { createGuestService } from './service.js';
import { findEvent } from '../events/service.js';

const TAG = 'Guests';
const AUTH = ['apiKey', 'adminSession'] as const;
const WHO = 'Integrator API key or tenant admin session; always within the caller’s tenant. ';
const NEVER = 'Never document number, phone, birth date, e-mail or biometric data. ';

export function guestRoutes(deps: AppDeps) {
  const guests = createGuestService(deps);
  const importer = createGuestImport(deps);
  const invitations = createInvitations(deps);
  const invitationPage = createInvitationPage(deps);
  const notFound = {
    status: 404,
    code: 'not_found',
    description: 'no such event (or guest) in the caller’s tenant',
  } as const;
  const duplicate = {
    status: 409,
    code: 'duplicate_guest',
    description: 'another guest of the event has this e-mail, document or person (`guestId` names it)',
  } as const;
  const full = {
    status: 409,
    code: 'event_full',
    description: 'confirming would exceed the event capacity',
  } as const;
  const limited = {
    status: 429,
    code: 'rate_limited',
    description: 'too many calls; see Retry-After',
  } as const;
  const inviteDoc = (kind: 'invite' | 'reinvite') =>
    `${WHO}Mails each guest their personal confirmation link (\`PUBLIC_URL/e/{eventToken}/g/{guestToken}\`, ` +
    'a page of the person portal) and check-in link (`PUBLIC_URL/v1/public/checkin/link/{token}`). ' +
    (kind === 'invite'
      ? 'Without `guestIds`: every `pending` guest with an e-mail. A guest is invited once: a guest already ' +
        'invited is skipped (`already_invited`), also under concurrent calls. '
      : 'Without `guestIds`: every `invited` guest who has not answered. The same guest is mailed again at ' +
        'most once an hour (`recently_sent`). ') +
    'A draft event is refused (409 `event_not_published`, nothing mailed): its links only work once the ' +
    'event is published or open, so publish it first. ' +
    `At most ${INVITE_BATCH} guests per call (\`remaining\` says how many are left); 20 calls per event in 10 ` +
    'minutes. A failed mail is reported for its guest (`failed` with the reason, also kept as ' +
    '`lastInviteError`), never as a 500.';

  return [
    defineRoute({
      method: 'get',
      path: '/v1/events/{id}/guests',
      operationId: 'listGuests',
      summary: 'List the guests of an event',
      description:
        `${WHO}By name, cursor pages of any length (\`total\` counts every match); \`q\` searches name, e-mail ` +
        'and document as you type, case and accents ignored (`joao` finds João), dots, dashes, slashes and ' +
        'spaces in documents too; `status` filters.',
      tag: TAG,
      auth: AUTH,
      scope: 'events:read',
      params: IdParams,
      query: GuestListQuery,
      responses: { 200: { description: 'A page of guests', schema: GuestList } },
      errors: [notFound],
      handler: async ({ actor, params, query, req, res }) => ({
        status: 200,
        body: await guests.list(personContextOf(actor, req, res), params.id, query),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/events/{id}/attendance',
      operationId: 'getEventAttendance',
      summary: 'Who arrived: arrived, confirmed and capacity',
      description:
        `${WHO}\`arrived\` is what the capacity counts: distinct persons or guests admitted and not voided (a ` +
        'guest linked to a person is one, a re-entry does not count twice). `confirmed`: guests on the ' +
        'confirmed list (confirmed or checked in); `guests`: every guest on the list.',
      tag: TAG,
      auth: AUTH,
      scope: 'events:read',
      params: IdParams,
      responses: { 200: { description: 'The counts', schema: EventAttendance } },
      errors: [notFound],
      handler: async ({ actor, params, req, res }) => {
        const ctx = personContextOf(actor, req, res);
        const [attendance] = await attendanceOf(deps.db, ctx.tenantId, [params.id]);
        if (!attendance) throw notFoundError('Event');
        return { status: 200, body: attendance };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/events/{id}/arrivals',
      operationId: 'getEventArrivals',
      summary: 'Arrivals over time',
      description:
        `${WHO}Each person or guest counted once, at their first admission that still counts (a voided one is ` +
        'no arrival), in buckets of `minutes`, with the running total: the curve of `arrived`.',
      tag: TAG,
      auth: AUTH,
      scope: 'events:read',
      params: IdParams,
      query: ArrivalsQuery,
      responses: { 200: { description: 'The buckets', schema: EventArrivals } },
      errors: [notFound],
      handler: async ({ actor, params, query, req, res }) => {
        const ctx = personContextOf(actor, req, res);
        const event = await findEvent(deps.db.prisma, ctx.tenantId, params.id);
        return { status: 200, body: await arrivalsOf(deps.db, event.id, query.minutes) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/events/{id}/guests',
      operationId: 'createGuest',
      summary: 'Add a guest to an event',
      description:
        `${WHO}With \`personId\` the guest is linked to a person of the tenant: that person's facial, QR or ` +
        'manual check-in at this event checks the guest in.',
      tag: TAG,
      auth: AUTH,
      scope: 'events:write',
      params: IdParams,
      body: CreateGuestRequest,
      responses: { 201: { description: 'Created', schema: Guest } },
      errors: [notFound, duplicate, full],
      handler: async ({ actor, params, body, req, res }) => ({
        status: 201,
        body: await guests.create(personContextOf(actor, req, res), params.id, body),
      }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/events/{id}/guests/{guestId}',
      operationId: 'updateGuest',
      summary: 'Update a guest (or link it to a person)',
      description: `${WHO}Only the fields sent change; \`personId: null\` unlinks.`,
      tag: TAG,
      auth: AUTH,
      scope: 'events:write',
      params: EventGuestParams,
      body: UpdateGuestRequest,
      responses: { 200: { description: 'The updated guest', schema: Guest } },
      errors: [
        notFound,
        duplicate,
        full,
        { status: 409, code: 'conflict', description: 'the guest is checked in: its status stays' },
      ],
      handler: async ({ actor, params, body, req, res }) => ({
        status: 200,
        body: await guests.update(personContextOf(actor, req, res), params.id, params.guestId, body),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/events/{id}/guests/{guestId}',
      operationId: 'deleteGuest',
      summary: 'Remove a guest',
      description:
        `${WHO}The guest leaves the list (confirmed lists report the removal); its e-mail, phone, document ` +
        'and birth date are erased, its name and check-ins stay for the event history.',
      tag: TAG,
      auth: AUTH,
      scope: 'events:write',
      params: EventGuestParams,
      responses: { 204: { description: 'Removed' } },
      errors: [notFound],
      handler: async ({ actor, params, req, res }) => {
        await guests.remove(personContextOf(actor, req, res), params.id, params.guestId);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/events/{id}/guests/import',
      operationId: 'importGuests',
      summary: 'Import guests from a spreadsheet (CSV or XLSX)',
      description:
        `${WHO}multipart/form-data with the file in field \`file\`. Each row is checked on its own and ` +
        'reported by its spreadsheet row number: `created`, `duplicate` (same e-mail or document as an ' +
        'earlier row or a guest already on the list; `duplicateOf` names it) or `failed` with its errors. ' +
        `Guests start \`pending\`. At most ${GUEST_IMPORT_MAX_ROWS} rows; rows are written in chunks of 1,000, ` +
        'each a short transaction.\n\n' +
        spreadsheetLimitsDoc(GUEST_IMPORT_MAX_ROWS),
      tag: TAG,
      auth: AUTH,
      scope: 'events:write',
      params: IdParams,
      upload: GuestImportUpload,
      responses: { 200: { description: 'Per-row report', schema: GuestImportResult } },
      errors: [
        notFound,
        ...spreadsheetErrors(GUEST_IMPORT_MAX_ROWS),
        { status: 400, code: 'validation_failed', description: 'no file, or no name column in the header' },
        { status: 415, code: 'unsupported_media_type', description: 'the body is not multipart/form-data' },
      ],
      handler: async ({ actor, params, req, res }) => {
        const ctx = personContextOf(actor, req, res);
        return { status: 200, body: await importer.importFile(ctx, params.id, await readUpload(req)) };
      },
    }),
    ...(['invite', 'reinvite'] as const).map((kind) =>
      defineRoute({
        method: 'post',
        path: `/v1/events/{id}/guests/${kind}`,
        operationId: kind === 'invite' ? 'inviteGuests' : 'reinviteGuests',
        summary: kind === 'invite' ? 'Mail invitations' : 'Mail invitations again',
        description: inviteDoc(kind),
        tag: TAG,
        auth: AUTH,
        scope: 'events:write',
        params: IdParams,
        body: InviteRequest.optional(),
        responses: { 200: { description: 'Per-guest outcome', schema: InviteResult } },
        errors: [
          notFound,
          {
            status: 409,
            code: 'event_not_published',
            description: 'the event is a draft; nothing was mailed (`eventStatus` in the body)',
          },
          limited,
        ],
        handler: async ({ actor, params, body, req, res }) => ({
          status: 200,
          body: await invitations.send(personContextOf(actor, req, res), params.id, kind, body?.guestIds),
        }),
      }),
    ),
    defineRoute({
      method: 'get',
      path: '/v1/events/{eventToken}/guests/{guestToken}',
      operationId: 'getGuestByToken',
      summary: 'A guest by token (public)',
      description:
        'No credentials. What the invitation page shows: first name, status, the event’s public face, the ' +
        'organisation’s name, the language to speak (`lang`, else the event’s `branding.locale`, else the ' +
        'tenant’s `defaultLocale`, then the guest’s saved language and `Accept-Language`), the start written ' +
        'out in that language and the event’s time zone, the add-to-calendar path and the QR ticket (the ' +
        `guest's check-in link). ${NEVER}120 calls a minute per address.`,
      tag: TAG,
      auth: ['public'],
      params: PublicGuestParams,
      query: InvitationQuery,
      responses: { 200: { description: 'The guest', schema: GuestInvitation } },
      errors: [
        { status: 404, code: 'not_found', description: 'unknown tokens, or the event is not public' },
        limited,
      ],
      handler: async ({ params, query, req, res }) => ({
        status: 200,
        body: await invitationPage.view(params.eventToken, params.guestToken, requestMeta(req, res), {
          lang: query.lang,
          acceptLanguage: req.get('accept-language') ?? null,
        }),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/events/{eventToken}/guests/{guestToken}/calendar.ics',
      operationId: 'getGuestCalendar',
      summary: 'The invitation as a calendar file (public)',
      description:
        'No credentials. An iCalendar file (RFC 5545, CRLF line ends, folded at 75 octets) with one event: ' +
        'its name, start and end (UTC), venue, the organisation and the invitation page. Its UID is the same ' +
        'for the same guest and event, so adding it again updates the entry. Counts against the same 120 ' +
        'reads a minute per address as the guest by token.',
      tag: TAG,
      auth: ['public'],
      params: PublicGuestParams,
      responses: {
        200: { description: 'The calendar file', schema: z.string(), contentType: 'text/calendar' },
      },
      errors: [
        {
          status: 404,
          code: 'not_found',
          description: 'unknown tokens, the event is not public, or it has no start yet',
        },
        limited,
      ],
      handler: async ({ params, req, res }) => {
        const { fileName, body } = await invitationPage.calendar(
          params.eventToken,
          params.guestToken,
          requestMeta(req, res),
        );
        res.status(200);
        res.setHeader('content-type', 'text/calendar; charset=utf-8');
        // ASCII only (calendarFileName), so the plain quoted form is enough.
        res.setHeader('content-disposition', `attachment; filename="${fileName}"`);
        res.send(body);
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/events/{eventToken}/guests/{guestToken}/confirm',
      operationId: 'confirmGuest',
      summary: 'Confirm attendance by token (public)',
      description:
        'No credentials, no body. Idempotent: a guest already confirmed (or checked in) gets the same answer ' +
        'and nothing changes. Open while the event is `published` or `open`; the event capacity bounds the ' +
        `confirmed guests. ${NEVER}30 calls a minute per address.`,
      tag: TAG,
      auth: ['public'],
      params: PublicGuestParams,
      responses: { 200: { description: 'The confirmed guest', schema: ConfirmResult } },
      errors: [
        { status: 404, code: 'not_found', description: 'unknown tokens, or the event is not public' },
        { status: 409, code: 'event_not_open', description: 'the event is closed or cancelled' },
        full,
        limited,
      ],
      handler: async ({ params, req, res }) => ({
        status: 200,
        body: await guests.answer(params.eventToken, params.guestToken, 'confirmed', requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/events/{eventToken}/guests/{guestToken}/decline',
      operationId: 'declineGuest',
      summary: 'Decline the invitation by token (public)',
      description:
        'No credentials, no body. Idempotent: a guest who declined gets the same answer. A confirmed guest ' +
        'frees their place (and may confirm again while there is room); a checked-in guest cannot decline. ' +
        `Open while the event is \`published\` or \`open\`. ${NEVER}Counts against the same 30 calls a ` +
        'minute per address as confirming.',
      tag: TAG,
      auth: ['public'],
      params: PublicGuestParams,
      responses: { 200: { description: 'The guest, declined', schema: ConfirmResult } },
      errors: [
        { status: 404, code: 'not_found', description: 'unknown tokens, or the event is not public' },
        { status: 409, code: 'event_not_open', description: 'the event is closed or cancelled' },
        { status: 409, code: 'already_checked_in', description: 'the guest is already checked in' },
        limited,
      ],
      handler: async ({ params, req, res }) => ({
        status: 200,
        body: await guests.answer(params.eventToken, params.guestToken, 'declined', requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/events/{token}/confirmed-list',
      operationId: 'getConfirmedList',
      summary: 'Confirmed guests of an event, for readers offline',
      description:
        `The event's list token in \`${LIST_TOKEN_HEADER}\` (made and rotated by an admin: ` +
        '`POST /v1/events/{id}/list-token`), or a device’s credentials (`x-internal-secret` and ' +
        '`x-device-token`, of the event’s tenant; devices usually read `/v1/sync/events/{token}/replica`). ' +
        'The event token alone (it is in every invitation) is 401 `unauthorized`; a list token that is not ' +
        'this event’s current one is 401 `invalid_token`. ' +
        'Confirmed and checked-in guests: id, name, status, check-in time. ' +
        `${NEVER}Without \`since\`: the whole list in pages (follow \`nextCursor\`); keep the last page's ` +
        '`checkpoint` and send it as `since` later to get only what changed since, with `removed` ids ' +
        '(deleted, declined or otherwise off the list). 600 calls a minute per address.',
      tag: TAG,
      auth: ['public', 'device'],
      params: EventTokenParams,
      query: ConfirmedListQuery,
      responses: { 200: { description: 'A page of the list', schema: ConfirmedList } },
      errors: [
        { status: 401, code: 'unauthorized', description: 'neither a list token nor device credentials' },
        { status: 401, code: 'invalid_token', description: 'not the event’s current list token' },
        {
          status: 404,
          code: 'not_found',
          description: 'unknown token, the event is not public, or another tenant’s device',
        },
        limited,
      ],
      handler: async ({ actor, params, query, req, res }) => {
        const header = req.headers[LIST_TOKEN_HEADER];
        const reader =
          actor.kind === 'device'
            ? { deviceTenantId: actor.tenantId }
            : { listToken: typeof header === 'string' ? header : undefined };
        return {
          status: 200,
          body: await guests.confirmedList(params.token, reader, query, requestMeta(req, res)),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/public/checkin/link/{token}/landing',
      operationId: 'getLinkLanding',
      summary: 'What a check-in link is for (public)',
      description:
        'No credentials. What the landing page `/c/{token}` shows before the tap: the guest’s first name, ' +
        'the organisation, the event’s name, status, venue and start (written out in the language and the ' +
        'event’s time zone) and the language (`lang`, else the event’s, else the tenant’s default, then the ' +
        `guest's saved language and \`Accept-Language\`). Records nothing. ${NEVER}A link that resolves to ` +
        'nothing counts against the same 60 unknown tokens a minute per address as the check-in.',
      tag: 'Check-in',
      auth: ['public'],
      params: LinkCheckinParams,
      query: InvitationQuery,
      responses: { 200: { description: 'The link’s guest and event', schema: LinkLanding } },
      errors: [{ status: 404, code: 'not_found', description: 'unknown or removed link' }, limited],
      handler: async ({ actor, params, query, req, res }) => ({
        status: 200,
        body: await invitationPage.landing(actor, params.token, requestMeta(req, res), {
          lang: query.lang,
          acceptLanguage: req.get('accept-language') ?? null,
        }),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/public/checkin/link/{token}',
      operationId: 'checkinByLink',
      summary: 'Check in by the invitation link (public)',
      description:
        'No credentials. Records a `link` check-in for the guest under the event’s rules (methods, capacity) ' +
        'while the event is `open`; otherwise 409 `event_not_open` and nothing is recorded. Once the guest ' +
        'is checked in, every visit answers `already_checked_in` and records nothing. Mail scanners that ' +
        'open links: HEAD and prefetches or link previews (`Purpose`, `Sec-Purpose`, `X-Purpose` or `X-Moz` ' +
        'saying `prefetch`, `prerender` or `preview`) get 204 and record nothing, a visit before the doors ' +
        'open records nothing (invitations go out before), and a ' +
        `visit during the event can record at most the guest's one check-in. A client that prefers HTML (a ` +
        'person who opened the link) is sent (303) to the landing page `/c/{token}`, whose button checks in. ' +
        `${NEVER}\n\n` +
        '**Limits, sized for a door rush** (a venue’s guests share one address, so known links are not ' +
        'limited per address): 10 calls a minute per link (a double tap, the landing page’s own retries) and ' +
        '3,000 a minute per event. Links that resolve to nothing (unknown, removed, malformed) are what ' +
        'guessing looks like: 60 a minute per client address, shared with QR check-ins; once used up, every ' +
        'link from there waits until the minute ends. Over a limit: 429 `rate_limited` with `Retry-After` ' +
        '(the landing page waits and retries by itself).',
      tag: 'Check-in',
      auth: ['public'],
      params: LinkCheckinParams,
      responses: {
        200: { description: 'What happened', schema: LinkCheckinResult },
        204: { description: 'HEAD, prefetch or link preview: nothing recorded' },
        303: { description: 'A browser: sent to the landing page `/c/{token}`; nothing recorded' },
      },
      errors: [
        { status: 404, code: 'not_found', description: 'unknown or removed link' },
        { status: 409, code: 'event_not_open', description: 'the event is not open: nothing recorded' },
        limited,
      ],
      handler: async ({ actor, params, req, res }) => {
        if (isLinkPreview(req)) return { status: 204 };
        // A person who opened the link (or a scanner that renders HTML): the landing page, where a tap
        // checks in. Nothing is recorded by the visit itself.
        if (req.accepts(['application/json', 'text/html']) === 'text/html') {
          res.redirect(303, `/c/${encodeURIComponent(params.token)}`);
          return;
        }
        return { status: 200, body: await guests.checkinByLink(actor, params.token, requestMeta(req, res)) };
      },
    }),
  ];
}
