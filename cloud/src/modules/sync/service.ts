// Edge devices' side of check-in: the offline decisions they upload (recorded through the one check-in
// path under the device's id and time, flagged where the cloud disagrees, never refused for being
// late) and the replica of an event they decide from (the confirmed list with face templates).
import { SyncItem, type Replica, type SyncItem as SyncItemT, z } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { AppError, notFound } from '../../http/errors.js';
import type { RequestMeta } from '../../http/request-context.js';
import { Prisma } from '../../generated/prisma/client.js';
import { isUniqueViolation } from '../../infra/db/index.js';
import { hashToken } from '../../infra/crypto.js';
import { loadEvent, recordCheckin } from '../checkin/record.js';
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
/** Template and person changes are read again this far behind the previous checkpoint (commit lag). */
const SKEW_MS = 5_000;

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

export function createSyncService(deps: Pick<AppDeps, 'db' | 'clock' | 'outbox' | 'cipher' | 'face'>) {
  const { prisma } = deps.db;

  /** The answer an earlier upload of `clientId` got, or null when it is new. */
  async function earlier(actor: ActorOf<'device'>, clientId: string): Promise<ItemResult | null> {
    const row = await prisma.checkIn.findUnique({
      where: { id: clientId },
      select: { tenantId: true, deviceId: true, outcome: true, conflict: true, receivedAt: true },
    });
    if (!row) return null;
    if (row.tenantId !== actor.tenantId || row.deviceId !== actor.deviceId) {
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
  ): Promise<ItemResult> {
    const again = await earlier(actor, item.clientId);
    if (again) return again;
    const recordedAt = new Date(item.recordedAt);
    if (recordedAt.getTime() > deps.clock.now().getTime() + CLOCK_AHEAD_MS) {
      return rejected(
        item.clientId,
        'validation_failed',
        'recordedAt is in the future (check the device clock)',
      );
    }
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
              : 'recognised',
        personId: item.personId ?? null,
        event,
        ...(item.guestId && { guest: { id: item.guestId, once: false } }),
        deviceId: actor.deviceId,
        location: item.location,
        score: item.score ?? null,
        livenessScore: item.livenessScore ?? null,
        actor,
        requestId: meta.requestId,
        ip: meta.ip,
        synced: {
          checkInId: item.clientId,
          recordedAt,
          deviceId: actor.deviceId,
          decision: { outcome, reason: outcome === 'denied' ? (reason ?? 'not_recognised') : null },
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

  return {
    /** Each item on its own, in order: a malformed or unknown one is rejected, the others recorded. */
    async batch(actor: ActorOf<'device'>, items: unknown[], meta: RequestMeta) {
      const settings = await getTenantSettings(deps.db, actor.tenantId);
      const results: ItemResult[] = [];
      for (const raw of items) {
        const parsed = SyncItem.safeParse(raw);
        if (!parsed.success) {
          const id = (raw as { clientId?: unknown } | null)?.clientId;
          const issue = parsed.error.issues[0]!;
          results.push(
            rejected(
              typeof id === 'string' ? id.slice(0, 64) : null,
              'validation_failed',
              `${issue.path.join('.') || 'item'}: ${issue.message}`.slice(0, 300),
            ),
          );
          continue;
        }
        results.push(await recordItem(actor, parsed.data, settings, meta));
      }
      return { results };
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
      if (mode === 'delta' && !query.cursor) {
        const from = new Date(since - SKEW_MS);
        page.push(
          ...(await prisma.$queryRaw<ReplicaRow[]>`
            ${select}
              JOIN persons p ON p.id = g.person_id
             WHERE g.event_id = ${event.id} AND g.change_seq <= ${after}::bigint AND ${onList}
               AND (p.updated_at > ${from} OR ft.created_at > ${from})`),
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
          requireLiveness: settings.requireLiveness,
          livenessThreshold: settings.livenessThreshold,
        },
        items,
        removed,
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
