import {
  CreateEventRequest,
  Event,
  EventConfigRequest,
  EventDeleted,
  EventList,
  EventListQuery,
  EventListToken,
  EventStatusRequest,
  EventTokenParams,
  IdParams,
  LIST_TOKEN_HEADER,
  PublicBranding,
  UpdateEventRequest,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { defineRoute } from '../../http/route.js';
import { personContextOf } from '../persons/routes.js';
import { createEventService } from './service.js';

const TAG = 'Events';
const AUTH = ['apiKey', 'adminSession'] as const;
const WHO = 'Integrator API key or tenant admin session; always within the caller’s tenant. ';

export function eventRoutes(deps: AppDeps) {
  const events = createEventService(deps);
  const notFound = {
    status: 404,
    code: 'not_found',
    description: 'no such event in the caller’s tenant (or it was archived)',
  } as const;
  const endsBeforeStart = {
    status: 400,
    code: 'ends_before_start',
    description: 'the event would end before it starts (`errors` names `body.endsAt`)',
  } as const;
  return [
    defineRoute({
      method: 'get',
      path: '/v1/events',
      operationId: 'listEvents',
      summary: 'List events',
      description: `${WHO}Cursor pages, oldest first. Filters \`status\` and a start-date range combine with AND.`,
      tag: TAG,
      auth: AUTH,
      scope: 'events:read',
      query: EventListQuery,
      responses: { 200: { description: 'A page of events', schema: EventList } },
      handler: async ({ actor, query, req, res }) => ({
        status: 200,
        body: await events.list(personContextOf(actor, req, res), query),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/events',
      operationId: 'createEvent',
      summary: 'Create an event',
      description:
        `${WHO}The event starts as \`draft\` with a fresh public token. Without \`checkinMethods\` it admits ` +
        'all four methods; without `geofence` no location check applies; a geofence without a radius uses ' +
        "the tenant's `geofenceRadiusMetros`; without `reentry` a returning guest is admitted again (`allow`).",
      tag: TAG,
      auth: AUTH,
      scope: 'events:write',
      body: CreateEventRequest,
      responses: { 201: { description: 'Created', schema: Event } },
      errors: [endsBeforeStart],
      handler: async ({ actor, body, req, res }) => ({
        status: 201,
        body: await events.create(personContextOf(actor, req, res), body),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/events/{id}',
      operationId: 'getEvent',
      summary: 'Get an event',
      description: WHO,
      tag: TAG,
      auth: AUTH,
      scope: 'events:read',
      params: IdParams,
      responses: { 200: { description: 'The event', schema: Event } },
      errors: [notFound],
      handler: async ({ actor, params, req, res }) => ({
        status: 200,
        body: await events.get(personContextOf(actor, req, res), params.id),
      }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/events/{id}',
      operationId: 'updateEvent',
      summary: 'Update an event',
      description:
        `${WHO}Name, description, dates, time zone, venue and branding. The dates are checked together with ` +
        'the stored ones: moving the end before the start (or the start after the end) is refused.',
      tag: TAG,
      auth: AUTH,
      scope: 'events:write',
      params: IdParams,
      body: UpdateEventRequest,
      responses: { 200: { description: 'The updated event', schema: Event } },
      errors: [notFound, endsBeforeStart],
      handler: async ({ actor, params, body, req, res }) => ({
        status: 200,
        body: await events.update(personContextOf(actor, req, res), params.id, body),
      }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/events/{id}/config',
      operationId: 'configureEvent',
      summary: 'Configure check-in methods, capacity, geofence and re-entry',
      description:
        `${WHO}Changed under the event's lock: the next check-in applies the new rules (kiosks at their next ` +
        'replica refresh). A capacity below the guests already checked in (distinct persons or guests ' +
        'admitted, undone check-ins not counted) is refused; a lower one that still holds them stops further ' +
        'check-ins once full. `reentry` decides what a returning guest gets (`refuse`, `allow` or `flag`).',
      tag: TAG,
      auth: AUTH,
      scope: 'events:write',
      params: IdParams,
      body: EventConfigRequest,
      responses: { 200: { description: 'The updated event', schema: Event } },
      errors: [
        notFound,
        {
          status: 409,
          code: 'capacity_below_checked_in',
          description: 'the new capacity is below the number already checked in (`checkedIn` in the body)',
        },
      ],
      handler: async ({ actor, params, body, req, res }) => ({
        status: 200,
        body: await events.configure(personContextOf(actor, req, res), params.id, body),
      }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/events/{id}/status',
      operationId: 'setEventStatus',
      summary: 'Move the event to another status',
      description:
        `${WHO}Transitions: draft -> published | open | cancelled; published -> draft | open | cancelled; ` +
        'open -> closed | cancelled; closed -> open | cancelled; cancelled is final. The current status again ' +
        'is a no-op (200).',
      tag: TAG,
      auth: AUTH,
      scope: 'events:write',
      params: IdParams,
      body: EventStatusRequest,
      responses: { 200: { description: 'The event in its new status', schema: Event } },
      errors: [
        notFound,
        {
          status: 409,
          code: 'invalid_transition',
          description:
            'the move is not allowed from the current status (`from`, `to`, `allowed` in the body)',
        },
      ],
      handler: async ({ actor, params, body, req, res }) => ({
        status: 200,
        body: await events.setStatus(personContextOf(actor, req, res), params.id, body.status),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/events/{id}',
      operationId: 'deleteEvent',
      summary: 'Delete (or archive) an event',
      description:
        `${WHO}Check-in history is never lost: an event without check-ins is deleted with its guests ` +
        '(`result: deleted`); an event with check-ins is archived (`result: archived`): it is gone from every ' +
        'route and its public and guest tokens stop working, but its guests and check-ins stay in the ' +
        'database with their links.',
      tag: TAG,
      auth: AUTH,
      scope: 'events:write',
      params: IdParams,
      responses: { 200: { description: 'What happened', schema: EventDeleted } },
      errors: [notFound],
      handler: async ({ actor, params, req, res }) => ({
        status: 200,
        body: await events.remove(personContextOf(actor, req, res), params.id),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/events/{id}/list-token',
      operationId: 'createEventListToken',
      summary: 'Make or rotate the event’s list token',
      description:
        `${WHO}Owner or admin (\`events:write\`). The confirmed list's own credential for offline readers ` +
        `that are not registered devices: sent as \`${LIST_TOKEN_HEADER}\` to ` +
        '`GET /v1/events/{token}/confirmed-list`. The invitation’s event token does not read the list. ' +
        'Shown once (only its SHA-256 is stored); calling again makes a new one and the previous one stops ' +
        'working at once.',
      tag: TAG,
      auth: AUTH,
      scope: 'events:write',
      params: IdParams,
      responses: { 201: { description: 'The new token, shown once', schema: EventListToken } },
      errors: [notFound],
      handler: async ({ actor, params, req, res }) => ({
        status: 201,
        body: await events.issueListToken(personContextOf(actor, req, res), params.id),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/events/{id}/list-token',
      operationId: 'revokeEventListToken',
      summary: 'End the event’s list token',
      description: `${WHO}Owner or admin (\`events:write\`). The list token stops working at once; devices keep theirs.`,
      tag: TAG,
      auth: AUTH,
      scope: 'events:write',
      params: IdParams,
      responses: { 204: { description: 'Ended' } },
      errors: [{ status: 404, code: 'not_found', description: 'no such event, or it has no list token' }],
      handler: async ({ actor, params, req, res }) => {
        await events.revokeListToken(personContextOf(actor, req, res), params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/events/{token}/branding',
      operationId: 'getEventBranding',
      summary: 'Public branding of an event, by token',
      description:
        'No credentials. Name, dates, venue name and address, and the branding: nothing internal (no ids, ' +
        'capacity, geofence or guest data). Drafts, archived events and suspended tenants answer 404.',
      tag: TAG,
      auth: ['public'],
      params: EventTokenParams,
      responses: { 200: { description: 'The public face of the event', schema: PublicBranding } },
      errors: [{ status: 404, code: 'not_found', description: 'unknown token, or the event is not public' }],
      handler: async ({ params }) => ({ status: 200, body: await events.branding(params.token) }),
    }),
  ];
}
