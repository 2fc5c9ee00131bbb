// One path for every check-in, whatever its method: apply the event's rules, record the decision with
// its scores, audit it and emit its event (webhook + bus) in one statement (inside a transaction only
// when the event's rules must read its admissions under a lock).
import type { CheckinResult, TenantSettings, z } from '@portico/contract';
import type { CheckinMethod, GeofenceStatus } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { Actor } from '../../http/actor.js';
import { notFound } from '../../http/errors.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { newId } from '../../infra/db/index.js';
import { insertRow, oneStatement } from '../../infra/db/statements.js';
import { auditActorOf, auditInsert } from '../audit/record.js';
import { eventInserts } from '../outbox/emit.js';
import { getTenantSettings } from '../tenants/service.js';
import { denialReason, geofenceStatus, type EventRow } from './rules.js';

interface Decision {
  outcome: CheckinResult['outcome'];
  reason: CheckinResult['reason'];
}

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
  /** Rows written with the check-in, in the same statement (e.g. its stored frame). */
  alsoInsert?: (checkInId: string) => Prisma.Sql[];
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

  // What the check-in row, its audit row, its event and the answer all state.
  const facts = {
    personId: person?.id ?? null,
    eventId: event?.id ?? null,
    score: attempt.score ?? null,
    livenessScore: attempt.livenessScore ?? null,
    geofenceStatus: geofence,
  };
  const write = ({ outcome, reason }: Decision) =>
    oneStatement([
      insertRow('check_ins', {
        id: checkInId,
        tenant_id: attempt.tenantId,
        person_id: facts.personId,
        identity_id: attempt.identityId ?? null,
        event_id: facts.eventId,
        method: attempt.method,
        outcome,
        score: facts.score,
        liveness_score: facts.livenessScore,
        geofence_status: geofence,
        latitude: attempt.location?.lat ?? null,
        longitude: attempt.location?.lng ?? null,
        occurred_at: occurredAt,
        received_at: occurredAt,
      }),
      ...(attempt.alsoInsert?.(checkInId) ?? []),
      auditInsert({
        tenantId: attempt.tenantId,
        ...auditActorOf(attempt.actor),
        action: `checkin.${attempt.method}`,
        targetType: 'check_in',
        targetId: checkInId,
        metadata: { outcome, reason, ...facts, deviceLabel: attempt.deviceId ?? null },
        ip: attempt.ip ?? null,
        requestId: attempt.requestId ?? null,
      }),
      ...eventInserts(
        {
          tenantId: attempt.tenantId,
          name: `checkin.${outcome}`,
          data: { checkInId, ...facts, method: attempt.method, deviceId: attempt.deviceId ?? null },
          at: occurredAt,
        },
        settings,
      ).inserts,
    ]);
  const admitted = (reason: Decision['reason']): Decision => ({
    outcome: reason ? 'denied' : geofence === 'outside' ? 'geofence_alert' : 'success',
    reason,
  });

  let result: Decision;
  if (attempt.verdict === 'recognised' && person && event) {
    // The event's rules count its admissions: decided and written under the event's row lock, so
    // concurrent check-ins cannot both take the last place.
    result = await prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM events WHERE id = ${event.id} FOR UPDATE`;
      const decision = admitted(await denialReason(tx, event, person.id, attempt.method));
      await tx.$executeRaw(write(decision));
      return decision;
    });
  } else {
    if (attempt.verdict === 'liveness_failed') result = { outcome: 'liveness_failed', reason: null };
    else if (attempt.verdict === 'not_recognised' || !person)
      result = { outcome: 'denied', reason: 'not_recognised' };
    else result = admitted(null);
    await prisma.$executeRaw(write(result));
  }
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
    eventId: facts.eventId,
    score: facts.score,
    threshold: attempt.threshold ?? null,
    livenessScore: facts.livenessScore,
    geofenceStatus: geofence,
    occurredAt: occurredAt.toISOString(),
  };
}

/** What a kiosk may show of a person's name. */
export function firstName(name: string): string {
  return name.trim().split(/\s+/)[0] ?? '';
}
