// Guests of an event: the admin list (search, status, cursor pages), changes, links to persons, and the
// public side by token (guest view, confirmation, link check-in, the confirmed list for kiosks).
// Every change to a guest row takes the event's row lock and a new change sequence number, so the
// confirmed list's checkpoint never skips a change that commits late.
import {
  LIST_TOKEN_HEADER,
  type CreateGuestRequest,
  type GuestListQuery,
  type GuestStatus,
  type UpdateGuestRequest,
} from '@portico/contract';
import { Prisma, type Event, type Guest } from '../../generated/prisma/client.js';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { AppError, notFound } from '../../http/errors.js';
import { createRateLimiter, type RateLimitRule } from '../../http/rate-limit.js';
import type { RequestMeta } from '../../http/request-context.js';
import { hashToken, randomToken } from '../../infra/crypto.js';
import { newId, type Tx } from '../../infra/db/index.js';
import { likeLiteral } from '../../infra/db/like.js';
import { recordAudit, targetAudit } from '../audit/record.js';
import { createCheckinLimits } from '../checkin/limits.js';
import { loadEvent, recordCheckin } from '../checkin/record.js';
import { decodeCursor, encodeCursor, eventByToken, findEvent, type AdminContext } from '../events/service.js';
import { firstName } from '../checkin/record.js';
import { toGuestWire, toPublicGuest } from './wire.js';

type Deps = Pick<AppDeps, 'db' | 'clock' | 'config' | 'outbox'>;

/**
 * Public token routes are limited per client address (all API processes share the counters); link
 * check-ins are not: a door rush comes from one address, so they are limited per link and per event
 * (checkin/limits.ts).
 */
export const PUBLIC_GUEST_LIMITS = {
  read: { limit: 120, windowMs: 60_000 },
  confirm: { limit: 30, windowMs: 60_000 },
  list: { limit: 600, windowMs: 60_000 },
} satisfies Record<string, RateLimitRule>;

/** What a document number is written with besides its digits and letters (`123.456.789-00`). */
const DOCUMENT_PUNCTUATION = /[-./\s]/g;

/** Statuses on the confirmed list. */
export const ON_LIST = ['confirmed', 'checked_in'];
/** Statuses that open the public confirmation (guests confirm ahead of the day, and at the door). */
const CONFIRMABLE_EVENT = new Set(['published', 'open']);

export const newGuestTokens = () => ({
  guestToken: randomToken('gt_', 18),
  linkToken: randomToken('lk_', 18),
});

/** Takes the event's row lock for the rest of `tx`; the event must be the tenant's and live. */
export async function lockEvent(tx: Tx, tenantId: string, eventId: string): Promise<Event> {
  await tx.$queryRaw`SELECT id FROM events WHERE id = ${eventId} AND tenant_id = ${tenantId} FOR UPDATE`;
  return findEvent(tx, tenantId, eventId);
}

/** A new change sequence number for each guest (call under the event's lock). */
export const bumpGuests = (tx: Pick<Tx, '$executeRaw'>, ids: string[]) =>
  tx.$executeRaw`UPDATE guests SET change_seq = nextval('guests_change_seq_seq') WHERE id IN (${Prisma.join(ids)})`;

export interface GuestKeys {
  email?: string | null | undefined;
  document?: string | null | undefined;
  personId?: string | null | undefined;
}

/**
 * The live guest of the event that `keys` would repeat: same e-mail (any case), same document, or the
 * same linked person. A guest list holds each of them once.
 */
export async function duplicateOf(
  tx: Pick<Tx, 'guest'>,
  eventId: string,
  keys: GuestKeys,
  exceptId?: string,
): Promise<Guest | null> {
  const or: Prisma.GuestWhereInput[] = [];
  if (keys.email) or.push({ email: { equals: keys.email, mode: 'insensitive' } });
  if (keys.document) or.push({ document: keys.document });
  if (keys.personId) or.push({ personId: keys.personId });
  if (or.length === 0) return null;
  return tx.guest.findFirst({
    where: { eventId, deletedAt: null, OR: or, ...(exceptId ? { id: { not: exceptId } } : {}) },
  });
}

const duplicateGuest = (existing: Guest) =>
  new AppError(409, 'duplicate_guest', 'A guest of this event already has this e-mail, document or person', {
    extra: { guestId: existing.id },
  });

const eventFull = (capacity: number) =>
  new AppError(409, 'event_full', `The event is full: ${capacity} guests have confirmed`, {
    extra: { capacity },
  });

/** Confirmed (or checked-in) live guests of the event, for the capacity of confirmations. */
export const confirmedCount = (tx: Pick<Tx, 'guest'>, eventId: string) =>
  tx.guest.count({ where: { eventId, deletedAt: null, status: { in: ON_LIST } } });

const birthDateOf = (v: string | null | undefined) =>
  v === undefined ? undefined : v === null ? null : new Date(`${v}T00:00:00.000Z`);

/** A guest row of the confirmed list, as its pages (and the devices' replica, sync/replica.ts) read it. */
export interface ConfirmedRow {
  id: string;
  name: string;
  status: string;
  checked_in_at: Date | null;
  deleted_at: Date | null;
  change_seq: bigint;
}

export function createGuestService(deps: Deps) {
  const { prisma } = deps.db;
  const limiter = createRateLimiter(deps.db, deps.clock);
  const checkinLimits = createCheckinLimits(deps);
  const publicUrl = deps.config.publicUrl;
  const limit = (kind: keyof typeof PUBLIC_GUEST_LIMITS, ip: string) =>
    limiter.enforce(`guests:${kind}:${ip}`, PUBLIC_GUEST_LIMITS[kind]);

  const audit = targetAudit('guest');

  async function findGuest(tx: Pick<Tx, 'guest'>, event: Event, guestId: string): Promise<Guest> {
    const guest = await tx.guest.findFirst({ where: { id: guestId, eventId: event.id, deletedAt: null } });
    if (!guest) throw notFound('Guest');
    return guest;
  }

  async function checkPerson(tx: Pick<Tx, 'person'>, tenantId: string, personId: string | null | undefined) {
    if (!personId) return;
    const person = await tx.person.findFirst({ where: { id: personId, tenantId }, select: { id: true } });
    if (!person) throw notFound('Person');
  }

  /** Status changes an admin makes: confirming counts against the capacity. */
  async function statusColumns(tx: Tx, event: Event, from: string | null, to: GuestStatus | undefined) {
    if (to === undefined || to === from) return {};
    if (from === 'checked_in') {
      throw new AppError(409, 'conflict', 'A checked-in guest keeps its status: the check-in happened');
    }
    if (ON_LIST.includes(to) && !(from && ON_LIST.includes(from)) && event.capacity !== null) {
      if ((await confirmedCount(tx, event.id)) >= event.capacity) throw eventFull(event.capacity);
    }
    const now = deps.clock.now();
    return { status: to, ...(to === 'confirmed' ? { confirmedAt: now } : {}) };
  }

  /** The live guest of a public token pair, with its event (not a draft, tenant active). */
  async function byTokens(tx: Pick<Tx, 'event' | 'guest'>, eventToken: string, guestToken: string) {
    const event = await eventByToken(tx, eventToken);
    const guest = await tx.guest.findUnique({ where: { guestToken } });
    if (!guest || guest.eventId !== event.id || guest.deletedAt) throw notFound('Guest');
    return { event, guest };
  }

  return {
    /**
     * A page of the event's guests by name, with the total matching. `q` is folded (case and accents)
     * as the stored search text is and, for documents, also tried without punctuation: the door types
     * what it hears.
     */
    async list(ctx: AdminContext, eventId: string, query: GuestListQuery) {
      const event = await findEvent(prisma, ctx.tenantId, eventId);
      const where = [Prisma.sql`event_id = ${event.id} AND deleted_at IS NULL`];
      if (query.q) {
        // search_text is folded by the database (fold_text, trigger guests_search_text); so is `q` here.
        const digits = query.q.replace(DOCUMENT_PUNCTUATION, '');
        where.push(Prisma.sql`(search_text LIKE '%' || fold_text(${likeLiteral(query.q)}) || '%'
          ${
            /\d/.test(digits) && digits !== query.q
              ? Prisma.sql`OR search_text LIKE '%' || fold_text(${likeLiteral(digits)}) || '%'`
              : Prisma.empty
          })`);
      }
      if (query.status) where.push(Prisma.sql`status = ${query.status}`);
      const filtered = Prisma.join(where, ' AND ');
      const page = [...where];
      if (query.cursor) {
        const [name, id] = decodeCursor(
          query.cursor,
          (v) => v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string',
        ) as [string, string];
        page.push(Prisma.sql`(name > ${name} OR (name = ${name} AND id > ${id}))`);
      }
      const [ids, [count]] = await Promise.all([
        prisma.$queryRaw<{ id: string }[]>`
          SELECT id FROM guests WHERE ${Prisma.join(page, ' AND ')}
           ORDER BY name, id LIMIT ${query.limit + 1}`,
        prisma.$queryRaw<{ total: bigint }[]>`SELECT COUNT(*) AS total FROM guests WHERE ${filtered}`,
      ]);
      const rows = await prisma.guest.findMany({ where: { id: { in: ids.map((r) => r.id) } } });
      const byId = new Map(rows.map((g) => [g.id, g]));
      const found = ids.flatMap((r) => byId.get(r.id) ?? []);
      const items = found.slice(0, query.limit);
      const last = items[items.length - 1];
      return {
        items: items.map((g) => toGuestWire(g, event, publicUrl)),
        nextCursor: found.length > query.limit && last ? encodeCursor([last.name, last.id]) : null,
        total: Number(count?.total ?? 0),
      };
    },

    async create(ctx: AdminContext, eventId: string, input: CreateGuestRequest) {
      return prisma.$transaction(async (tx) => {
        const event = await lockEvent(tx, ctx.tenantId, eventId);
        await checkPerson(tx, ctx.tenantId, input.personId);
        const dup = await duplicateOf(tx, event.id, input);
        if (dup) throw duplicateGuest(dup);
        const now = deps.clock.now();
        const guest = await tx.guest.create({
          data: {
            id: newId(),
            tenantId: ctx.tenantId,
            eventId: event.id,
            personId: input.personId ?? null,
            name: input.name,
            email: input.email ?? null,
            phone: input.phone ?? null,
            document: input.document ?? null,
            birthDate: birthDateOf(input.birthDate) ?? null,
            ...newGuestTokens(),
            status: 'pending',
            ...(await statusColumns(tx, event, null, input.status)),
            createdAt: now,
            updatedAt: now,
          },
        });
        await audit(tx, ctx, 'guest.created', guest.id, { eventId: event.id });
        return toGuestWire(guest, event, publicUrl);
      });
    },

    async update(ctx: AdminContext, eventId: string, guestId: string, patch: UpdateGuestRequest) {
      return prisma.$transaction(async (tx) => {
        const event = await lockEvent(tx, ctx.tenantId, eventId);
        const guest = await findGuest(tx, event, guestId);
        if (patch.personId !== undefined) await checkPerson(tx, ctx.tenantId, patch.personId);
        const dup = await duplicateOf(
          tx,
          event.id,
          { email: patch.email, document: patch.document, personId: patch.personId },
          guest.id,
        );
        if (dup) throw duplicateGuest(dup);
        const has = <K extends keyof UpdateGuestRequest>(k: K) => patch[k] !== undefined;
        const updated = await tx.guest.update({
          where: { id: guest.id },
          data: {
            ...(has('name') ? { name: patch.name! } : {}),
            ...(has('email') ? { email: patch.email ?? null } : {}),
            ...(has('phone') ? { phone: patch.phone ?? null } : {}),
            ...(has('document') ? { document: patch.document ?? null } : {}),
            ...(has('birthDate') ? { birthDate: birthDateOf(patch.birthDate) ?? null } : {}),
            ...(has('personId') ? { personId: patch.personId ?? null } : {}),
            ...(await statusColumns(tx, event, guest.status, patch.status)),
            updatedAt: deps.clock.now(),
          },
        });
        await bumpGuests(tx, [guest.id]);
        await audit(tx, ctx, 'guest.updated', guest.id, { eventId: event.id, fields: Object.keys(patch) });
        return toGuestWire(updated, event, publicUrl);
      });
    },

    /**
     * Removes the guest from the list: a tombstone keeps the row (so check-ins keep their guest and
     * confirmed lists learn of the removal) with contact and document fields erased.
     */
    async remove(ctx: AdminContext, eventId: string, guestId: string): Promise<void> {
      await prisma.$transaction(async (tx) => {
        const event = await lockEvent(tx, ctx.tenantId, eventId);
        const guest = await findGuest(tx, event, guestId);
        const now = deps.clock.now();
        await tx.guest.update({
          where: { id: guest.id },
          data: { deletedAt: now, updatedAt: now, email: null, phone: null, document: null, birthDate: null },
        });
        await bumpGuests(tx, [guest.id]);
        await audit(tx, ctx, 'guest.deleted', guest.id, { eventId: event.id });
      });
    },

    async publicGuest(eventToken: string, guestToken: string, meta: RequestMeta) {
      await limit('read', meta.ip);
      const { event, guest } = await byTokens(prisma, eventToken, guestToken);
      return toPublicGuest(guest, event);
    },

    /**
     * The guest's answer to the invitation, idempotent (an answer already given answers as is), open
     * while the event is published or open. `confirmed`: a checked-in guest stays so, and the capacity
     * bounds confirmations. `declined`: frees a confirmed place; a checked-in guest cannot decline (409
     * `already_checked_in`).
     */
    async answer(
      eventToken: string,
      guestToken: string,
      answer: 'confirmed' | 'declined',
      meta: RequestMeta,
    ) {
      await limit('confirm', meta.ip);
      return prisma.$transaction(async (tx) => {
        const found = await byTokens(tx, eventToken, guestToken);
        await tx.$queryRaw`SELECT id FROM events WHERE id = ${found.event.id} FOR UPDATE`;
        const { event, guest } = await byTokens(tx, eventToken, guestToken);
        const given = answer === 'confirmed' ? ON_LIST.includes(guest.status) : guest.status === 'declined';
        if (given) return toPublicGuest(guest, event);
        if (answer === 'declined' && guest.status === 'checked_in') {
          throw new AppError(409, 'already_checked_in', 'This guest is already checked in');
        }
        if (!CONFIRMABLE_EVENT.has(event.status)) {
          throw new AppError(409, 'event_not_open', `The event is ${event.status}: answers are closed`, {
            extra: { eventStatus: event.status },
          });
        }
        if (
          answer === 'confirmed' &&
          event.capacity !== null &&
          (await confirmedCount(tx, event.id)) >= event.capacity
        ) {
          throw eventFull(event.capacity);
        }
        const now = deps.clock.now();
        const updated = await tx.guest.update({
          where: { id: guest.id },
          data: { status: answer, confirmedAt: answer === 'confirmed' ? now : null, updatedAt: now },
        });
        await bumpGuests(tx, [guest.id]);
        await recordAudit(tx, {
          tenantId: guest.tenantId,
          actorType: 'public',
          action: `guest.${answer}`,
          targetType: 'guest',
          targetId: guest.id,
          metadata: { eventId: event.id },
          ip: meta.ip,
          requestId: meta.requestId,
        });
        return toPublicGuest(updated, event);
      });
    },

    /**
     * The invitation's check-in link. Records a `link` check-in under the event's rules while the event
     * is open; once the guest is checked in, a visit answers `already_checked_in` and records nothing.
     */
    async checkinByLink(actor: ActorOf<'public'>, token: string, meta: RequestMeta) {
      // A link that resolves to nothing counts against the address's unknown tokens (guessing); a known
      // one is limited per link and per event, not per address (a venue's guests share one).
      const guest = await checkinLimits.lookup(actor, meta.ip, async () => {
        const found = await prisma.guest.findUnique({
          where: { linkToken: token },
          include: { event: true, tenant: { select: { status: true } } },
        });
        const gone = !found || found.deletedAt || found.event.deletedAt || found.tenant.status !== 'active';
        return gone ? null : found;
      });
      if (!guest) throw notFound('Check-in link');
      await checkinLimits.token('link', guest.id, { eventId: guest.eventId });
      const view = { guest: { displayName: firstName(guest.name) }, event: { name: guest.event.name } };
      if (guest.checkedInAt) {
        return {
          result: 'already_checked_in' as const,
          reason: null,
          ...view,
          checkInId: null,
          checkedInAt: guest.checkedInAt.toISOString(),
        };
      }
      if (guest.event.status !== 'open') {
        throw new AppError(
          409,
          'event_not_open',
          `The event is ${guest.event.status}: check-in is not open`,
          {
            extra: { eventStatus: guest.event.status },
          },
        );
      }
      try {
        const result = await recordCheckin(deps, {
          tenantId: guest.tenantId,
          method: 'link',
          verdict: 'recognised',
          personId: guest.personId,
          guest: { id: guest.id, once: true },
          event: await loadEvent(deps.db.sql, guest.tenantId, guest.eventId),
          actor,
          requestId: meta.requestId,
          ip: meta.ip,
        });
        const admitted = result.outcome === 'success' || result.outcome === 'geofence_alert';
        return {
          result: admitted ? ('checked_in' as const) : ('denied' as const),
          reason: result.reason,
          ...view,
          checkInId: result.checkInId,
          checkedInAt: admitted ? result.occurredAt : null,
        };
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'already_checked_in') throw error;
        const at = error.details.extra?.checkedInAt as string;
        return {
          result: 'already_checked_in' as const,
          reason: null,
          ...view,
          checkInId: null,
          checkedInAt: at,
        };
      }
    },

    /**
     * Pages of the confirmed list in change order. Without `since`: every guest on the list (and, once
     * the fetch has begun, whoever left it meanwhile); with `since`: only changes after that checkpoint,
     * removals included. The cursor carries the mode and the position. The event token only names the
     * event (it is in every invitation): the reader is a device of the event's tenant or holds the
     * event's list token.
     */
    async confirmedList(
      eventToken: string,
      reader: { deviceTenantId: string } | { listToken: string | undefined },
      query: { since?: string | undefined; cursor?: string | undefined; limit: number },
      meta: RequestMeta,
    ) {
      await limit('list', meta.ip);
      const event = await eventByToken(prisma, eventToken);
      if ('deviceTenantId' in reader) {
        if (reader.deviceTenantId !== event.tenantId) throw notFound('Event');
      } else if (!reader.listToken) {
        throw new AppError(
          401,
          'unauthorized',
          `The confirmed list needs the event's list token (${LIST_TOKEN_HEADER}) or a device's credentials`,
        );
      } else if (event.listTokenHash === null || hashToken(reader.listToken) !== event.listTokenHash) {
        // Comparing digests: equal-length values of a token the caller does not know, nothing to time.
        throw new AppError(401, 'invalid_token', 'Not the current list token of this event');
      }
      let mode: 'full' | 'delta';
      let after: bigint;
      let start: bigint;
      if (query.cursor) {
        const [m, a, s] = decodeCursor(
          query.cursor,
          (v) =>
            v.length === 3 &&
            (v[0] === 'full' || v[0] === 'delta') &&
            /^\d{1,18}$/.test(String(v[1])) &&
            /^\d{1,18}$/.test(String(v[2])),
        ) as ['full' | 'delta', string, string];
        [mode, after, start] = [m, BigInt(a), BigInt(s)];
      } else if (query.since !== undefined) {
        [mode, after, start] = ['delta', BigInt(query.since), 0n];
      } else {
        const [row] = await prisma.$queryRaw<{ max: bigint | null }[]>`
          SELECT MAX(change_seq) AS max FROM guests WHERE event_id = ${event.id}`;
        [mode, after, start] = ['full', 0n, row?.max ?? 0n];
      }
      const onList = Prisma.sql`(deleted_at IS NULL AND status IN ('confirmed', 'checked_in'))`;
      const rows = await prisma.$queryRaw<ConfirmedRow[]>`
        SELECT id, name, status, checked_in_at, deleted_at, change_seq FROM guests
         WHERE event_id = ${event.id} AND change_seq > ${after}::bigint
           ${mode === 'full' ? Prisma.sql`AND (${onList} OR change_seq > ${start}::bigint)` : Prisma.empty}
         ORDER BY change_seq LIMIT ${query.limit + 1}`;
      const page = rows.slice(0, query.limit);
      const more = rows.length > query.limit;
      const last = page.length > 0 ? BigInt(page[page.length - 1]!.change_seq) : after;
      const items = [];
      const removed = [];
      for (const r of page) {
        if (r.deleted_at === null && ON_LIST.includes(r.status)) {
          items.push({
            guestId: r.id,
            name: r.name,
            status: r.status as 'confirmed' | 'checked_in',
            checkedInAt: r.checked_in_at ? new Date(r.checked_in_at).toISOString() : null,
          });
        } else {
          removed.push(r.id);
        }
      }
      const checkpoint = more || mode === 'delta' || last > start ? last : start;
      return {
        items,
        removed,
        nextCursor: more ? encodeCursor([mode, String(last), String(start)]) : null,
        checkpoint: String(checkpoint),
      };
    },
  };
}
