// Delivers webhook rows from the outbox. At-least-once: a row is leased before its POST; if the process
// dies mid-attempt the lease runs out and another run (here or in another process) sends it again.
// Receivers deduplicate by the `X-Service-Delivery-Id` header (also the payload's `id`).
//
// Tenant-fair: deliveries run in a bounded pool that is refilled as soon as one finishes (never a whole
// batch waiting for its slowest member), each tenant has at most a few deliveries in flight, and a
// tenant whose receiver keeps failing has its circuit opened: its deliveries wait, untouched, while
// every other tenant's flow on.
import { createHmac } from 'node:crypto';
import type { WebhookPayload } from '@portico/contract';
import { Prisma } from '../../generated/prisma/client.js';
import type { Clock } from '../../infra/clock.js';
import type { Cipher } from '../../infra/crypto.js';
import { newId, type Database } from '../../infra/db/index.js';
import type { Logger } from '../../infra/logger.js';
import { webhookSecretContext } from '../tenants/provision.js';
import { BlockedAddressError, postJson } from './post.js';
import { RESPONSE_READ_BYTES, responseExcerpt } from './response-excerpt.js';

/** Delays before the retries that follow a failed first attempt (contract 6.1, section 8). */
export const RETRY_DELAYS_MS = [1_000, 5_000, 30_000] as const;
/** The first attempt plus one retry per delay. */
export const MAX_ATTEMPTS = 1 + RETRY_DELAYS_MS.length;
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Longer than the timeout, so a live attempt is never taken over by another worker. */
const LEASE_MS = DELIVERY_TIMEOUT_MS + 5_000;
const SWEEP_MS = 60_000;

/** Deliveries in flight in one process. */
export const POOL_SIZE = 32;
/** Deliveries of one tenant in flight, counted over every process by their leases. */
export const PER_TENANT_IN_FLIGHT = 4;
/** Consecutive failed attempts of a tenant that open its circuit. */
export const CIRCUIT_FAILURES = 5;
/** How long an open circuit holds the tenant's deliveries before one probe is let through. */
export const CIRCUIT_OPEN_MS = 30_000;

export function signWebhook(rawBody: string, secret: string): string {
  return createHmac('sha256', secret).update(rawBody).digest('hex');
}

/**
 * `X-Service-Signature-V2`: the HMAC of `${timestamp}.${rawBody}`, `timestamp` being the attempt's
 * `X-Service-Timestamp` (Unix seconds), so a receiver can refuse a captured delivery replayed later.
 */
export function signWebhookAt(timestamp: number, rawBody: string, secret: string): string {
  return signWebhook(`${timestamp}.${rawBody}`, secret);
}

/** The exact bytes sent (and signed): fields in the contract's order. */
export function webhookBody(payload: WebhookPayload): string {
  const { id, event, tenantId, environment, timestamp, data } = payload;
  return JSON.stringify({ id, event, tenantId, environment, timestamp, data });
}

interface ClaimedRow {
  id: string;
  tenant_id: string;
  url: string;
  /** The tenant's webhookUrl now; a delivery for another URL is cancelled, not sent. */
  current_url: string | null;
  attempts: number;
  payload: WebhookPayload;
  /** The tenant's encrypted webhook secret, base64. */
  secret: string;
  /** The previous secret during a rotation's overlap window, else null. */
  previous_secret: string | null;
  /** Rows that were due at the claim, claimed or not (the same on every row). */
  due: number;
}

export interface WebhookDispatcher {
  /** Claims what is due into the free slots of the pool and starts it; the pool wakes the loop again. */
  runOnce(): Promise<boolean>;
  /** Calls `listener` when a delivery finishes (a slot is free) and the last claim left rows due. */
  subscribe(listener: () => void): () => void;
  /** Waits for the deliveries in flight. */
  drain(): Promise<void>;
}

export function createWebhookDispatcher(deps: {
  db: Database;
  cipher: Cipher;
  clock: Clock;
  logger: Logger;
  allowPrivateUrls: boolean;
}): WebhookDispatcher {
  const { prisma } = deps.db;
  const inFlight = new Set<Promise<void>>();
  const listeners = new Set<() => void>();
  /**
   * Whether the last claim left due rows behind (pool full, tenants at their allowance): a finished
   * delivery then wakes the loop to claim again. After a claim that took everything due, new rows wake
   * it through the outbox signal, so a finished delivery costs no empty claim.
   */
  let leftBehind = true;

  let lastSweep = 0;

  async function claim(now: Date, free: number): Promise<ClaimedRow[]> {
    const leaseUntil = new Date(now.getTime() + LEASE_MS);
    // Rows whose lease ran out after the last attempt will never be tried again: close them (at most
    // once a minute: they are rare, and this runs after every commit that emits an event).
    if (now.getTime() - lastSweep >= SWEEP_MS) {
      lastSweep = now.getTime();
      await prisma.webhookDelivery.updateMany({
        where: { status: 'delivering', attempts: { gte: MAX_ATTEMPTS }, lockedUntil: { lte: now } },
        data: { status: 'failed', lockedUntil: null, lastError: 'no answer recorded for the last attempt' },
      });
    }
    // Fair share: each tenant's due rows are numbered in order (`turn`); a tenant may start as many as
    // its in-flight allowance leaves (one while its circuit is half-open, none while it is open), and
    // the first of every tenant goes before the second of any. A row whose URL is no longer the
    // tenant's webhookUrl is taken regardless: it is cancelled without a request.
    // The payload and the tenant's (encrypted) secrets come back with the claim: one round trip.
    return deps.db.sql.query<ClaimedRow>(Prisma.sql`
      WITH in_flight AS (
        SELECT tenant_id, count(*)::int AS n FROM webhook_deliveries
         WHERE status = 'delivering' AND locked_until > ${now}
         GROUP BY tenant_id
      ), due AS (
        SELECT d.id, d.tenant_id, d.next_attempt_at,
               d.url IS NOT DISTINCT FROM (t.settings->>'webhookUrl') AS sendable
          FROM webhook_deliveries d JOIN tenants t ON t.id = d.tenant_id
         WHERE d.status IN ('pending', 'delivering')
           AND d.attempts < ${MAX_ATTEMPTS}
           AND d.next_attempt_at <= ${now}
           AND (d.locked_until IS NULL OR d.locked_until <= ${now})
      ), ranked AS (
        SELECT due.*, row_number() OVER (PARTITION BY due.tenant_id, due.sendable
                                         ORDER BY due.next_attempt_at, due.id) AS turn
          FROM due
      ), chosen AS (
        SELECT r.id FROM ranked r
          LEFT JOIN in_flight i ON i.tenant_id = r.tenant_id
          LEFT JOIN webhook_circuits c ON c.tenant_id = r.tenant_id
         WHERE NOT r.sendable
            OR ((c.open_until IS NULL OR c.open_until <= ${now})
                AND r.turn <= (CASE WHEN c.failures >= ${CIRCUIT_FAILURES} THEN 1
                                    ELSE ${PER_TENANT_IN_FLIGHT} END) - COALESCE(i.n, 0))
         ORDER BY r.turn, r.next_attempt_at
         LIMIT ${free}
      ), locked AS (
        SELECT d.id FROM webhook_deliveries d
         WHERE d.id IN (SELECT id FROM chosen)
           AND d.status IN ('pending', 'delivering')
           AND (d.locked_until IS NULL OR d.locked_until <= ${now})
           FOR UPDATE SKIP LOCKED
      )
      UPDATE webhook_deliveries d
         SET status = 'delivering', locked_until = ${leaseUntil},
             attempts = d.attempts + CASE WHEN d.url IS NOT DISTINCT FROM (t.settings->>'webhookUrl')
                                          THEN 1 ELSE 0 END
        FROM locked, tenants t
       WHERE d.id = locked.id AND t.id = d.tenant_id
      RETURNING d.id, d.tenant_id, d.url, t.settings->>'webhookUrl' AS current_url, d.attempts,
                (SELECT payload FROM outbox_events e WHERE e.id = d.outbox_event_id) AS payload,
                encode(t.webhook_secret_enc, 'base64') AS secret,
                CASE WHEN t.webhook_secret_prev_until > ${now}
                     THEN encode(t.webhook_secret_prev_enc, 'base64') END AS previous_secret,
                (SELECT count(*)::int FROM ranked) AS due`);
  }

  /** The delivery is for a URL the tenant no longer has: recorded as cancelled, nothing is sent. */
  async function cancel(row: ClaimedRow): Promise<void> {
    const reason = `cancelled: the tenant's webhookUrl was ${row.current_url === null ? 'cleared' : 'changed'}`;
    const now = deps.clock.now();
    await prisma.$executeRaw`
      WITH logged AS (
        INSERT INTO webhook_attempts (id, tenant_id, delivery_id, attempt, status_code, error, duration_ms, created_at)
        VALUES (${newId()}, ${row.tenant_id}, ${row.id}, ${row.attempts + 1}, NULL, ${reason}, 0, ${now})
      )
      UPDATE webhook_deliveries
         SET status = 'cancelled', locked_until = NULL, last_error = ${reason}
       WHERE id = ${row.id}`;
    deps.logger.info(
      { deliveryId: row.id, tenantId: row.tenant_id, event: row.payload.event, outcome: 'cancelled' },
      'webhook delivery cancelled',
    );
  }

  /**
   * `X-Service-Signature` (the body's) and `X-Service-Signature-V2` (timestamp and body): the current
   * secret's signature, then the previous one's during an overlap.
   */
  function signatures(
    row: ClaimedRow,
    body: string,
    timestamp: number,
  ): { headers: Record<string, string>; confidential: string[] } {
    const context = webhookSecretContext(row.tenant_id);
    const secrets = [row.secret, row.previous_secret]
      .filter((s): s is string => s !== null)
      .map((s) => deps.cipher.decryptString(Buffer.from(s, 'base64'), context));
    const v1 = secrets.map((secret) => signWebhook(body, secret));
    const v2 = secrets.map((secret) => signWebhookAt(timestamp, body, secret));
    return {
      headers: {
        'x-service-signature': v1.join(','),
        'x-service-timestamp': String(timestamp),
        'x-service-signature-v2': v2.join(','),
      },
      // What the answer's excerpt must never show, should the receiver echo it.
      confidential: [...secrets, ...v1, ...v2],
    };
  }

  async function deliver(row: ClaimedRow): Promise<void> {
    if (row.url !== row.current_url) return cancel(row);
    const { payload } = row;
    const body = webhookBody(payload);
    const started = performance.now();
    let statusCode: number | null = null;
    let response: string | null = null;
    let error: string | null = null;
    let permanent = false;
    try {
      const signed = signatures(row, body, Math.floor(deps.clock.now().getTime() / 1000));
      const answer = await postJson(
        row.url,
        body,
        {
          'user-agent': 'Portico-Webhooks/1.0',
          ...signed.headers,
          'x-service-delivery-id': row.id,
          'x-service-event': payload.event,
          'x-service-attempt': String(row.attempts),
        },
        {
          timeoutMs: DELIVERY_TIMEOUT_MS,
          allowPrivate: deps.allowPrivateUrls,
          maxBodyBytes: RESPONSE_READ_BYTES,
        },
      );
      statusCode = answer.statusCode;
      response = responseExcerpt(answer.body, answer.truncated, signed.confidential);
    } catch (err) {
      permanent = err instanceof BlockedAddressError;
      error =
        err instanceof Error
          ? err.name === 'TimeoutError' || err.name === 'AbortError'
            ? 'timeout after 10 s'
            : err.message
          : String(err);
    }
    const durationMs = Math.round(performance.now() - started);
    const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
    const now = deps.clock.now();
    const retryIn = RETRY_DELAYS_MS[row.attempts - 1];
    const outcome = ok ? 'delivered' : permanent || retryIn === undefined ? 'failed' : 'retry';
    const nextAttemptAt = outcome === 'retry' ? new Date(now.getTime() + retryIn!) : null;
    const openUntil = new Date(now.getTime() + CIRCUIT_OPEN_MS);
    // The attempt's log row, the tenant's circuit and the delivery's new state in one statement
    // (atomic, one round trip). A success closes the circuit; a failure counts, and the failure that
    // reaches the threshold (or a failed probe after it) opens it for CIRCUIT_OPEN_MS.
    const [circuit] = await deps.db.sql.query<{ open_until: Date | null }>(Prisma.sql`
      WITH logged AS (
        INSERT INTO webhook_attempts (id, tenant_id, delivery_id, attempt, status_code, error, duration_ms,
                                      response_excerpt, created_at)
        VALUES (${newId()}, ${row.tenant_id}, ${row.id}, ${row.attempts}, ${statusCode}, ${error}, ${durationMs},
                ${response}, ${now})
      ), closed AS (
        UPDATE webhook_circuits SET failures = 0, open_until = NULL, updated_at = ${now}
         WHERE ${ok} AND tenant_id = ${row.tenant_id} AND failures > 0
      ), failed AS (
        INSERT INTO webhook_circuits (tenant_id, failures, open_until, updated_at)
        SELECT ${row.tenant_id}, 1, CASE WHEN 1 >= ${CIRCUIT_FAILURES} THEN ${openUntil}::timestamptz END, ${now}
         WHERE NOT ${ok}
        ON CONFLICT (tenant_id) DO UPDATE
           SET failures = webhook_circuits.failures + 1,
               open_until = CASE WHEN webhook_circuits.failures + 1 >= ${CIRCUIT_FAILURES}
                                 THEN ${openUntil}::timestamptz END,
               updated_at = ${now}
        RETURNING open_until
      ), updated AS (
        UPDATE webhook_deliveries
           SET status = ${outcome === 'retry' ? 'pending' : outcome},
               locked_until = NULL,
               last_status_code = ${statusCode},
               last_error = ${error ?? (ok ? null : `HTTP ${statusCode}`)},
               delivered_at = CASE WHEN ${ok} THEN ${now}::timestamptz ELSE delivered_at END,
               next_attempt_at = COALESCE(${nextAttemptAt}::timestamptz, next_attempt_at)
         WHERE id = ${row.id}
      )
      SELECT open_until FROM failed`);
    deps.logger.info(
      {
        deliveryId: row.id,
        tenantId: row.tenant_id,
        event: payload.event,
        attempt: row.attempts,
        statusCode,
        error,
        durationMs,
        outcome,
      },
      'webhook attempt',
    );
    if (circuit?.open_until) {
      deps.logger.warn(
        { tenantId: row.tenant_id, openUntil: circuit.open_until.toISOString() },
        'webhook circuit open: the tenant’s deliveries wait until then',
      );
    }
  }

  function start(row: ClaimedRow): void {
    const running: Promise<void> = deliver(row)
      .catch((err: unknown) => {
        // The row stays leased; when the lease runs out it is claimed again.
        deps.logger.error({ err, deliveryId: row.id }, 'webhook delivery could not be recorded');
      })
      .finally(() => {
        inFlight.delete(running);
        if (leftBehind) listeners.forEach((l) => l());
      });
    inFlight.add(running);
  }

  return {
    async runOnce() {
      const free = POOL_SIZE - inFlight.size;
      if (free <= 0) {
        // Woken with the pool full: what woke it waits for the next finished delivery.
        leftBehind = true;
        return false;
      }
      const rows = await claim(deps.clock.now(), free);
      // Nothing claimed: what is due may wait for a slot (or nothing is due), as far as this run knows.
      leftBehind = rows.length === 0 || rows[0]!.due > rows.length;
      rows.forEach(start);
      // Whatever was left (pool full, tenants at their allowance) is claimed when a delivery finishes.
      return false;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async drain() {
      while (inFlight.size > 0) await Promise.all(inFlight);
    },
  };
}
