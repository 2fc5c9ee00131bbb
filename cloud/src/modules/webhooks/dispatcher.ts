// Delivers webhook rows from the outbox. At-least-once: a row is leased before its POST; if the process
// dies mid-attempt the lease runs out and another run (here or in another process) sends it again.
// Receivers deduplicate by the `X-Service-Delivery-Id` header (also the payload's `id`).
import { createHmac } from 'node:crypto';
import type { WebhookPayload } from '@portico/contract';
import type { Clock } from '../../infra/clock.js';
import type { Cipher } from '../../infra/crypto.js';
import { newId, type Database } from '../../infra/db/index.js';
import type { Logger } from '../../infra/logger.js';
import { webhookSecretContext } from '../tenants/provision.js';
import { BlockedAddressError, postJson } from './post.js';

/** Delays before the retries that follow a failed first attempt (contract 6.1, section 8). */
export const RETRY_DELAYS_MS = [1_000, 5_000, 30_000] as const;
/** The first attempt plus one retry per delay. */
export const MAX_ATTEMPTS = 1 + RETRY_DELAYS_MS.length;
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Longer than the timeout, so a live attempt is never taken over by another worker. */
const LEASE_MS = DELIVERY_TIMEOUT_MS + 5_000;
const BATCH = 16;
const SWEEP_MS = 60_000;

export function signWebhook(rawBody: string, secret: string): string {
  return createHmac('sha256', secret).update(rawBody).digest('hex');
}

/** The exact bytes sent (and signed): fields in the contract's order. */
export function webhookBody(payload: WebhookPayload): string {
  const { id, event, tenantId, timestamp, data } = payload;
  return JSON.stringify({ id, event, tenantId, timestamp, data });
}

interface ClaimedRow {
  id: string;
  tenant_id: string;
  url: string;
  attempts: number;
  payload: WebhookPayload;
  /** The tenant's encrypted webhook secret, base64. */
  secret: string;
}

export interface WebhookDispatcher {
  /** Sends every delivery that is due now; true when a full batch was taken (there may be more). */
  runOnce(): Promise<boolean>;
}

export function createWebhookDispatcher(deps: {
  db: Database;
  cipher: Cipher;
  clock: Clock;
  logger: Logger;
  allowPrivateUrls: boolean;
}): WebhookDispatcher {
  const { prisma } = deps.db;

  let lastSweep = 0;

  async function claim(now: Date): Promise<ClaimedRow[]> {
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
    // The payload and the tenant's (encrypted) secret come back with the claim: one round trip.
    return prisma.$queryRaw<ClaimedRow[]>`
      UPDATE webhook_deliveries d
         SET status = 'delivering', locked_until = ${leaseUntil}, attempts = d.attempts + 1
        FROM (SELECT id FROM webhook_deliveries
               WHERE status IN ('pending', 'delivering')
                 AND attempts < ${MAX_ATTEMPTS}
                 AND next_attempt_at <= ${now}
                 AND (locked_until IS NULL OR locked_until <= ${now})
               ORDER BY next_attempt_at
               LIMIT ${BATCH}
               FOR UPDATE SKIP LOCKED) due
       WHERE d.id = due.id
      RETURNING d.id, d.tenant_id, d.url, d.attempts,
                (SELECT payload FROM outbox_events e WHERE e.id = d.outbox_event_id) AS payload,
                (SELECT encode(webhook_secret_enc, 'base64') FROM tenants t WHERE t.id = d.tenant_id) AS secret`;
  }

  async function deliver(row: ClaimedRow): Promise<void> {
    const { payload } = row;
    const body = webhookBody(payload);
    const secret = deps.cipher.decryptString(
      Buffer.from(row.secret, 'base64'),
      webhookSecretContext(row.tenant_id),
    );
    const started = performance.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    let permanent = false;
    try {
      ({ statusCode } = await postJson(
        row.url,
        body,
        {
          'user-agent': 'Portico-Webhooks/1.0',
          'x-service-signature': signWebhook(body, secret),
          'x-service-delivery-id': row.id,
          'x-service-event': payload.event,
          'x-service-attempt': String(row.attempts),
        },
        { timeoutMs: DELIVERY_TIMEOUT_MS, allowPrivate: deps.allowPrivateUrls },
      ));
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
    // The attempt's log row and the delivery's new state in one statement (atomic, one round trip).
    await prisma.$executeRaw`
      WITH logged AS (
        INSERT INTO webhook_attempts (id, tenant_id, delivery_id, attempt, status_code, error, duration_ms, created_at)
        VALUES (${newId()}, ${row.tenant_id}, ${row.id}, ${row.attempts}, ${statusCode}, ${error}, ${durationMs}, ${now})
      )
      UPDATE webhook_deliveries
         SET status = ${outcome === 'retry' ? 'pending' : outcome},
             locked_until = NULL,
             last_status_code = ${statusCode},
             last_error = ${error ?? (ok ? null : `HTTP ${statusCode}`)},
             delivered_at = CASE WHEN ${ok} THEN ${now}::timestamptz ELSE delivered_at END,
             next_attempt_at = COALESCE(${nextAttemptAt}::timestamptz, next_attempt_at)
       WHERE id = ${row.id}`;
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
  }

  return {
    async runOnce() {
      const rows = await claim(deps.clock.now());
      await Promise.all(rows.map(deliver));
      return rows.length === BATCH;
    },
  };
}
