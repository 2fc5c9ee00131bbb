// The message bus: every event is published (QoS 1) on `portico/v1/tenants/{tenantId}/{event}` with
// the webhook's JSON body. Takes a connected mqtt.js client (Node: `mqtt://`, browsers: `ws://`), so
// the SDK itself does not open connections or pull mqtt into bundles that do not use it.
// Every client logs in: username the tenant id, password an API key with the `bus:subscribe` scope
// (servers) or the short-lived bus token `GET /v1/admin/bus` hands out (browsers); `busConnectOptions`
// builds those options. The broker lets it read its own tenant's topics only, and never publish.
import type { IClientOptions, MqttClient } from 'mqtt';
import type { EventName } from './generated/events.js';
import type { PorticoEvent } from './webhooks.js';

export const TOPIC_ROOT = 'portico/v1/tenants';

/** A tenant's bus login: its id, and an API key with `bus:subscribe` or a bus token from `GET /v1/admin/bus`. */
export interface BusCredentials {
  tenantId: string;
  password: string;
}

/**
 * Options for `mqtt.connect(url, options)` / `connectAsync`: MQTT 3.1.1 with the tenant's credentials.
 * A bus token expires (its `expiresAt`); fetch a new one and reconnect rather than letting mqtt.js
 * retry the old one.
 */
export function busConnectOptions(
  credentials: BusCredentials,
  extra: Partial<IClientOptions> = {},
): IClientOptions {
  return { ...extra, protocolVersion: 4, username: credentials.tenantId, password: credentials.password };
}

/** The topic of one event of a tenant; `'+'` (the default) for every event, `'+'` as tenant for all tenants. */
export function eventTopic(tenantId: string, event: EventName | '+' = '+'): string {
  return `${TOPIC_ROOT}/${tenantId}/${event}`;
}

/** `{ tenantId, event }` of a Portico topic, else undefined. */
export function parseEventTopic(topic: string): { tenantId: string; event: string } | undefined {
  const m = /^portico\/v1\/tenants\/([^/]+)\/([^/]+)$/.exec(topic);
  return m ? { tenantId: m[1]!, event: m[2]! } : undefined;
}

/**
 * Subscribes to a tenant's events (all of them, or `options.events`) at QoS 1 and hands each parsed
 * message to `onEvent`; resolves once the broker has granted the subscription. Messages that are not
 * JSON are passed to `onInvalid` (default: ignored). Returns a function that unsubscribes.
 */
export async function subscribeEvents(
  client: MqttClient,
  tenantId: string,
  onEvent: (event: PorticoEvent, topic: string) => void,
  options: { events?: readonly EventName[]; onInvalid?: (topic: string, payload: Uint8Array) => void } = {},
): Promise<() => Promise<void>> {
  const topics = (options.events ?? ['+' as const]).map((e) => eventTopic(tenantId, e));
  const listener = (topic: string, payload: Uint8Array) => {
    const parsed = parseEventTopic(topic);
    if (!parsed || (tenantId !== '+' && parsed.tenantId !== tenantId)) return;
    if (options.events && !options.events.includes(parsed.event as EventName)) return;
    let event: PorticoEvent;
    try {
      event = JSON.parse(new TextDecoder().decode(payload)) as PorticoEvent;
    } catch {
      options.onInvalid?.(topic, payload);
      return;
    }
    onEvent(event, topic);
  };
  client.on('message', listener);
  await client.subscribeAsync(topics, { qos: 1 });
  return async () => {
    client.off('message', listener);
    await client.unsubscribeAsync(topics);
  };
}
