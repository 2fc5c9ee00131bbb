// One path for every check-in, whatever its method: apply the event's rules, record the decision with
// its scores, audit it and emit its event (webhook + bus) in one statement (inside a transaction only
// when the event's rules must read its admissions under a lock).
import type { CheckinResult, StepUpVia, TenantSettings, z } from '@portico/contract';
import type { CheckinMethod, GeofenceStatus } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { Actor } from '../../http/actor.js';
import { AppError, notFound } from '../../http/errors.js';
import { Prisma } from '../../generated/prisma/client.js';
import { newId, violatedForeignKey, type Statements } from '../../infra/db/index.js';
import { insertRow, oneStatement } from '../../infra/db/statements.js';
import { auditActorOf, auditInsert } from '../audit/record.js';
import { eventInserts } from '../outbox/emit.js';
import { getTenantSettings } from '../tenants/service.js';
import { admission, isAdmitted, syncFlags } from '@portico/checkin-policy';
import { eventState, geofenceStatus, type EventRow } from './rules.js';

interface Decision {
  outcome: CheckinResult['outcome'];
  reason: CheckinResult['reason'];
}

export interface CheckinAttempt {
  tenantId: string;
  /** The tenant's settings when the caller has already read them. */
  settings?: TenantSettings;
  method: z.infer<typeof CheckinMethod>;
  /**
   * What identification found before the event rules apply; `step_up_failed`: a face between the lines
   * whose second factor was not the candidate's (denied, nobody recognised).
   */
  verdict: 'recognised' | 'not_recognised' | 'liveness_failed' | 'step_up_failed';
  personId: string | null;
  /**
   * `personId` is the tenant's and existed an instant ago (the tenant's face gallery confirmed its
   * template in the search's own read): it is not read again; its name comes back with the check-in's
   * statement, and a person erased meanwhile fails that statement's foreign key (404).
   */
  personKnown?: boolean;
  identityId?: string | null;
  /** The event the check-in names, loaded with `loadEvent` (null: none). */
  event: EventRow | null;
  /**
   * The guest of `event` a link check-in is for (a recognised person is matched to their guest row
   * otherwise). `once`: a re-entry refused (`already_checked_in`) is answered 409 `already_checked_in`
   * and nothing is recorded, decided under the event's lock so concurrent visits record one check-in.
   * The invitation link sets it: the shared policy makes a link follow `refuse` whatever the event's
   * `reentry` (`reentryRule`: a link visit is the guest's "I am here", opened again by mail scanners and
   * by the guest, not a second passage through a door), and its repeat visits leave no trace. A
   * re-entry refused at a door (face, QR, manual) is a recorded denial like any other.
   */
  guest?: { id: string; once: boolean };
  deviceId?: string | undefined;
  location?: { lat: number; lng: number } | undefined;
  score?: number | null;
  threshold?: number | null;
  livenessScore?: number | null;
  /** How a face between the lines was settled (null: the face alone, or not facial). */
  stepUp?: StepUpVia;
  actor: Actor;
  requestId?: string | null;
  ip?: string | null;
  /** Rows written with the check-in, in the same statement (e.g. its stored frame). */
  alsoInsert?: (checkInId: string) => Prisma.Sql[];
  /**
   * A decision an edge device made earlier (POST /v1/sync/batch): recorded under the device's id and
   * time with the device's outcome. The event's rules are re-checked only to flag where the cloud
   * disagrees (a late fact is kept, not refused). `decidedOffline`: the device decided while the cloud
   * was unreachable.
   */
  synced?: {
    checkInId: string;
    recordedAt: Date;
    deviceId: string;
    decision: Decision;
    decidedOffline: boolean;
  };
}

/** A recorded check-in; `flags` (SyncFlag) only in the answer to a synced one. */
export type RecordedCheckin = CheckinResult & { flags?: string[]; receivedAt?: string };

/** The event a check-in names (404 when it is not the tenant's or archived), or null when it names none. */
export async function loadEvent(
  sql: Statements,
  tenantId: string,
  eventId: string | undefined,
): Promise<EventRow | null> {
  if (!eventId) return null;
  const [event] = await sql.query<EventRow>(Prisma.sql`
    SELECT id, status, checkin_methods AS "checkinMethods", capacity, reentry, geofence_lat AS "geofenceLat",
           geofence_lng AS "geofenceLng", geofence_radius_m AS "geofenceRadiusM"
      FROM events WHERE id = ${eventId} AND tenant_id = ${tenantId} AND deleted_at IS NULL`);
  if (!event) throw notFound('Event');
  return event;
}

export async function recordCheckin(
  deps: Pick<AppDeps, 'db' | 'clock' | 'outbox'>,
  attempt: CheckinAttempt,
): Promise<RecordedCheckin> {
  const { prisma } = deps.db;
  const { synced } = attempt;
  const settings = attempt.settings ?? (await getTenantSettings(deps.db, attempt.tenantId));
  const { event } = attempt;
  // The person is read first unless the gallery vouches for it.
  const known = attempt.personKnown === true && attempt.personId !== null;
  let person: { id: string; name: string | null } | null = known
    ? { id: attempt.personId!, name: null }
    : null;
  if (attempt.personId && !known) {
    person = await prisma.person.findFirst({
      where: { id: attempt.personId, tenantId: attempt.tenantId },
      select: { id: true, name: true },
    });
    if (!person) throw notFound('Person');
  }
  const geofence: z.infer<typeof GeofenceStatus> = geofenceStatus(
    event,
    attempt.location,
    settings.geofenceRadiusMetros,
  );
  const receivedAt = deps.clock.now();
  const occurredAt = synced?.recordedAt ?? receivedAt;
  const checkInId = synced?.checkInId ?? newId();
  const flags: string[] = [];

  // What the check-in row, its audit row, its event and the answer all state.
  const facts = {
    personId: person?.id ?? null,
    eventId: event?.id ?? null,
    guestId: attempt.guest?.id ?? null,
    score: attempt.score ?? null,
    livenessScore: attempt.livenessScore ?? null,
    geofenceStatus: geofence,
    stepUp: attempt.stepUp ?? null,
  };
  // With a person the gallery vouched for, the statement reads the person's name back (`known`).
  const write = ({ outcome, reason }: Decision, extra: Prisma.Sql[] = []) =>
    oneStatement(
      checkinInserts({
        checkInId,
        tenantId: attempt.tenantId,
        settings,
        method: attempt.method,
        outcome,
        reason,
        facts,
        identityId: attempt.identityId ?? null,
        location: attempt.location,
        occurredAt,
        receivedAt,
        actor: attempt.actor,
        deviceLabel: attempt.deviceId ?? null,
        requestId: attempt.requestId ?? null,
        ip: attempt.ip ?? null,
        also: [...(attempt.alsoInsert?.(checkInId) ?? []), ...extra],
        flags,
        ...(synced && { synced: { deviceId: synced.deviceId, decidedOffline: synced.decidedOffline } }),
      }),
      known ? Prisma.sql`SELECT name FROM persons WHERE id = ${person!.id}` : undefined,
    );
  /**
   * Runs the check-in's statement (on `db.sql` or in its transaction); a person erased since the
   * gallery's read is 404, nothing written.
   */
  async function writeAndName(sql: Statements, statement: Prisma.Sql) {
    if (!known) {
      await sql.execute(statement);
      return;
    }
    try {
      const [row] = await sql.query<{ name: string }>(statement);
      person!.name = row?.name ?? '';
    } catch (error) {
      if (violatedForeignKey(error)?.endsWith('_person_id_fkey')) throw notFound('Person');
      throw error;
    }
  }
  const admitted = (reason: Decision['reason']): Decision => admission(reason, geofence);

  let result: Decision;
  if (attempt.verdict === 'recognised' && (person || attempt.guest || synced) && event) {
    // The event's rules count its admissions: decided and written under the event's row lock, so
    // concurrent check-ins cannot both take the last place. Guest rows change under the same lock
    // (their change sequence is the confirmed list's checkpoint).
    result = await deps.db.sql.transaction(async (tx) => {
      // The lock first, in a statement of its own: what follows reads what the previous holder committed.
      await tx.query(Prisma.sql`SELECT id FROM events WHERE id = ${event.id} FOR UPDATE`);
      const { guest, verdict } = await eventState(
        tx,
        event,
        { personId: facts.personId, guestId: attempt.guest?.id ?? null },
        attempt.method,
      );
      facts.guestId = guest?.id ?? null;
      if (attempt.guest?.once && verdict.denial === 'already_checked_in') {
        throw new AppError(409, 'already_checked_in', 'This guest is already checked in', {
          extra: { checkedInAt: (guest?.checked_in_at ?? occurredAt).toISOString() },
        });
      }
      const decision = synced ? synced.decision : admitted(verdict.denial);
      if (synced) flags.push(...syncFlags(decision, verdict));
      else if (isAdmitted(decision.outcome)) flags.push(...verdict.flags);
      // The guest marked in with the same statement.
      const guestIn =
        guest && !guest.checked_in_at && isAdmitted(decision.outcome)
          ? [
              Prisma.sql`UPDATE guests SET status = 'checked_in', checked_in_at = ${occurredAt},
                                change_seq = nextval('guests_change_seq_seq'), updated_at = ${occurredAt}
                          WHERE id = ${guest.id}`,
            ]
          : [];
      await writeAndName(tx, write(decision, guestIn));
      return decision;
    });
  } else {
    if (synced) result = synced.decision;
    else if (attempt.verdict === 'liveness_failed') result = { outcome: 'liveness_failed', reason: null };
    else if (attempt.verdict === 'step_up_failed') result = { outcome: 'denied', reason: 'step_up_failed' };
    else if (attempt.verdict === 'not_recognised' || (!person && !attempt.guest))
      result = { outcome: 'denied', reason: 'not_recognised' };
    else result = admitted(null);
    await writeAndName(deps.db.sql, write(result));
  }
  deps.outbox.notify('events');

  return {
    checkInId,
    outcome: result.outcome,
    reason: result.reason,
    method: attempt.method,
    person:
      person && attempt.verdict === 'recognised'
        ? { id: person.id, displayName: firstName(person.name ?? '') }
        : null,
    eventId: facts.eventId,
    score: facts.score,
    threshold: attempt.threshold ?? null,
    livenessScore: facts.livenessScore,
    geofenceStatus: geofence,
    occurredAt: occurredAt.toISOString(),
    stepUp: facts.stepUp,
    ...(synced && { flags, receivedAt: receivedAt.toISOString() }),
  };
}

/** A synced check-in received this long after the device decided is marked `late_upload`. */
const LATE_AFTER_MS = 60_000;

export interface CheckinRows {
  checkInId: string;
  tenantId: string;
  settings: TenantSettings;
  method: z.infer<typeof CheckinMethod>;
  outcome: CheckinResult['outcome'];
  reason: CheckinResult['reason'];
  /** What the check-in row, its audit row, its event and the answer all state. */
  facts: {
    personId: string | null;
    eventId: string | null;
    guestId: string | null;
    score: number | null;
    livenessScore: number | null;
    geofenceStatus: z.infer<typeof GeofenceStatus>;
    stepUp: StepUpVia;
  };
  identityId: string | null;
  location: { lat: number; lng: number } | undefined;
  occurredAt: Date;
  receivedAt: Date;
  actor: Actor;
  deviceLabel: string | null;
  requestId: string | null;
  ip: string | null;
  /** Rows written with it (e.g. its stored frame). */
  also?: Prisma.Sql[];
  /** What the cloud flags (SyncFlag): where it disagrees with a synced fact, or a re-entry under `flag`. */
  flags: readonly string[];
  /** A fact an edge device uploaded: its device, and whether it decided with the cloud unreachable. */
  synced?: { deviceId: string; decidedOffline: boolean };
}

/**
 * The rows of one check-in: the check-in, its audit row and its event (webhook + bus), to be written
 * as one statement (`oneStatement`), alone or with other check-ins' rows.
 */
export function checkinInserts(c: CheckinRows): Prisma.Sql[] {
  const { facts, synced, flags } = c;
  const lateUpload = c.receivedAt.getTime() - c.occurredAt.getTime() > LATE_AFTER_MS;
  return [
    insertRow('check_ins', {
      id: c.checkInId,
      tenant_id: c.tenantId,
      person_id: facts.personId,
      identity_id: c.identityId,
      event_id: facts.eventId,
      guest_id: facts.guestId,
      method: c.method,
      outcome: c.outcome,
      score: facts.score,
      liveness_score: facts.livenessScore,
      geofence_status: facts.geofenceStatus,
      step_up_factor: facts.stepUp?.factor ?? null,
      latitude: c.location?.lat ?? null,
      longitude: c.location?.lng ?? null,
      occurred_at: c.occurredAt,
      received_at: c.receivedAt,
      conflict: flags.length > 0 ? flags.join(',') : null,
      ...(synced && {
        device_id: synced.deviceId,
        source: 'sync',
        late_upload: lateUpload,
        decided_offline: synced.decidedOffline,
      }),
    }),
    ...(c.also ?? []),
    auditInsert({
      tenantId: c.tenantId,
      ...auditActorOf(c.actor),
      action: `checkin.${c.method}`,
      targetType: 'check_in',
      targetId: c.checkInId,
      metadata: { outcome: c.outcome, reason: c.reason, ...facts, deviceLabel: c.deviceLabel },
      ip: c.ip,
      requestId: c.requestId,
    }),
    ...eventInserts(
      {
        tenantId: c.tenantId,
        name: `checkin.${c.outcome}`,
        data: {
          checkInId: c.checkInId,
          ...facts,
          method: c.method,
          deviceId: c.deviceLabel,
          // Flags whenever there are any, and always on a synced check-in, with where it came from, whether
          // the device was cut off from the cloud when it decided, whether it arrived late, and when.
          ...(synced || flags.length > 0 ? { flags: [...flags] } : {}),
          ...(synced && {
            source: 'sync',
            offline: synced.decidedOffline,
            late_upload: lateUpload,
            recordedAt: c.occurredAt.toISOString(),
          }),
        },
        at: c.occurredAt,
      },
      c.settings,
    ).inserts,
  ];
}

/** What a kiosk may show of a person's name. */
export function firstName(name: string): string {
  return name.trim().split(/\s+/)[0] ?? '';
}
