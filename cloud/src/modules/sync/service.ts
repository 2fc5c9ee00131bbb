// Edge devices' side of check-in: the offline decisions they upload (recorded through the one check-in
// path under the device's id and time, flagged where the cloud disagrees, never refused for being
// late) and the replica of an event they decide from (the confirmed list with face templates).
import {
  SYNC_EVENT_EARLY_HOURS,
  SYNC_FRAME_MAX_BYTES,
  SYNC_ITEM_MAX_AGE_DAYS,
  SyncItem,
  type Replica,
  type SyncItem as SyncItemT,
  type TenantSettings,
  z,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { AppError, notFound } from '../../http/errors.js';
import type { RequestMeta } from '../../http/request-context.js';
import { Prisma } from '../../generated/prisma/client.js';
import { isUniqueViolation, newId } from '../../infra/db/index.js';
import { hashToken } from '../../infra/crypto.js';
import { eventVerdict, isAdmitted, syncFlags, type SyncFlag } from '@portico/checkin-policy';
import { checkinInserts, loadEvent, recordCheckin } from '../checkin/record.js';
import { geofenceStatus } from '../checkin/rules.js';
import { insertRow, oneStatement } from '../../infra/db/statements.js';
import { frameBytes } from '../../infra/face.js';
import type { StoredImage } from '../../infra/image-store.js';
import { eventByToken } from '../events/service.js';
import { templateContext } from '../faces/gallery.js';
import { getTenantSettings } from '../tenants/service.js';

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

/** Template and person changes are read again this far behind the previous checkpoint (commit lag). */
const SKEW_MS = 5_000;
/** Check-ins whose rows go to the database as one statement (about 40 parameters each). */
const ROWS_PER_STATEMENT = 100;

/** A synced frame stored (encrypted) ahead of its check-in row. */
interface SavedFrame {
  imageId: string;
  stored: StoredImage;
  contentType: 'image/jpeg' | 'image/png';
}

const JPEG = Buffer.from([0xff, 0xd8, 0xff]);
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The content type of a frame by its magic bytes, or null when it is neither JPEG nor PNG. */
function frameType(bytes: Buffer): SavedFrame['contentType'] | null {
  if (bytes.subarray(0, JPEG.length).equals(JPEG)) return 'image/jpeg';
  if (bytes.subarray(0, PNG.length).equals(PNG)) return 'image/png';
  return null;
}

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

export function createSyncService(
  deps: Pick<AppDeps, 'db' | 'clock' | 'outbox' | 'cipher' | 'face' | 'images'>,
) {
  const { prisma } = deps.db;

  /** The `biometric_images` row of a synced check-in's frame, as online identification writes it. */
  const imageRow = (tenantId: string, item: SyncItemT, frame: SavedFrame) =>
    insertRow('biometric_images', {
      id: frame.imageId,
      tenant_id: tenantId,
      person_id: item.personId ?? null,
      check_in_id: item.clientId,
      kind: 'checkin',
      storage_key: frame.stored.storageKey,
      content_type: frame.contentType,
      byte_size: frame.stored.byteSize,
      sha256: frame.stored.sha256,
    });

  /**
   * The frames of a batch's new items, stored encrypted before their rows are written (as online
   * identification does). A frame the tenant does not keep, or that is not a JPEG/PNG within the size
   * limit, is not stored: its check-in still is, with a `detail` saying why (a fact is never lost for
   * its picture).
   */
  async function saveFrames(
    actor: ActorOf<'device'>,
    settings: TenantSettings,
    items: readonly SyncItemT[],
  ): Promise<{ saved: Map<string, SavedFrame>; notes: Map<string, string> }> {
    const saved = new Map<string, SavedFrame>();
    const notes = new Map<string, string>();
    for (const item of items) {
      if (item.frame === undefined || saved.has(item.clientId) || notes.has(item.clientId)) continue;
      if (!settings.syncCheckinImages) {
        notes.set(
          item.clientId,
          'frame not stored: the tenant does not keep check-in images (syncCheckinImages)',
        );
        continue;
      }
      const bytes = frameBytes(item.frame);
      const contentType = frameType(bytes);
      if (bytes.length > SYNC_FRAME_MAX_BYTES) {
        notes.set(item.clientId, `frame not stored: larger than ${SYNC_FRAME_MAX_BYTES} bytes`);
      } else if (!contentType) {
        notes.set(item.clientId, 'frame not stored: not a JPEG or PNG image');
      } else {
        const imageId = newId();
        saved.set(item.clientId, {
          imageId,
          stored: await deps.images.save(actor.tenantId, imageId, bytes),
          contentType,
        });
      }
    }
    return { saved, notes };
  }

  /** The answer an earlier upload of `clientId` got, or null when it is new. */
  async function earlier(actor: ActorOf<'device'>, clientId: string): Promise<ItemResult | null> {
    const row = await prisma.checkIn.findUnique({
      where: { id: clientId },
      select: { tenantId: true, deviceId: true, outcome: true, conflict: true, receivedAt: true },
    });
    if (!row) return null;
    // Reached only in a race (planBatch has checked the item's references): see takenId.
    if (row.tenantId !== actor.tenantId) return takenId(clientId);
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

  async function recordItem(
    actor: ActorOf<'device'>,
    item: SyncItemT,
    settings: Awaited<ReturnType<typeof getTenantSettings>>,
    meta: RequestMeta,
    frame: SavedFrame | undefined,
  ): Promise<ItemResult> {
    const again = await earlier(actor, item.clientId);
    if (again) return again;
    const recordedAt = new Date(item.recordedAt);
    // The event's window was checked with the batch (planBatch), which every item passes first.
    const timeProblem = recordedAtProblem(recordedAt.getTime(), deps.clock.now().getTime(), null);
    if (timeProblem) return rejected(item.clientId, 'validation_failed', timeProblem);
    if (item.guestId && !item.eventId) {
      return rejected(item.clientId, 'validation_failed', 'guestId needs the eventId of its event');
    }
    try {
      const event = await loadEvent(deps.db, actor.tenantId, item.eventId);
      if (item.guestId) {
        const guest = await prisma.guest.findFirst({
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
        ...(frame && { alsoInsert: () => [imageRow(actor.tenantId, item, frame)] }),
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
        const other = await earlier(actor, item.clientId);
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
    actor: ActorOf<'device'>,
    valid: { at: number; item: SyncItemT }[],
    results: (ItemResult | undefined)[],
  ) {
    const ids = valid.map((v) => v.item.clientId);
    const [existing, events, guests, persons] = await Promise.all([
      prisma.checkIn.findMany({
        where: { id: { in: ids } },
        select: { id: true, tenantId: true, deviceId: true, outcome: true, conflict: true, receivedAt: true },
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
        results[v.at] =
          row.deviceId !== actor.deviceId
            ? rejected(item.clientId, 'conflict', 'This clientId names a check-in of another device')
            : {
                clientId: item.clientId,
                status: 'duplicate',
                checkInId: item.clientId,
                outcome: row.outcome as ItemResult['outcome'],
                flags: row.conflict ? row.conflict.split(',') : [],
                receivedAt: row.receivedAt.toISOString(),
                code: null,
                detail: null,
              };
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
    actor: ActorOf<'device'>,
    settings: Awaited<ReturnType<typeof getTenantSettings>>,
    eventId: string | null,
    group: { at: number; item: SyncItemT }[],
    meta: RequestMeta,
    frames: ReadonlyMap<string, SavedFrame>,
  ): Promise<Map<string, ItemResult>> {
    const receivedAt = deps.clock.now();
    return prisma.$transaction(async (tx) => {
      let event: Awaited<ReturnType<typeof loadEvent>> = null;
      const inPersons = new Set<string>();
      const inGuests = new Set<string>();
      const inSubjects = new Set<string>();
      const guestCheckedIn = new Map<string, boolean>();
      if (eventId) {
        await tx.$queryRaw`SELECT id FROM events WHERE id = ${eventId} FOR UPDATE`;
        event = await loadEvent({ prisma: tx as never }, actor.tenantId, eventId);
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
          ...(frame ? [imageRow(actor.tenantId, item, frame)] : []),
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

  return {
    /**
     * Each item on its own, in order: a malformed or unknown one is rejected, the others recorded.
     * Items that name their guest (or no person) are recorded together, one transaction per event
     * holding its lock, their rows written a few statements at a time; the rest, or a group that met a
     * concurrent upload of the same ids, go one by one through the one recording path.
     */
    async batch(actor: ActorOf<'device'>, items: unknown[], meta: RequestMeta) {
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
      const groups = await planBatch(actor, valid, results);
      const { saved, notes } = await saveFrames(
        actor,
        settings,
        valid.filter((v) => results[v.at] === undefined).map((v) => v.item),
      );
      try {
        for (const [eventId, group] of groups) {
          const recorded = await recordGroup(actor, settings, eventId, group, meta, saved).catch(
            (error: unknown) => {
              if (isUniqueViolation(error)) return null;
              throw error;
            },
          );
          for (const { at, item } of group) {
            results[at] =
              recorded?.get(item.clientId) ??
              (await recordItem(actor, item, settings, meta, saved.get(item.clientId)));
          }
        }
        // The same clientId twice in one batch: the later ones answer like a replay of the first.
        for (const { at, item } of valid) {
          results[at] ??= await recordItem(actor, item, settings, meta, saved.get(item.clientId));
        }
      } finally {
        // A frame whose check-in this batch did not write (replayed, lost a race, failed) leaves no file.
        const written = new Set(
          results.flatMap((r) => (r?.status === 'accepted' && r.clientId ? [r.clientId] : [])),
        );
        for (const [clientId, frame] of saved) {
          if (!written.has(clientId)) await deps.images.erase(frame.stored.storageKey).catch(() => undefined);
        }
      }
      for (const { at, item } of valid) {
        const note = notes.get(item.clientId);
        if (note && results[at]?.status === 'accepted') results[at] = { ...results[at], detail: note };
      }
      deps.outbox.notify();
      return { results: results as ItemResult[] };
    },

    /**
     * A page of an event's replica. Full (no `since`): every guest on the list. Delta: guests changed
     * since the checkpoint's change sequence, and, on its first page, guests whose person enrolled or
     * changed (revoked biometrics, anonymised) since its time, so a removed template reaches the device.
     */
    async replica(
      actor: ActorOf<'device'>,
      token: string,
      query: { since?: string | undefined; cursor?: string | undefined; limit: number },
    ): Promise<Replica> {
      const event = await eventByToken(prisma, token);
      if (event.tenantId !== actor.tenantId) throw notFound('Event');
      const tenant = await prisma.tenant.findUniqueOrThrow({
        where: { id: actor.tenantId },
        select: { settings: true, faceModelId: true },
      });
      const settings = await getTenantSettings(deps.db, actor.tenantId);
      const modelId = tenant.faceModelId ?? deps.face.modelId;

      let mode: 'full' | 'delta';
      let after: bigint;
      let start: bigint;
      let since: number;
      let startedAt: number;
      if (query.cursor) {
        const key = decodeCursor(
          query.cursor,
          z.tuple([
            z.enum(['full', 'delta']),
            z.string().regex(/^\d{1,18}$/),
            z.string().regex(/^\d{1,18}$/),
            z.number().int(),
            z.number().int(),
          ]),
        );
        [mode, after, start, since, startedAt] = [key[0], BigInt(key[1]), BigInt(key[2]), key[3], key[4]];
      } else {
        startedAt = deps.clock.now().getTime();
        if (query.since !== undefined) {
          const [seq, at] = query.since.split('.');
          [mode, after, start, since] = ['delta', BigInt(seq!), 0n, Number(at)];
        } else {
          const [row] = await prisma.$queryRaw<{ max: bigint | null }[]>`
            SELECT MAX(change_seq) AS max FROM guests WHERE event_id = ${event.id}`;
          [mode, after, start, since] = ['full', 0n, row?.max ?? 0n, 0];
        }
      }
      const onList = Prisma.sql`(g.deleted_at IS NULL AND g.status IN ('confirmed', 'checked_in'))`;
      const select = Prisma.sql`
        SELECT g.id, g.name, g.status, g.checked_in_at, g.deleted_at, g.change_seq, g.person_id, g.link_token,
               encode(ft.embedding_enc, 'base64') AS embedding
          FROM guests g
          LEFT JOIN face_templates ft ON ft.person_id = g.person_id AND ft.model_id = ${modelId}`;
      const rows = await prisma.$queryRaw<ReplicaRow[]>`
        ${select}
         WHERE g.event_id = ${event.id} AND g.change_seq > ${after}::bigint
           ${mode === 'full' ? Prisma.sql`AND (${onList} OR g.change_seq > ${start}::bigint)` : Prisma.empty}
         ORDER BY g.change_seq LIMIT ${query.limit + 1}`;
      const page = rows.slice(0, query.limit);
      const more = rows.length > query.limit;
      const revokedPersons: string[] = [];
      if (mode === 'delta' && !query.cursor) {
        const from = new Date(since - SKEW_MS);
        // A deleted person leaves no row to compare with: the outbox's person.deleted events say who.
        const deleted = await prisma.$queryRaw<{ person_id: string }[]>`
          SELECT DISTINCT payload->'data'->>'personId' AS person_id FROM outbox_events
           WHERE tenant_id = ${actor.tenantId} AND occurred_at > ${from} AND name = 'person.deleted'`;
        revokedPersons.push(...deleted.map((d) => d.person_id));
        // The tenant's persons changed since (an index each), then their guests at this event: joining
        // every guest to every person first cost about a second at 50,000 guests, for every door every
        // sync (cloud/bench/fleet.ts, docs/benchmarks/cloud.md).
        page.push(
          ...(await prisma.$queryRaw<ReplicaRow[]>`
            ${select}
             WHERE g.event_id = ${event.id} AND g.change_seq <= ${after}::bigint AND ${onList}
               AND g.person_id IN (
                 SELECT id FROM persons WHERE tenant_id = ${actor.tenantId} AND updated_at > ${from}
                 UNION
                 SELECT person_id FROM face_templates
                  WHERE tenant_id = ${actor.tenantId} AND model_id = ${modelId} AND created_at > ${from})`),
        );
      }
      const last = rows
        .slice(0, query.limit)
        .reduce((m, r) => (BigInt(r.change_seq) > m ? BigInt(r.change_seq) : m), after);
      const items: Replica['items'] = [];
      const removed: string[] = [];
      for (const r of page) {
        if (r.deleted_at !== null || !['confirmed', 'checked_in'].includes(r.status)) {
          removed.push(r.id);
          continue;
        }
        const embedding =
          r.embedding && r.person_id
            ? deps.cipher
                .decrypt(Buffer.from(r.embedding, 'base64'), templateContext(actor.tenantId, r.person_id))
                .toString('base64')
            : null;
        items.push({
          guestId: r.id,
          name: r.name,
          status: r.status as 'confirmed' | 'checked_in',
          checkedInAt: r.checked_in_at ? new Date(r.checked_in_at).toISOString() : null,
          personId: r.person_id,
          qrHash: hashToken(r.link_token),
          template: embedding ? { modelId, embedding } : null,
        });
      }
      const seq = more || mode === 'delta' || last > start ? last : start;
      return {
        event: {
          id: event.id,
          name: event.name,
          status: event.status,
          checkinMethods: event.checkinMethods,
          capacity: event.capacity,
          reentry: event.reentry as Replica['event']['reentry'],
          geofence:
            event.geofenceLat !== null && event.geofenceLng !== null
              ? {
                  lat: event.geofenceLat,
                  lng: event.geofenceLng,
                  radiusM: event.geofenceRadiusM ?? settings.geofenceRadiusMetros,
                }
              : null,
        },
        policy: {
          tenantId: actor.tenantId,
          modelId,
          matchThreshold: settings.matchThreshold,
          stepUpThreshold: settings.stepUpThreshold,
          probeQualityMin: settings.probeQualityMin,
          stepUpFactors: settings.stepUpFactors,
          requireLiveness: settings.requireLiveness,
          livenessThreshold: settings.livenessThreshold,
          livenessChallenge: settings.livenessChallenge,
          syncCheckinImages: settings.syncCheckinImages,
        },
        items,
        removed,
        revokedPersons,
        nextCursor: more ? encodeCursor([mode, String(last), String(start), since, startedAt]) : null,
        checkpoint: `${seq}.${startedAt}`,
      };
    },
  };
}

interface ReplicaRow {
  id: string;
  name: string;
  status: string;
  checked_in_at: Date | null;
  deleted_at: Date | null;
  change_seq: bigint;
  person_id: string | null;
  link_token: string;
  embedding: string | null;
}
