// Undoing a check-in: staff take back an admission (the wrong guest ticked, a face matched to the
// wrong person). What that means for the event's rules is the shared policy's (`countsAsAdmission`):
// the admission no longer counts, so its place of the capacity is free and the subject may come in
// again whatever the re-entry rule. The guest row goes back to what it was before (and confirmed lists
// report the change), the check-in stays on record marked voided, and the audit row and the
// `checkin.voided` event (webhook + bus) are written in the same transaction.
import type { CheckinMethod, VoidedCheckin, z } from '@portico/contract';
import { voidRefusal, type Outcome } from '@portico/checkin-policy';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { AppError, notFound } from '../../http/errors.js';
import type { RequestMeta } from '../../http/request-context.js';
import { auditActorOf, recordAudit } from '../audit/record.js';
import { emitEvent } from '../outbox/emit.js';
import { getTenantSettings } from '../tenants/service.js';

const REFUSALS = {
  checkin_not_admitted: 'Only an admission (success or geofence alert) can be voided',
  already_voided: 'This check-in is already voided',
} as const;

export function createCheckinVoid(deps: Pick<AppDeps, 'db' | 'clock' | 'outbox'>) {
  const { prisma } = deps.db;

  return async function voidCheckin(
    actor: ActorOf<'adminSession'> | ActorOf<'apiKey'>,
    checkInId: string,
    reason: string,
    meta: RequestMeta,
  ): Promise<VoidedCheckin> {
    const tenantId = actor.tenantId;
    const seen = await prisma.checkIn.findFirst({
      where: { id: checkInId, tenantId },
      select: { eventId: true },
    });
    if (!seen) throw notFound('Check-in');
    const settings = await getTenantSettings(deps.db, tenantId);
    const who = auditActorOf(actor);
    const result = await prisma.$transaction(async (tx) => {
      // Under the event's lock, as every admission is decided: a check-in deciding now sees the place freed
      // or not, never half of it.
      if (seen.eventId) await tx.$queryRaw`SELECT id FROM events WHERE id = ${seen.eventId} FOR UPDATE`;
      const row = await tx.checkIn.findFirst({ where: { id: checkInId, tenantId } });
      if (!row) throw notFound('Check-in');
      const refusal = voidRefusal({ outcome: row.outcome as Outcome, voided: row.voidedAt !== null });
      if (refusal) throw new AppError(409, refusal, REFUSALS[refusal]);
      const now = deps.clock.now();
      await tx.checkIn.update({
        where: { id: row.id },
        data: { voidedAt: now, voidedBy: who.actorId, voidReason: reason },
      });
      let guest: VoidedCheckin['guest'] = null;
      if (row.guestId && row.eventId) {
        // The guest stays in when another admission of theirs (or of their person) still counts.
        const [still] = await tx.$queryRaw<{ first: Date | null }[]>`
          SELECT MIN(occurred_at) AS first FROM check_ins
           WHERE event_id = ${row.eventId} AND outcome IN ('success', 'geofence_alert') AND voided_at IS NULL
             AND (guest_id = ${row.guestId} OR person_id = ${row.personId}::text)`;
        const [updated] = await tx.$queryRaw<{ id: string; status: string; checked_in_at: Date | null }[]>`
          UPDATE guests
             SET checked_in_at = ${still?.first ?? null}::timestamptz,
                 status = CASE WHEN ${still?.first ?? null}::timestamptz IS NOT NULL THEN 'checked_in'
                               WHEN confirmed_at IS NOT NULL THEN 'confirmed'
                               WHEN invited_at IS NOT NULL THEN 'invited'
                               ELSE 'pending' END,
                 change_seq = nextval('guests_change_seq_seq'), updated_at = ${now}
           WHERE id = ${row.guestId} AND deleted_at IS NULL AND status = 'checked_in'
          RETURNING id, status, checked_in_at`;
        guest = updated
          ? {
              id: updated.id,
              status: updated.status,
              checkedInAt: updated.checked_in_at ? new Date(updated.checked_in_at).toISOString() : null,
            }
          : null;
      }
      const data = {
        checkInId: row.id,
        personId: row.personId,
        eventId: row.eventId,
        guestId: row.guestId,
        method: row.method as z.infer<typeof CheckinMethod>,
        reason,
        voidedAt: now.toISOString(),
        voidedBy: { type: who.actorType, id: who.actorId },
      };
      await recordAudit(tx, {
        tenantId,
        ...who,
        action: 'checkin.voided',
        targetType: 'check_in',
        targetId: row.id,
        metadata: {
          reason,
          eventId: row.eventId,
          guestId: row.guestId,
          personId: row.personId,
          method: row.method,
        },
        ip: meta.ip,
        requestId: meta.requestId,
      });
      await emitEvent(tx, { tenantId, name: 'checkin.voided', data, at: now, settings });
      return { checkInId: row.id, eventId: row.eventId, voidedAt: now.toISOString(), reason, guest };
    });
    deps.outbox.notify('events');
    return result;
  };
}
