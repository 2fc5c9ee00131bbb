// Events of the caller's tenant: CRUD, check-in configuration, the status lifecycle and the public
// branding by token. The check-in rules that read these fields live in checkin/rules.ts.
import {
  EVENT_TRANSITIONS,
  type Branding,
  type CreateEventRequest,
  type Event as EventWire,
  type EventConfigRequest,
  type EventListQuery,
  type EventStatus,
  type Geofence,
  type UpdateEventRequest,
  type Venue,
  type z,
} from '@portico/contract';
import { REENTRY_DEFAULT } from '@portico/checkin-policy';
import type { Event, Prisma } from '../../generated/prisma/client.js';
import type { AppDeps } from '../../deps.js';
import { AppError, invalidFields, notFound } from '../../http/errors.js';
import { hashToken, randomToken } from '../../infra/crypto.js';
import { newId, type Tx } from '../../infra/db/index.js';
import { targetAudit } from '../audit/record.js';
import type { PersonContext } from '../persons/service.js';
import { getTenantSettings } from '../tenants/service.js';
import type { AuditAction } from '@portico/contract';

export type AdminContext = PersonContext;
type Deps = Pick<AppDeps, 'db' | 'clock'>;

export const ALL_METHODS = ['facial', 'qr', 'link', 'manual'];

/** Keyset cursor over (createdAt, id), as the persons list. */
export function encodeCursor(values: unknown[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

export function decodeCursor(cursor: string, check: (values: unknown[]) => boolean): unknown[] {
  try {
    const values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(values) && check(values)) return values;
  } catch {
    // answered below
  }
  throw invalidFields([{ path: 'query.cursor', message: 'not a cursor this API issued' }]);
}

/** The tenant's live (not archived) event, or 404. */
export async function findEvent(db: Pick<Tx, 'event'>, tenantId: string, id: string): Promise<Event> {
  const event = await db.event.findFirst({ where: { id, tenantId, deletedAt: null } });
  if (!event) throw notFound('Event');
  return event;
}

/** The live event of a public token whose tenant is active, or 404 (drafts have no public page). */
export async function eventByToken(db: Pick<Tx, 'event'>, token: string) {
  const event = await db.event.findUnique({
    where: { publicToken: token },
    include: { tenant: { select: { status: true } } },
  });
  if (!event || event.deletedAt || event.tenant.status !== 'active' || event.status === 'draft') {
    throw notFound('Event');
  }
  return event;
}

/** 400 `ends_before_start` when both dates are set and the end comes first. */
function checkDates(startsAt: string | null | undefined, endsAt: string | null | undefined): void {
  if (startsAt && endsAt && new Date(endsAt) < new Date(startsAt)) {
    throw new AppError(400, 'ends_before_start', 'The event cannot end before it starts', {
      errors: [{ path: 'body.endsAt', message: 'endsAt must not be before startsAt' }],
    });
  }
}

/** What the capacity counts: distinct persons or guests admitted, voided admissions not counted. */
async function checkedInCount(tx: Pick<Tx, '$queryRaw'>, eventId: string): Promise<number> {
  const [row] = await tx.$queryRaw<{ admitted: bigint }[]>`
    SELECT COUNT(DISTINCT COALESCE(person_id, guest_id)) AS admitted
      FROM check_ins
     WHERE event_id = ${eventId} AND outcome IN ('success', 'geofence_alert') AND voided_at IS NULL
       AND (person_id IS NOT NULL OR guest_id IS NOT NULL)`;
  return Number(row?.admitted ?? 0);
}

export function toEventWire(e: Event, tenantRadiusM: number): EventWire {
  const hasVenue = e.venueName !== null || e.venueAddress !== null || e.venueLat !== null;
  return {
    id: e.id,
    name: e.name,
    description: e.description,
    status: e.status as EventStatus,
    startsAt: e.startsAt?.toISOString() ?? null,
    endsAt: e.endsAt?.toISOString() ?? null,
    timeZone: e.timeZone,
    venue: hasVenue
      ? {
          name: e.venueName,
          address: e.venueAddress,
          location: e.venueLat !== null && e.venueLng !== null ? { lat: e.venueLat, lng: e.venueLng } : null,
        }
      : null,
    capacity: e.capacity,
    checkinMethods: e.checkinMethods as EventWire['checkinMethods'],
    reentry: e.reentry as EventWire['reentry'],
    geofence:
      e.geofenceLat !== null && e.geofenceLng !== null
        ? {
            center: { lat: e.geofenceLat, lng: e.geofenceLng },
            radiusMetres: e.geofenceRadiusM,
            effectiveRadiusMetres: e.geofenceRadiusM ?? tenantRadiusM,
          }
        : null,
    publicToken: e.publicToken,
    listTokenCreatedAt: e.listTokenAt?.toISOString() ?? null,
    branding: e.branding as Branding,
    createdAt: e.createdAt.toISOString(),
    updatedAt: e.updatedAt.toISOString(),
  };
}

/** Public view: what a kiosk or invitation page shows. */
export function toPublicBranding(e: Event) {
  const hasVenue = e.venueName !== null || e.venueAddress !== null;
  return {
    name: e.name,
    status: e.status as EventStatus,
    startsAt: e.startsAt?.toISOString() ?? null,
    endsAt: e.endsAt?.toISOString() ?? null,
    timeZone: e.timeZone,
    venue: hasVenue ? { name: e.venueName, address: e.venueAddress } : null,
    branding: e.branding as Branding,
  };
}

type VenueInput = z.infer<typeof Venue> | null;
type GeofenceInput = z.infer<typeof Geofence> | null;

function venueColumns(venue: VenueInput) {
  return {
    venueName: venue?.name ?? null,
    venueAddress: venue?.address ?? null,
    venueLat: venue?.location?.lat ?? null,
    venueLng: venue?.location?.lng ?? null,
  };
}

function geofenceColumns(geofence: GeofenceInput) {
  return {
    geofenceLat: geofence?.center.lat ?? null,
    geofenceLng: geofence?.center.lng ?? null,
    geofenceRadiusM: geofence?.radiusMetres ?? null,
  };
}

export function createEventService(deps: Deps) {
  const { prisma } = deps.db;

  const audit = targetAudit('event');

  const wire = async (ctx: AdminContext, e: Event) =>
    toEventWire(e, (await getTenantSettings(deps.db, ctx.tenantId)).geofenceRadiusMetros);

  /** Changes the event under its row lock (check-ins decide under the same lock). */
  async function change(
    ctx: AdminContext,
    id: string,
    apply: (
      tx: Tx,
      event: Event,
    ) => Promise<{
      data: Prisma.EventUpdateInput;
      action: AuditAction;
      meta?: Prisma.InputJsonObject;
    } | null>,
  ): Promise<EventWire> {
    const updated = await prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM events WHERE id = ${id} AND tenant_id = ${ctx.tenantId} FOR UPDATE`;
      const event = await findEvent(tx, ctx.tenantId, id);
      const step = await apply(tx, event);
      if (!step) return event;
      const row = await tx.event.update({
        where: { id: event.id },
        data: { ...step.data, updatedAt: deps.clock.now() },
      });
      await audit(tx, ctx, step.action, event.id, step.meta ?? {});
      return row;
    });
    return wire(ctx, updated);
  }

  return {
    async list(ctx: AdminContext, query: EventListQuery) {
      const and: Prisma.EventWhereInput[] = [{ tenantId: ctx.tenantId, deletedAt: null }];
      if (query.status) and.push({ status: query.status });
      if (query.startsFrom) and.push({ startsAt: { gte: new Date(query.startsFrom) } });
      if (query.startsTo) and.push({ startsAt: { lt: new Date(query.startsTo) } });
      if (query.cursor) {
        const [at, id] = decodeCursor(
          query.cursor,
          (v) =>
            v.length === 2 && typeof v[1] === 'string' && !Number.isNaN(new Date(String(v[0])).getTime()),
        ) as [string, string];
        const createdAt = new Date(at);
        and.push({ OR: [{ createdAt: { gt: createdAt } }, { createdAt, id: { gt: id } }] });
      }
      const rows = await prisma.event.findMany({
        where: { AND: and },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        take: query.limit + 1,
      });
      const page = rows.slice(0, query.limit);
      const last = page[page.length - 1];
      const radius = (await getTenantSettings(deps.db, ctx.tenantId)).geofenceRadiusMetros;
      return {
        items: page.map((e) => toEventWire(e, radius)),
        nextCursor:
          rows.length > query.limit && last ? encodeCursor([last.createdAt.toISOString(), last.id]) : null,
      };
    },

    async get(ctx: AdminContext, id: string) {
      return wire(ctx, await findEvent(prisma, ctx.tenantId, id));
    },

    async create(ctx: AdminContext, input: CreateEventRequest) {
      checkDates(input.startsAt, input.endsAt);
      const now = deps.clock.now();
      const event = await prisma.$transaction(async (tx) => {
        const row = await tx.event.create({
          data: {
            id: newId(),
            tenantId: ctx.tenantId,
            name: input.name,
            description: input.description ?? null,
            startsAt: input.startsAt ? new Date(input.startsAt) : null,
            endsAt: input.endsAt ? new Date(input.endsAt) : null,
            timeZone: input.timeZone ?? 'UTC',
            ...venueColumns(input.venue ?? null),
            status: 'draft',
            publicToken: randomToken('ev_', 24),
            checkinMethods: input.checkinMethods ?? ALL_METHODS,
            capacity: input.capacity ?? null,
            reentry: input.reentry ?? REENTRY_DEFAULT,
            ...geofenceColumns(input.geofence ?? null),
            branding: (input.branding ?? {}) as Prisma.InputJsonObject,
            createdAt: now,
            updatedAt: now,
          },
        });
        await audit(tx, ctx, 'event.created', row.id);
        return row;
      });
      return wire(ctx, event);
    },

    async update(ctx: AdminContext, id: string, patch: UpdateEventRequest) {
      return change(ctx, id, async (_tx, event) => {
        const startsAt = patch.startsAt !== undefined ? patch.startsAt : event.startsAt?.toISOString();
        const endsAt = patch.endsAt !== undefined ? patch.endsAt : event.endsAt?.toISOString();
        checkDates(startsAt, endsAt);
        return {
          action: 'event.updated',
          meta: { fields: Object.keys(patch) },
          data: {
            ...(patch.name !== undefined ? { name: patch.name } : {}),
            ...(patch.description !== undefined ? { description: patch.description } : {}),
            ...(patch.startsAt !== undefined
              ? { startsAt: patch.startsAt ? new Date(patch.startsAt) : null }
              : {}),
            ...(patch.endsAt !== undefined ? { endsAt: patch.endsAt ? new Date(patch.endsAt) : null } : {}),
            ...(patch.timeZone !== undefined ? { timeZone: patch.timeZone } : {}),
            ...(patch.venue !== undefined ? venueColumns(patch.venue) : {}),
            ...(patch.branding !== undefined ? { branding: patch.branding as Prisma.InputJsonObject } : {}),
          },
        };
      });
    },

    async configure(ctx: AdminContext, id: string, config: EventConfigRequest) {
      return change(ctx, id, async (tx, event) => {
        // Under the event's lock, so no check-in slips in between the count and the change.
        if (typeof config.capacity === 'number' && config.capacity !== event.capacity) {
          const checkedIn = await checkedInCount(tx, event.id);
          if (config.capacity < checkedIn) {
            throw new AppError(
              409,
              'capacity_below_checked_in',
              `The capacity cannot be below the ${checkedIn} already checked in`,
              { extra: { checkedIn, capacity: config.capacity } },
            );
          }
        }
        return {
          action: 'event.configured',
          meta: config as Prisma.InputJsonObject,
          data: {
            ...(config.checkinMethods !== undefined ? { checkinMethods: config.checkinMethods } : {}),
            ...(config.capacity !== undefined ? { capacity: config.capacity } : {}),
            ...(config.geofence !== undefined ? geofenceColumns(config.geofence) : {}),
            ...(config.reentry !== undefined ? { reentry: config.reentry } : {}),
          },
        };
      });
    },

    /** Moves the status along EVENT_TRANSITIONS; the same status again is a no-op (200). */
    async setStatus(ctx: AdminContext, id: string, status: EventStatus) {
      return change(ctx, id, async (_tx, event) => {
        const from = event.status as EventStatus;
        if (from === status) return null;
        if (!EVENT_TRANSITIONS[from].includes(status)) {
          throw new AppError(409, 'invalid_transition', `An event cannot go from ${from} to ${status}`, {
            extra: { from, to: status, allowed: EVENT_TRANSITIONS[from] },
          });
        }
        return { action: 'event.status_changed', meta: { from, to: status }, data: { status } };
      });
    },

    /**
     * An event without check-ins is deleted with its guests. One with check-ins is archived: hidden from
     * every route, its token dead, its guests and check-ins kept with their links (history is not lost).
     */
    async remove(ctx: AdminContext, id: string): Promise<{ id: string; result: 'deleted' | 'archived' }> {
      return prisma.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT id FROM events WHERE id = ${id} AND tenant_id = ${ctx.tenantId} FOR UPDATE`;
        const event = await findEvent(tx, ctx.tenantId, id);
        const checkIns = await tx.checkIn.count({ where: { eventId: event.id } });
        const now = deps.clock.now();
        if (checkIns === 0) {
          await tx.event.delete({ where: { id: event.id } });
          await audit(tx, ctx, 'event.deleted', event.id, { name: event.name });
          return { id: event.id, result: 'deleted' as const };
        }
        await tx.event.update({ where: { id: event.id }, data: { deletedAt: now, updatedAt: now } });
        await audit(tx, ctx, 'event.archived', event.id, { name: event.name, checkIns });
        return { id: event.id, result: 'archived' as const };
      });
    },

    /**
     * Makes the event's list token, the confirmed list's own credential for offline readers other than
     * devices; a new one ends the previous one at once. Only its hash is kept; the token is shown once.
     */
    async issueListToken(ctx: AdminContext, id: string): Promise<{ token: string; createdAt: string }> {
      const token = randomToken('plt_');
      const now = deps.clock.now();
      await change(ctx, id, async (_tx, event) => ({
        action: event.listTokenHash ? 'event.list_token_rotated' : 'event.list_token_created',
        data: { listTokenHash: hashToken(token), listTokenAt: now },
      }));
      return { token, createdAt: now.toISOString() };
    },

    /** Ends the event's list token; 404 when it has none. */
    async revokeListToken(ctx: AdminContext, id: string): Promise<void> {
      await change(ctx, id, async (_tx, event) => {
        if (!event.listTokenHash) throw notFound('List token');
        return { action: 'event.list_token_revoked', data: { listTokenHash: null, listTokenAt: null } };
      });
    },

    async branding(token: string) {
      return toPublicBranding(await eventByToken(prisma, token));
    },
  };
}
