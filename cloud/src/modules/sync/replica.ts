// The replica an edge device decides from: an event's confirmed list with each guest's face template of
// the tenant's model, the event's rules and the tenant's decision policy, in pages, in full or as the
// changes since a checkpoint.
import { type Replica, z } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { notFound } from '../../http/errors.js';
import { Prisma } from '../../generated/prisma/client.js';
import { hashToken } from '../../infra/crypto.js';
import { eventByToken } from '../events/service.js';
import { templateContext } from '../faces/gallery.js';
import type { ConfirmedRow } from '../guests/service.js';
import { getTenantSettings } from '../tenants/service.js';

/** Template and person changes are read again this far behind the previous checkpoint (commit lag). */
const SKEW_MS = 5_000;

export interface ReplicaPageQuery {
  since?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

interface ReplicaRow extends ConfirmedRow {
  person_id: string | null;
  link_token: string;
  embedding: string | null;
}

/**
 * A page of an event's replica. Full (no `since`): every guest on the list. Delta: guests changed
 * since the checkpoint's change sequence, and, on its first page, guests whose person enrolled or
 * changed (revoked biometrics, anonymised) since its time, so a removed template reaches the device.
 */
export async function eventReplica(
  deps: Pick<AppDeps, 'db' | 'clock' | 'cipher' | 'face'>,
  actor: ActorOf<'device'>,
  token: string,
  query: ReplicaPageQuery,
): Promise<Replica> {
  const { prisma } = deps.db;
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
}
