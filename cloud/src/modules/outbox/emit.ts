// The outbox: a state change and the events it causes are written in the same transaction, so an
// event is never lost nor sent for a change that rolled back. Workers deliver from these rows.
import {
  EVENT_DATA,
  WEBHOOK_EVENTS,
  type EventData,
  type EventName,
  type TenantSettings,
  type WebhookPayload,
} from '@portico/contract';
import type { Prisma } from '../../generated/prisma/client.js';
import { newId, type Tx } from '../../infra/db/index.js';
import { getTenantSettings } from '../tenants/service.js';

export interface EmittedEvent {
  id: string;
  hasWebhook: boolean;
}

const webhookEvents = new Set<string>(WEBHOOK_EVENTS);

/**
 * Records `name` for the tenant: one outbox row (published on the bus) and, when the tenant has a
 * webhookUrl and the event is a webhook event, one delivery row. Call `deps.outbox.notify()` after the
 * transaction commits so the workers send it at once instead of at their next poll.
 */
export async function emitEvent<N extends EventName>(
  tx: Pick<Tx, 'outboxEvent' | 'webhookDelivery' | 'tenant'>,
  event: {
    tenantId: string;
    name: N;
    data: EventData<N>;
    at: Date;
    /** The tenant's settings when the caller has already read them (else read here). */
    settings?: TenantSettings;
  },
): Promise<EmittedEvent> {
  const id = newId();
  const payload: WebhookPayload = {
    id,
    event: event.name,
    tenantId: event.tenantId,
    timestamp: event.at.toISOString(),
    data: EVENT_DATA[event.name].parse(event.data) as Record<string, unknown>,
  };
  await tx.outboxEvent.create({
    data: {
      id,
      tenantId: event.tenantId,
      name: event.name,
      payload: payload as Prisma.InputJsonObject,
      occurredAt: event.at,
      busNextAttemptAt: event.at,
    },
  });
  if (!webhookEvents.has(event.name)) return { id, hasWebhook: false };
  const settings = event.settings ?? (await getTenantSettings({ prisma: tx }, event.tenantId));
  const { webhookUrl } = settings;
  if (!webhookUrl) return { id, hasWebhook: false };
  await tx.webhookDelivery.create({
    data: {
      id: newId(),
      outboxEventId: id,
      tenantId: event.tenantId,
      url: webhookUrl,
      nextAttemptAt: event.at,
    },
  });
  return { id, hasWebhook: true };
}
