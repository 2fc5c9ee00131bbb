// Who a face check-in at an event is searched among: the event's guests linked to a person (not
// removed, not declined). A smaller gallery admits fewer strangers: with N candidates about
// N x 10^(-10 x matchThreshold) of strangers pass, so an event of 500 guests in a tenant of 100,000
// people is 200 times safer than a search of the whole tenant. An event without linked guests is open
// to every enrolled person of the tenant (null).
//
// Held per event in memory and brought up to date on every use with the guests changed since the
// last read (the guests' change sequence, taken under the event's lock, also marks removals).
import { Prisma } from '../../generated/prisma/client.js';
import type { Database } from '../../infra/db/index.js';

/** Events held at once; the least recently read is forgotten first. */
const MAX_EVENTS = 256;

interface EventGuests {
  seq: bigint;
  /** guestId -> personId of the guests who count. */
  persons: Map<string, string>;
  among: ReadonlySet<string> | null;
}

export function createEventGuestPersons(db: Pick<Database, 'sql'>) {
  const events = new Map<string, EventGuests>();

  return async function guestPersons(eventId: string): Promise<ReadonlySet<string> | null> {
    const held = events.get(eventId) ?? { seq: -1n, persons: new Map<string, string>(), among: null };
    const changed = await db.sql.query<{
      id: string;
      person_id: string | null;
      status: string;
      deleted: boolean;
      change_seq: bigint;
    }>(Prisma.sql`SELECT id, person_id, status, deleted_at IS NOT NULL AS deleted, change_seq FROM guests
                   WHERE event_id = ${eventId} AND change_seq > ${held.seq} ORDER BY change_seq`);
    for (const row of changed) {
      if (row.person_id && !row.deleted && row.status !== 'declined') held.persons.set(row.id, row.person_id);
      else held.persons.delete(row.id);
      held.seq = row.change_seq;
    }
    if (changed.length > 0) held.among = held.persons.size > 0 ? new Set(held.persons.values()) : null;
    events.delete(eventId);
    events.set(eventId, held);
    if (events.size > MAX_EVENTS) events.delete(events.keys().next().value!);
    return held.among;
  };
}
