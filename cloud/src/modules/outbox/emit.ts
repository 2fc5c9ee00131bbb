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
import { Prisma } from '../../generated/prisma/client.js';
import { newId, type Tx } from '../../infra/db/index.js';
import { insertRow, jsonb, oneStatement } from '../../infra/db/statements.js';
import { getTenantSettings } from '../tenants/service.js';

export interface EmittedEvent {
  id: string;
  hasWebhook: boolean;
}

export interface EventToEmit<N extends EventName> {
  tenantId: string;
  name: N;
  data: EventData<N>;
  at: Date;
}

const webhookEvents = new Set<string>(WEBHOOK_EVENTS);
const NO_WEBHOOK = { webhookUrl: null };

/**
 * Records `name` for the tenant: one outbox row (published on the bus) and, when the tenant has a
 * webhookUrl and the event is a webhook event, one delivery row. Call `deps.outbox.notify()` after the
 * transaction commits so the workers send it at once instead of at their next poll.
 */
export async function emitEvent<N extends EventName>(
  tx: Pick<Tx, '$executeRaw' | 'tenant'>,
  event: EventToEmit<N> & {
    /** The tenant's settings when the caller has already read them (else read here). */
    settings?: TenantSettings;
  },
): Promise<EmittedEvent> {
  // Only a webhook event needs the tenant's webhookUrl.
  const settings =
    event.settings ??
    (webhookEvents.has(event.name) ? await getTenantSettings({ prisma: tx }, event.tenantId) : NO_WEBHOOK);
  const { emitted, inserts } = eventInserts(event, settings);
  await tx.$executeRaw(oneStatement(inserts));
  return emitted;
}

/** The rows of `emitEvent` as inserts, for a statement that writes them with the change they record. */
export function eventInserts<N extends EventName>(
  event: EventToEmit<N>,
  settings: Pick<TenantSettings, 'webhookUrl'>,
): { emitted: EmittedEvent; inserts: Prisma.Sql[] } {
  const id = newId();
  const payload: Omit<WebhookPayload, 'environment'> = {
    id,
    event: event.name,
    tenantId: event.tenantId,
    timestamp: event.at.toISOString(),
    data: EVENT_DATA[event.name].parse(event.data) as Record<string, unknown>,
  };
  // The environment is the tenant's (a sandbox is a tenant linked to its live one), read in the same
  // statement so that no caller has to know it.
  const environment = Prisma.sql`(SELECT CASE WHEN sandbox_of_id IS NULL THEN 'live' ELSE 'sandbox' END
    FROM tenants WHERE id = ${event.tenantId})`;
  const inserts = [
    insertRow('outbox_events', {
      id,
      tenant_id: event.tenantId,
      name: event.name,
      payload: Prisma.sql`${jsonb(payload)} || jsonb_build_object('environment', ${environment})`,
      occurred_at: event.at,
      bus_next_attempt_at: event.at,
    }),
  ];
  const { webhookUrl } = settings;
  if (!webhookEvents.has(event.name) || !webhookUrl) return { emitted: { id, hasWebhook: false }, inserts };
  inserts.push(
    insertRow('webhook_deliveries', {
      id: newId(),
      outbox_event_id: id,
      tenant_id: event.tenantId,
      url: webhookUrl,
      next_attempt_at: event.at,
    }),
  );
  return { emitted: { id, hasWebhook: true }, inserts };
}
