// The webhook delivery log of a tenant with every attempt (and the start of each answer), and the
// actions the console offers on it: try a delivery that waits for its next retry now, send a delivery
// again (a new delivery of the same event through the dispatcher) and send a signed `webhook.test`
// event. The last two go to the tenant's current webhookUrl.
import {
  Id,
  Timestamp,
  z,
  type AdminWebhookDelivery,
  type AdminWebhookDeliveryQuery,
  type AuditAction,
  type WebhookPayload,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { Prisma } from '../../generated/prisma/client.js';
import type { ActorOf } from '../../http/actor.js';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { AppError, notFound } from '../../http/errors.js';
import type { RequestMeta } from '../../http/request-context.js';
import { newId } from '../../infra/db/index.js';
import { auditActorOf, recordAudit } from '../audit/record.js';
import { emitEvent } from '../outbox/emit.js';
import { webhookBody } from './dispatcher.js';
import { getTenantSettings } from '../tenants/service.js';

const DeliveryCursor = z.tuple([Timestamp, Id]);

const INCLUDE = {
  outboxEvent: { select: { id: true, name: true, payload: true } },
  attemptLog: { orderBy: [{ attempt: 'asc' }, { createdAt: 'asc' }] },
} as const satisfies Prisma.WebhookDeliveryInclude;

type Row = Prisma.WebhookDeliveryGetPayload<{ include: typeof INCLUDE }>;

function toWire(row: Row): AdminWebhookDelivery {
  return {
    id: row.id,
    eventId: row.outboxEvent.id,
    event: row.outboxEvent.name as AdminWebhookDelivery['event'],
    url: row.url,
    status: row.status as AdminWebhookDelivery['status'],
    createdAt: row.createdAt.toISOString(),
    nextAttemptAt: row.status === 'pending' ? row.nextAttemptAt.toISOString() : null,
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    attempts: row.attemptLog.map((a) => ({
      attempt: a.attempt,
      at: a.createdAt.toISOString(),
      statusCode: a.statusCode,
      durationMs: a.durationMs,
      error: a.error,
      response: a.responseExcerpt,
    })),
    // Exactly the bytes the dispatcher sends and signs.
    payload: JSON.parse(
      webhookBody(row.outboxEvent.payload as WebhookPayload),
    ) as AdminWebhookDelivery['payload'],
  };
}

const noUrl = () =>
  new AppError(
    409,
    'webhook_url_not_set',
    'This tenant has no webhookUrl: set one in the tenant settings first',
  );

export function createAdminWebhookDeliveries(deps: Pick<AppDeps, 'db' | 'clock' | 'outbox'>) {
  const { prisma } = deps.db;

  /**
   * Deliveries with their attempts, read in one snapshot: they are two queries, and a delivery must never
   * be shown with an attempt its own row does not reflect yet (the dispatcher writes both at once). An
   * interactive transaction: Prisma runs a batch `$transaction([query])` of one query without BEGIN.
   */
  const read = (args: Omit<Prisma.WebhookDeliveryFindManyArgs, 'include'>) =>
    prisma.$transaction((tx) => tx.webhookDelivery.findMany({ ...args, include: INCLUDE }), {
      isolationLevel: 'RepeatableRead',
    });

  /** One delivery of the tenant, or 404 (another tenant's included). */
  const found = async (tenantId: string, id: string) => {
    const [row] = await read({ where: { id, tenantId } });
    if (!row) throw notFound('Webhook delivery');
    return toWire(row);
  };

  const audit = (
    tx: Prisma.TransactionClient,
    actor: ActorOf<'adminSession'>,
    meta: RequestMeta,
    action: AuditAction,
    target: { type: string; id: string },
    metadata: Prisma.InputJsonObject = {},
  ) =>
    recordAudit(tx, {
      tenantId: actor.tenantId,
      ...auditActorOf(actor),
      action,
      targetType: target.type,
      targetId: target.id,
      metadata,
      ip: meta.ip,
      requestId: meta.requestId,
    });

  return {
    async list(tenantId: string, query: AdminWebhookDeliveryQuery) {
      const and: Prisma.WebhookDeliveryWhereInput[] = [{ tenantId }];
      if (query.status) and.push({ status: query.status });
      if (query.event) and.push({ outboxEvent: { name: query.event } });
      if (query.cursor) {
        const [at, id] = decodeCursor(query.cursor, DeliveryCursor);
        const createdAt = new Date(at);
        and.push({ OR: [{ createdAt: { lt: createdAt } }, { createdAt, id: { lt: id } }] });
      }
      const rows = await read({
        where: { AND: and },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: query.limit + 1,
      });
      const items = rows.slice(0, query.limit);
      const last = items[items.length - 1];
      return {
        items: items.map(toWire),
        nextCursor:
          rows.length > query.limit && last ? encodeCursor([last.createdAt.toISOString(), last.id]) : null,
      };
    },

    get: found,

    /**
     * A delivery waiting for its next retry is tried now (its retries left unchanged). Only a pending
     * one: a delivered, failed or cancelled delivery is sent again by `redeliver`.
     */
    async retry(actor: ActorOf<'adminSession'>, deliveryId: string, meta: RequestMeta) {
      const now = deps.clock.now();
      const moved = await prisma.$transaction(async (tx) => {
        const { count } = await tx.webhookDelivery.updateMany({
          where: { id: deliveryId, tenantId: actor.tenantId, status: 'pending' },
          data: { nextAttemptAt: now },
        });
        if (count === 0) return false;
        await audit(tx, actor, meta, 'webhook.retried', { type: 'webhook_delivery', id: deliveryId });
        return true;
      });
      if (!moved) {
        const current = await found(actor.tenantId, deliveryId);
        throw new AppError(
          409,
          'conflict',
          `This delivery is ${current.status}, not waiting for a retry: send it again with redeliver`,
        );
      }
      deps.outbox.notify();
      return found(actor.tenantId, deliveryId);
    },

    /** A new delivery of the same event (same payload and event id) to the tenant's current webhookUrl. */
    async redeliver(actor: ActorOf<'adminSession'>, deliveryId: string, meta: RequestMeta) {
      const original = await prisma.webhookDelivery.findFirst({
        where: { id: deliveryId, tenantId: actor.tenantId },
        select: { id: true, outboxEventId: true },
      });
      if (!original) throw notFound('Webhook delivery');
      const { webhookUrl } = await getTenantSettings(deps.db, actor.tenantId);
      if (!webhookUrl) throw noUrl();
      const id = newId();
      await prisma.$transaction(async (tx) => {
        await tx.webhookDelivery.create({
          data: {
            id,
            outboxEventId: original.outboxEventId,
            tenantId: actor.tenantId,
            url: webhookUrl,
            nextAttemptAt: deps.clock.now(),
            createdAt: deps.clock.now(),
          },
        });
        await audit(
          tx,
          actor,
          meta,
          'webhook.redelivered',
          { type: 'webhook_delivery', id },
          {
            redeliveryOf: original.id,
          },
        );
      });
      deps.outbox.notify();
      return found(actor.tenantId, id);
    },

    /** Queues a signed `webhook.test` event to the tenant's webhookUrl. */
    async sendTest(actor: ActorOf<'adminSession'>, meta: RequestMeta) {
      const settings = await getTenantSettings(deps.db, actor.tenantId);
      if (!settings.webhookUrl) throw noUrl();
      const eventId = await prisma.$transaction(async (tx) => {
        const emitted = await emitEvent(tx, {
          tenantId: actor.tenantId,
          name: 'webhook.test',
          data: { requestedBy: actor.userId, message: 'Test event from the Portico admin console' },
          at: deps.clock.now(),
          settings,
        });
        await audit(tx, actor, meta, 'webhook.test_sent', { type: 'outbox_event', id: emitted.id });
        return emitted.id;
      });
      deps.outbox.notify();
      const delivery = await prisma.webhookDelivery.findFirstOrThrow({
        where: { tenantId: actor.tenantId, outboxEventId: eventId },
        select: { id: true },
      });
      return found(actor.tenantId, delivery.id);
    },
  };
}
