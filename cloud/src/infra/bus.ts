// Message bus: MQTT 3.1.1 (the embedded aedes broker speaks no MQTT 5), QoS 1, JSON payloads that carry
// their own event id, topics `portico/v1/tenants/{tenantId}/{eventName}`.
// Without MQTT_URL an embedded aedes broker is started and the service connects to it like any client,
// so one code path serves both modes. The embedded broker also serves MQTT over WebSocket (any path) on
// its own port, for browsers, unless that listener is turned off.
import http from 'node:http';
import net from 'node:net';
import { Aedes } from 'aedes';
import mqtt, { type MqttClient } from 'mqtt';
import { createWebSocketStream, WebSocketServer } from 'ws';
import type { Logger } from './logger.js';

const PUBLISH_TIMEOUT_MS = 5_000;

export interface BusMessage {
  id: string;
  event: string;
  tenantId: string;
  timestamp: string;
  data: unknown;
}

export interface Bus {
  /** The broker URL clients can connect to (the embedded one's, or MQTT_URL). */
  readonly url: string;
  /** The embedded broker's MQTT-over-WebSocket URL; undefined with MQTT_URL or with that listener off. */
  readonly wsUrl: string | undefined;
  publish(message: BusMessage): Promise<void>;
  /**
   * Calls `listener` with every message of `tenantId` published on the broker by any process (QoS 1).
   * One broker subscription per tenant however many listeners; resolves once it is in place.
   */
  subscribeTenant(tenantId: string, listener: (message: BusMessage) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export function busTopic(tenantId: string, event: string): string {
  return `portico/v1/tenants/${tenantId}/${event}`;
}

const TENANT_TOPIC = /^portico\/v1\/tenants\/([^/]+)\/[^/]+$/;

export class BrokerPortInUseError extends Error {}

export interface BusOptions {
  url: string | undefined;
  /** Where the embedded broker listens: TCP `port`, WebSocket `wsPort` (undefined: none), both on `host`. */
  embedded: { host: string; port: number; wsPort?: number | undefined };
  logger: Logger;
}

export async function createBus(options: BusOptions): Promise<Bus> {
  const embedded = options.url ? undefined : await startEmbeddedBroker(options.embedded, options.logger);
  const url = options.url ?? embedded!.url;
  const client = await connect(url);
  client.on('error', (err) => options.logger.warn({ err: err.message }, 'bus client error'));
  // Per tenant: its listeners and the broker subscription they share (resolved once acknowledged).
  const tenants = new Map<
    string,
    { listeners: Set<(message: BusMessage) => void>; ready: Promise<unknown> }
  >();
  client.on('message', (topic, payload) => {
    const tenantId = TENANT_TOPIC.exec(topic)?.[1];
    const entry = tenantId ? tenants.get(tenantId) : undefined;
    if (!entry) return;
    let message: BusMessage;
    try {
      message = JSON.parse(payload.toString('utf8')) as BusMessage;
    } catch {
      return;
    }
    entry.listeners.forEach((listener) => listener(message));
  });
  return {
    url,
    wsUrl: embedded?.wsUrl,
    async subscribeTenant(tenantId, listener) {
      let entry = tenants.get(tenantId);
      if (!entry) {
        const ready = client.subscribeAsync(busTopic(tenantId, '+'), { qos: 1 }).catch((err: unknown) => {
          tenants.delete(tenantId);
          throw err;
        });
        entry = { listeners: new Set(), ready };
        tenants.set(tenantId, entry);
      }
      const own = entry;
      own.listeners.add(listener);
      await own.ready;
      return async () => {
        own.listeners.delete(listener);
        if (own.listeners.size > 0 || tenants.get(tenantId) !== own) return;
        tenants.delete(tenantId);
        await client.unsubscribeAsync(busTopic(tenantId, '+')).catch(() => undefined);
      };
    },
    async publish(message) {
      // While disconnected, mqtt.js queues the message and would wait indefinitely: give up after
      // PUBLISH_TIMEOUT_MS so the outbox retries it later (it may then arrive twice: it carries its id).
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error('bus publish not acknowledged in time')),
          PUBLISH_TIMEOUT_MS,
        );
      });
      try {
        await Promise.race([
          client.publishAsync(busTopic(message.tenantId, message.event), JSON.stringify(message), { qos: 1 }),
          timeout,
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      await client.endAsync();
      await embedded?.close();
    },
  };
}

async function connect(url: string): Promise<MqttClient> {
  return mqtt.connectAsync(url, {
    protocolVersion: 4,
    clientId: `portico-cloud-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    reconnectPeriod: 1000,
    connectTimeout: 10_000,
  });
}

async function startEmbeddedBroker(
  where: { host: string; port: number; wsPort?: number | undefined },
  logger: Logger,
): Promise<{ url: string; wsUrl: string | undefined; close(): Promise<void> }> {
  const broker = await Aedes.createBroker();
  const tcp = net.createServer(broker.handle);
  const web = where.wsPort === undefined ? undefined : http.createServer();
  let wss: WebSocketServer | undefined;
  // Closing the broker first disconnects its clients (a WebSocket client's stream terminates its socket),
  // so the servers' close() does not wait on them.
  const close = () =>
    new Promise<void>((resolve) => {
      broker.close(() => {
        wss?.close();
        let open = web ? 2 : 1;
        const closed = () => --open === 0 && resolve();
        tcp.close(closed);
        web?.close(closed);
      });
    });
  try {
    const port = await listen(tcp, where.port, where.host, 'MQTT_PORT');
    const wsPort = web && (await listen(web, where.wsPort!, where.host, 'MQTT_WS_PORT'));
    // Attached once listening: it re-emits the server's errors, a busy port included, as its own.
    wss = web && new WebSocketServer({ server: web });
    wss?.on('connection', (socket, req) => broker.handle(createWebSocketStream(socket), req));
    const url = `mqtt://${where.host}:${port}`;
    const wsUrl = wsPort === undefined ? undefined : `ws://${where.host}:${wsPort}`;
    logger.info({ url, wsUrl }, 'embedded MQTT broker listening');
    return { url, wsUrl, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Listens on `port` (0: a free one) and answers the port; a busy port says which variable to change. */
function listen(server: net.Server, port: number, host: string, variable: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new BrokerPortInUseError(
              `MQTT port ${port} on ${host} is already in use. Set ${variable} to a free port, ` +
                `or MQTT_URL to use the broker that is running there.`,
            )
          : err,
      ),
    );
    server.listen(port, host, () => resolve((server.address() as net.AddressInfo).port));
  });
}
