// Publishes outbox events on the message bus (QoS 1: done when the broker acknowledged). A broker outage
// only delays messages: rows stay unpublished and are retried with a capped exponential backoff.
import type { WebhookPayload } from '@portico/contract';
import type { Bus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { Database } from '../../infra/db/index.js';
import type { Logger } from '../../infra/logger.js';

const LEASE_MS = 30_000;
const BATCH = 32;
const MAX_BACKOFF_MS = 60_000;

interface ClaimedEvent {
  id: string;
  payload: WebhookPayload;
  bus_attempts: number;
}

export function createBusPublisher(deps: { db: Database; bus: Bus; clock: Clock; logger: Logger }) {
  const { prisma } = deps.db;
  return {
    /** Publishes every event that is due; true when a full batch was taken (there may be more). */
    async runOnce(): Promise<boolean> {
      const now = deps.clock.now();
      const rows = await deps.db.sql.query<ClaimedEvent>(Prisma.sql`
        UPDATE outbox_events e
           SET locked_until = ${new Date(now.getTime() + LEASE_MS)}, bus_attempts = e.bus_attempts + 1
          FROM (SELECT id FROM outbox_events
                 WHERE bus_published_at IS NULL
                   AND bus_next_attempt_at <= ${now}
                   AND (locked_until IS NULL OR locked_until <= ${now})
                 ORDER BY occurred_at
                 LIMIT ${BATCH}
                 FOR UPDATE SKIP LOCKED) due
         WHERE e.id = due.id
        RETURNING e.id, e.payload, e.bus_attempts`);
      // In order, so a subscriber sees a tenant's events in the order they happened; the published
      // ones are marked together after the batch (one statement: if the process dies before it, their
      // leases run out and they are published again, as a broker's at-least-once allows).
      const published: string[] = [];
      for (const row of rows) {
        try {
          await deps.bus.publish(row.payload);
          published.push(row.id);
        } catch (err) {
          const backoff = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (row.bus_attempts - 1));
          await prisma.outboxEvent.update({
            where: { id: row.id },
            data: { lockedUntil: null, busNextAttemptAt: new Date(deps.clock.now().getTime() + backoff) },
          });
          deps.logger.warn(
            { eventId: row.id, attempt: row.bus_attempts, err: (err as Error).message },
            'bus publish failed',
          );
        }
      }
      if (published.length > 0) {
        await deps.db.sql.execute(Prisma.sql`
          UPDATE outbox_events SET bus_published_at = ${deps.clock.now()}, locked_until = NULL
           WHERE id = ANY(${published}::text[])`);
      }
      return rows.length === BATCH;
    },
  };
}
