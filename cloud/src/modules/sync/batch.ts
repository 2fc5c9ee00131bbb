// The check-ins edge devices decided offline, uploaded in batches: each recorded through the one
// check-in path under the device's id and time, flagged where the cloud disagrees, never refused for
// being late. Their frames are in frames.ts.
import {
  SYNC_EVENT_EARLY_HOURS,
  SYNC_ITEM_MAX_AGE_DAYS,
  SyncItem,
  type SyncItem as SyncItemT,
  type TenantSettings,
} from '@portico/contract';
import { eventVerdict, isAdmitted, syncFlags, type SyncFlag } from '@portico/checkin-policy';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { AppError, notFound } from '../../http/errors.js';
import type { RequestMeta } from '../../http/request-context.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { isUniqueViolation, viaPrisma } from '../../infra/db/index.js';
import { oneStatement } from '../../infra/db/statements.js';
import { checkinInserts, loadEvent, recordCheckin } from '../checkin/record.js';
import { geofenceStatus } from '../checkin/rules.js';
import { getTenantSettings } from '../tenants/service.js';
import { discardFrames, frameRow, saveFrames, type SavedFrame } from './frames.js';

type Deps = Pick<AppDeps, 'db' | 'clock' | 'outbox' | 'images'>;

type ItemResult = {
  clientId: string | null;
  status: 'accepted' | 'duplicate' | 'rejected';
  checkInId: string | null;
  outcome: 'success' | 'denied' | 'liveness_failed' | 'geofence_alert' | null;
  flags: string[];
  receivedAt: string | null;
  code: 'validation_failed' | 'not_found' | 'conflict' | null;
  detail: string | null;
};

/** How far ahead of the cloud a device's clock may run before its recordedAt is refused. */
const CLOCK_AHEAD_MS = 5 * 60_000;
const ITEM_MAX_AGE_MS = SYNC_ITEM_MAX_AGE_DAYS * 24 * 3_600_000;
const EVENT_EARLY_MS = SYNC_EVENT_EARLY_HOURS * 3_600_000;

/**
 * Why a recordedAt cannot be a real time of this item, or null. Such an item is refused rather than
 * flagged: its time is what is wrong (a device clock reset to its factory year, or set days back), and
 * a fact stored at a false time would mislead every report and rule that reads it.
 */
function recordedAtProblem(recordedAt: number, now: number, eventStartsAt: Date | null): string | null {
  if (recordedAt > now + CLOCK_AHEAD_MS) return 'recordedAt is in the future (check the device clock)';
  if (recordedAt < now - ITEM_MAX_AGE_MS) {
    return `recordedAt is older than ${SYNC_ITEM_MAX_AGE_DAYS} days, longer than a device queue keeps an item (check the device clock)`;
  }
  if (eventStartsAt && recordedAt < eventStartsAt.getTime() - EVENT_EARLY_MS) {
    return `recordedAt is before the event’s window (${SYNC_EVENT_EARLY_HOURS} h before it starts; check the device clock)`;
  }
  return null;
}

/** Check-ins whose rows go to the database as one statement (about 40 parameters each). */
const ROWS_PER_STATEMENT = 100;

/** How a device settled a face between its lines; only a facial decision has one. */
const stepUpOf = (item: SyncItemT) =>
  item.method === 'facial' && item.stepUpFactor ? { factor: item.stepUpFactor } : null;

/**
 * A clientId already held by another tenant's check-in. The item is judged like one with an unknown id
 * (its references first: another tenant's event is `not_found`), so the answer never says that the id
 * exists elsewhere; ids are global, so an otherwise valid item is refused as unusable.
 */
const takenId = (clientId: string) =>
  rejected(clientId, 'validation_failed', 'clientId cannot be used: generate a new one (UUIDv7)');

const rejected = (clientId: string | null, code: ItemResult['code'], detail: string): ItemResult => ({
  clientId,
  status: 'rejected',
  checkInId: null,
  outcome: null,
  flags: [],
  receivedAt: null,
  code,
  detail,
});

/** The check-in columns that answer an upload of an id the tenant already holds. */
const RECORDED = { tenantId: true, deviceId: true, outcome: true, conflict: true, receivedAt: true } as const;
type Recorded = { deviceId: string | null; outcome: string; conflict: string | null; receivedAt: Date };

/** The answer to a clientId this tenant recorded before: the first answer again, if this device's. */
function replayOf(actor: ActorOf<'device'>, clientId: string, row: Recorded): ItemResult {
  if (row.deviceId !== actor.deviceId) {
    return rejected(clientId, 'conflict', 'This clientId names a check-in of another device');
  }
  return {
    clientId,
    status: 'duplicate',
    checkInId: clientId,
    outcome: row.outcome as ItemResult['outcome'],
    flags: row.conflict ? row.conflict.split(',') : [],
    receivedAt: row.receivedAt.toISOString(),
    code: null,
    detail: null,
  };
}

/** The answer an earlier upload of `clientId` got, or null when it is new. */
async function earlier(
  deps: Pick<AppDeps, 'db'>,
  actor: ActorOf<'device'>,
  clientId: string,
): Promise<ItemResult | null> {
  const row = await deps.db.prisma.checkIn.findUnique({ where: { id: clientId }, select: RECORDED });
  if (!row) return null;
  // Reached only in a race (planBatch has checked the item's references): see takenId.
  if (row.tenantId !== actor.tenantId) return takenId(clientId);
  return replayOf(actor, clientId, row);
}

/** One item alone through the one recording path: for those no group recorded (see syncBatch). */
async function recordItem(
  deps: Pick<AppDeps, 'db' | 'clock' | 'outbox'>,
  actor: ActorOf<'device'>,
  item: SyncItemT,
  settings: TenantSettings,
  meta: RequestMeta,
  frame: SavedFrame | undefined,
): Promise<ItemResult> {
  const again = await earlier(deps, actor, item.clientId);
  if (again) return again;
  const recordedAt = new Date(item.recordedAt);
  // The event's window was checked with the batch (planBatch), which every item passes first.
  const timeProblem = recordedAtProblem(recordedAt.getTime(), deps.clock.now().getTime(), null);
  if (timeProblem) return rejected(item.clientId, 'validation_failed', timeProblem);
  if (item.guestId && !item.eventId) {
    return rejected(item.clientId, 'validation_failed', 'guestId needs the eventId of its event');
  }
  try {
    const event = await loadEvent(deps.db.sql, actor.tenantId, item.eventId);
    if (item.guestId) {
      const guest = await deps.db.prisma.guest.findFirst({
        where: { id: item.guestId, eventId: event!.id, tenantId: actor.tenantId },
        select: { id: true },
      });
      if (!guest) throw notFound('Guest');
    }
    const { outcome, reason } = item;
    const result = await recordCheckin(deps, {
      tenantId: actor.tenantId,
      settings,
      method: item.method,
      verdict:
        outcome === 'liveness_failed'
          ? 'liveness_failed'
          : outcome === 'denied' && (reason === null || reason === 'not_recognised')
            ? 'not_recognised'
            : outcome === 'denied' && reason === 'step_up_failed'
              ? 'step_up_failed'
              : 'recognised',
      personId: item.personId ?? null,
      event,
      ...(item.guestId && { guest: { id: item.guestId, once: false } }),
      deviceId: actor.deviceId,
      location: item.location,
      score: item.score ?? null,
      livenessScore: item.livenessScore ?? null,
      stepUp: stepUpOf(item),
      actor,
      requestId: meta.requestId,
      ip: meta.ip,
      ...(frame && { alsoInsert: () => [frameRow(actor.tenantId, item, frame)] }),
      synced: {
        checkInId: item.clientId,
        recordedAt,
        deviceId: actor.deviceId,
        decision: { outcome, reason: outcome === 'denied' ? (reason ?? 'not_recognised') : null },
        decidedOffline: item.decidedOffline ?? true,
      },
    });
    return {
      clientId: item.clientId,
      status: 'accepted',
      checkInId: result.checkInId,
      outcome: result.outcome,
      flags: result.flags ?? [],
      receivedAt: result.receivedAt ?? null,
      code: null,
      detail: null,
    };
  } catch (error) {
    if (error instanceof AppError && error.status === 404) {
      return rejected(item.clientId, 'not_found', error.message);
    }
    // The same item in two batches at once: the other one recorded it first.
    if (isUniqueViolation(error)) {
      const other = await earlier(deps, actor, item.clientId);
      if (other) return other;
    }
    throw error;
  }
}

/**
 * Sorts a batch's valid items: earlier uploads and bad references answered at once (in `results`),
 * the first occurrence of each new item grouped by event (`null`: none) for recording together.
 */
async function planBatch(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  actor: ActorOf<'device'>,
  valid: { at: number; item: SyncItemT }[],
  results: (ItemResult | undefined)[],
) {
  const { prisma } = deps.db;
  const ids = valid.map((v) => v.item.clientId);
  const [existing, events, guests, persons] = await Promise.all([
    prisma.checkIn.findMany({
      where: { id: { in: ids } },
      select: { id: true, ...RECORDED },
    }),
    prisma.event.findMany({
      where: {
        tenantId: actor.tenantId,
        deletedAt: null,
        id: { in: valid.flatMap((v) => v.item.eventId ?? []) },
      },
      select: { id: true, startsAt: true },
    }),
    prisma.guest.findMany({
      where: { tenantId: actor.tenantId, id: { in: valid.flatMap((v) => v.item.guestId ?? []) } },
      select: { id: true, eventId: true },
    }),
    prisma.person.findMany({
      where: { tenantId: actor.tenantId, id: { in: valid.flatMap((v) => v.item.personId ?? []) } },
      select: { id: true },
    }),
  ]);
  const known = new Map(existing.map((r) => [r.id, r]));
  const eventStarts = new Map(events.map((e) => [e.id, e.startsAt]));
  const guestEvent = new Map(guests.map((g) => [g.id, g.eventId]));
  const personIds = new Set(persons.map((p) => p.id));
  const seen = new Set<string>();
  const groups = new Map<string | null, { at: number; item: SyncItemT }[]>();
  const now = deps.clock.now().getTime();
  for (const v of valid) {
    const { item } = v;
    const held = known.get(item.clientId);
    // Another tenant's id is unknown here (see takenId).
    const row = held?.tenantId === actor.tenantId ? held : undefined;
    if (row) {
      results[v.at] = replayOf(actor, item.clientId, row);
      continue;
    }
    const timeProblem = recordedAtProblem(
      new Date(item.recordedAt).getTime(),
      now,
      (item.eventId && eventStarts.get(item.eventId)) || null,
    );
    const problem =
      item.guestId && !item.eventId
        ? rejected(item.clientId, 'validation_failed', 'guestId needs the eventId of its event')
        : item.eventId && !eventStarts.has(item.eventId)
          ? rejected(item.clientId, 'not_found', 'Event not found')
          : timeProblem
            ? rejected(item.clientId, 'validation_failed', timeProblem)
            : item.guestId && guestEvent.get(item.guestId) !== item.eventId
              ? rejected(item.clientId, 'not_found', 'Guest not found')
              : item.personId && !personIds.has(item.personId)
                ? rejected(item.clientId, 'not_found', 'Person not found')
                : held
                  ? takenId(item.clientId)
                  : null;
    if (problem) {
      results[v.at] = problem;
      continue;
    }
    // A person at an event without their guest row is matched to it by the recording path.
    if (seen.has(item.clientId) || (item.personId && item.eventId && !item.guestId)) continue;
    seen.add(item.clientId);
    const key = item.eventId ?? null;
    groups.set(key, [...(groups.get(key) ?? []), v]);
  }
  return groups;
}

/**
 * One event's new items in one transaction under the event's lock: the event rules (re-entry
 * included) re-checked for each in order with the shared policy (as `recordCheckin` does one at a
 * time), flags set, rows written in chunks, admitted guests marked checked in at their recorded time.
 */
async function recordGroup(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  actor: ActorOf<'device'>,
  settings: TenantSettings,
  eventId: string | null,
  group: { at: number; item: SyncItemT }[],
  meta: RequestMeta,
  frames: ReadonlyMap<string, SavedFrame>,
): Promise<Map<string, ItemResult>> {
  const receivedAt = deps.clock.now();
  return deps.db.prisma.$transaction(async (tx) => {
    let event: Awaited<ReturnType<typeof loadEvent>> = null;
    const inPersons = new Set<string>();
    const inGuests = new Set<string>();
    const inSubjects = new Set<string>();
    const guestCheckedIn = new Map<string, boolean>();
    if (eventId) {
      await tx.$queryRaw`SELECT id FROM events WHERE id = ${eventId} FOR UPDATE`;
      event = await loadEvent(viaPrisma(tx), actor.tenantId, eventId);
      // Who is in already: counted for the capacity, and known for re-entry (under `allow` a return
      // changes nothing, so without a capacity nobody needs counting).
      if (event!.capacity !== null || event!.reentry !== 'allow') {
        const admitted = await tx.$queryRaw<{ person_id: string | null; guest_id: string | null }[]>`
          SELECT DISTINCT person_id, guest_id FROM check_ins
           WHERE event_id = ${eventId} AND outcome IN ('success', 'geofence_alert') AND voided_at IS NULL
             AND (person_id IS NOT NULL OR guest_id IS NOT NULL)`;
        for (const r of admitted) {
          if (r.person_id) inPersons.add(r.person_id);
          if (r.guest_id) inGuests.add(r.guest_id);
          inSubjects.add((r.person_id ?? r.guest_id)!);
        }
      }
      const guestIds = group.flatMap((g) => g.item.guestId ?? []);
      if (guestIds.length > 0) {
        const rows = await tx.guest.findMany({
          where: { id: { in: guestIds }, deletedAt: null },
          select: { id: true, checkedInAt: true },
        });
        for (const r of rows) guestCheckedIn.set(r.id, r.checkedInAt !== null);
      }
    }
    const answers = new Map<string, ItemResult>();
    const rows: Prisma.Sql[][] = [];
    const checkedIn: { id: string; at: Date }[] = [];
    for (const { item } of group) {
      const decision = {
        outcome: item.outcome,
        reason: item.outcome === 'denied' ? (item.reason ?? 'not_recognised') : null,
      };
      // A guest removed from the list keeps its check-ins, unlinked (as the recording path does).
      const guestId = item.guestId && guestCheckedIn.has(item.guestId) ? item.guestId : null;
      const personId = item.personId ?? null;
      let flags: SyncFlag[] = [];
      if (event && isAdmitted(decision.outcome)) {
        const alreadyIn =
          (personId !== null && inPersons.has(personId)) ||
          (guestId !== null && (inGuests.has(guestId) || guestCheckedIn.get(guestId) === true));
        const verdict = eventVerdict(event, item.method, { admitted: inSubjects.size, alreadyIn });
        flags = syncFlags(decision, verdict);
        if (personId || guestId) {
          if (personId) inPersons.add(personId);
          if (guestId) inGuests.add(guestId);
          inSubjects.add((personId ?? guestId)!);
        }
        if (guestId && !guestCheckedIn.get(guestId)) {
          guestCheckedIn.set(guestId, true);
          checkedIn.push({ id: guestId, at: new Date(item.recordedAt) });
        }
      }
      const frame = frames.get(item.clientId);
      rows.push([
        ...checkinInserts({
          checkInId: item.clientId,
          tenantId: actor.tenantId,
          settings,
          method: item.method,
          ...decision,
          facts: {
            personId,
            eventId,
            guestId,
            score: item.score ?? null,
            livenessScore: item.livenessScore ?? null,
            geofenceStatus: geofenceStatus(event, item.location, settings.geofenceRadiusMetros),
            stepUp: stepUpOf(item),
          },
          identityId: null,
          location: item.location,
          occurredAt: new Date(item.recordedAt),
          receivedAt,
          actor,
          deviceLabel: actor.deviceId,
          requestId: meta.requestId,
          ip: meta.ip,
          flags,
          synced: { deviceId: actor.deviceId, decidedOffline: item.decidedOffline ?? true },
        }),
        ...(frame ? [frameRow(actor.tenantId, item, frame)] : []),
      ]);
      answers.set(item.clientId, {
        clientId: item.clientId,
        status: 'accepted',
        checkInId: item.clientId,
        outcome: decision.outcome,
        flags,
        receivedAt: receivedAt.toISOString(),
        code: null,
        detail: null,
      });
    }
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      await tx.$executeRaw(oneStatement(rows.slice(i, i + ROWS_PER_STATEMENT).flat()));
    }
    if (checkedIn.length > 0) {
      await tx.$executeRaw`
        UPDATE guests SET status = 'checked_in', checked_in_at = c.at,
               change_seq = nextval('guests_change_seq_seq'), updated_at = ${receivedAt}
          FROM unnest(${checkedIn.map((c) => c.id)}::text[], ${checkedIn.map((c) => c.at)}::timestamptz[]) AS c(id, at)
         WHERE guests.id = c.id`;
    }
    return answers;
  });
}

/**
 * Each item on its own, in order: a malformed or unknown one is rejected, the others recorded.
 * Items that name their guest (or no person) are recorded together, one transaction per event
 * holding its lock, their rows written a few statements at a time; the rest, or a group that met a
 * concurrent upload of the same ids, go one by one through the one recording path.
 */
export async function syncBatch(deps: Deps, actor: ActorOf<'device'>, items: unknown[], meta: RequestMeta) {
  const settings = await getTenantSettings(deps.db, actor.tenantId);
  const results: (ItemResult | undefined)[] = new Array(items.length);
  const valid: { at: number; item: SyncItemT }[] = [];
  items.forEach((raw, at) => {
    const parsed = SyncItem.safeParse(raw);
    if (parsed.success) return valid.push({ at, item: parsed.data });
    const id = (raw as { clientId?: unknown } | null)?.clientId;
    const issue = parsed.error.issues[0]!;
    results[at] = rejected(
      typeof id === 'string' ? id.slice(0, 64) : null,
      'validation_failed',
      `${issue.path.join('.') || 'item'}: ${issue.message}`.slice(0, 300),
    );
  });
  const groups = await planBatch(deps, actor, valid, results);
  const { saved, notes } = await saveFrames(
    deps,
    actor.tenantId,
    settings,
    valid.filter((v) => results[v.at] === undefined).map((v) => v.item),
  );
  try {
    for (const [eventId, group] of groups) {
      const recorded = await recordGroup(deps, actor, settings, eventId, group, meta, saved).catch(
        (error: unknown) => {
          if (isUniqueViolation(error)) return null;
          throw error;
        },
      );
      for (const { at, item } of group) {
        results[at] =
          recorded?.get(item.clientId) ??
          (await recordItem(deps, actor, item, settings, meta, saved.get(item.clientId)));
      }
    }
    // The same clientId twice in one batch: the later ones answer like a replay of the first.
    for (const { at, item } of valid) {
      results[at] ??= await recordItem(deps, actor, item, settings, meta, saved.get(item.clientId));
    }
  } finally {
    const written = new Set(
      results.flatMap((r) => (r?.status === 'accepted' && r.clientId ? [r.clientId] : [])),
    );
    await discardFrames(deps, saved, written);
  }
  for (const { at, item } of valid) {
    const note = notes.get(item.clientId);
    if (note && results[at]?.status === 'accepted') results[at] = { ...results[at], detail: note };
  }
  deps.outbox.notify('events');
  return { results: results as ItemResult[] };
}
