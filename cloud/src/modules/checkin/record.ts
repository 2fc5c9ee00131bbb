// One path for every check-in, whatever its method: apply the event's rules, record the decision with
// its scores, audit it and emit its event (webhook + bus) in one transaction.
import type { CheckinResult, TenantSettings, z } from '@portico/contract';
import type { CheckinMethod, GeofenceStatus } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { Actor } from '../../http/actor.js';
import { notFound } from '../../http/errors.js';
import { newId, type Tx } from '../../infra/db/index.js';
import { auditActorOf, recordAudit } from '../audit/record.js';
import { emitEvent } from '../outbox/emit.js';
import { getTenantSettings } from '../tenants/service.js';
import { denialReason, geofenceStatus, type EventRow } from './rules.js';

export interface CheckinAttempt {
  tenantId: string;
  /** The tenant's settings when the caller has already read them. */
  settings?: TenantSettings;
  method: z.infer<typeof CheckinMethod>;
  /** What identification found before the event rules apply. */
  verdict: 'recognised' | 'not_recognised' | 'liveness_failed';
  personId: string | null;
  identityId?: string | null;
  /** The event the check-in names, loaded with `loadEvent` (null: none). */
  event: EventRow | null;
  deviceId?: string | undefined;
  location?: { lat: number; lng: number } | undefined;
  score?: number | null;
  threshold?: number | null;
  livenessScore?: number | null;
  actor: Actor;
  requestId?: string | null;
  ip?: string | null;
  /** Runs inside the transaction once the check-in row exists (e.g. to record the stored frame). */
  attach?: (tx: Tx, checkInId: string) => Promise<void>;
}

const EVENT_FIELDS = {
  id: true,
  status: true,
  checkinMethods: true,
  capacity: true,
  geofenceLat: true,
  geofenceLng: true,
  geofenceRadiusM: true,
} as const;

/** The event a check-in names (404 when it is not the tenant's), or null when it names none. */
export async function loadEvent(
  db: Pick<AppDeps['db'], 'prisma'>,
  tenantId: string,
  eventId: string | undefined,
): Promise<EventRow | null> {
  if (!eventId) return null;
  const event = await db.prisma.event.findFirst({ where: { id: eventId, tenantId }, select: EVENT_FIELDS });
  if (!event) throw notFound('Event');
  return event;
}

export async function recordCheckin(
  deps: Pick<AppDeps, 'db' | 'clock' | 'outbox'>,
  attempt: CheckinAttempt,
): Promise<CheckinResult> {
  const { prisma } = deps.db;
  const settings = attempt.settings ?? (await getTenantSettings(deps.db, attempt.tenantId));
  const { event } = attempt;
  const person = attempt.personId
    ? await prisma.person.findFirst({
        where: { id: attempt.personId, tenantId: attempt.tenantId },
        select: { id: true, name: true },
      })
    : null;
  if (attempt.personId && !person) throw notFound('Person');
  const geofence: z.infer<typeof GeofenceStatus> = geofenceStatus(
    event,
    attempt.location,
    settings.geofenceRadiusMetros,
  );
  const occurredAt = deps.clock.now();
  const checkInId = newId();

  const result = await prisma.$transaction(async (tx) => {
    let outcome: CheckinResult['outcome'];
    let reason: CheckinResult['reason'] = null;
    if (attempt.verdict === 'liveness_failed') outcome = 'liveness_failed';
    else if (attempt.verdict === 'not_recognised' || !person) {
      outcome = 'denied';
      reason = 'not_recognised';
    } else {
      if (event) await tx.$queryRaw`SELECT id FROM events WHERE id = ${event.id} FOR UPDATE`;
      reason = event ? await denialReason(tx, event, person.id, attempt.method) : null;
      outcome = reason ? 'denied' : geofence === 'outside' ? 'geofence_alert' : 'success';
    }
    await tx.checkIn.create({
      data: {
        id: checkInId,
        tenantId: attempt.tenantId,
        personId: person?.id ?? null,
        identityId: attempt.identityId ?? null,
        eventId: event?.id ?? null,
        deviceId: null,
        method: attempt.method,
        outcome,
        score: attempt.score ?? null,
        livenessScore: attempt.livenessScore ?? null,
        geofenceStatus: geofence,
        latitude: attempt.location?.lat ?? null,
        longitude: attempt.location?.lng ?? null,
        occurredAt,
        receivedAt: occurredAt,
      },
    });
    await attempt.attach?.(tx, checkInId);
    await recordAudit(tx, {
      tenantId: attempt.tenantId,
      ...auditActorOf(attempt.actor),
      action: `checkin.${attempt.method}`,
      targetType: 'check_in',
      targetId: checkInId,
      metadata: {
        outcome,
        reason,
        personId: person?.id ?? null,
        eventId: event?.id ?? null,
        score: attempt.score ?? null,
        livenessScore: attempt.livenessScore ?? null,
        geofenceStatus: geofence,
        deviceLabel: attempt.deviceId ?? null,
      },
      ip: attempt.ip ?? null,
      requestId: attempt.requestId ?? null,
    });
    await emitEvent(tx, {
      tenantId: attempt.tenantId,
      name: `checkin.${outcome}`,
      data: {
        checkInId,
        personId: person?.id ?? null,
        eventId: event?.id ?? null,
        method: attempt.method,
        geofenceStatus: geofence,
        score: attempt.score ?? null,
        livenessScore: attempt.livenessScore ?? null,
        deviceId: attempt.deviceId ?? null,
      },
      at: occurredAt,
      settings,
    });
    return { outcome, reason };
  });
  deps.outbox.notify();

  return {
    checkInId,
    outcome: result.outcome,
    reason: result.reason,
    method: attempt.method,
    person:
      person && attempt.verdict === 'recognised'
        ? { id: person.id, displayName: firstName(person.name) }
        : null,
    eventId: event?.id ?? null,
    score: attempt.score ?? null,
    threshold: attempt.threshold ?? null,
    livenessScore: attempt.livenessScore ?? null,
    geofenceStatus: geofence,
    occurredAt: occurredAt.toISOString(),
  };
}

function firstName(name: string): string {
  return name.trim().split(/\s+/)[0] ?? '';
}
