// Message bus: MQTT 3.1.1 (the embedded aedes broker speaks no MQTT 5), QoS 1, JSON payloads that carry
// their own event id, topics `portico/v1/tenants/{tenantId}/{eventName}`.
// Without MQTT_URL an embedded aedes broker is started and the service connects to it like any client,
// so one code path serves both modes.
import net from 'node:net';
import { Aedes } from 'aedes';
import mqtt, { type MqttClient } from 'mqtt';
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
  publish(message: BusMessage): Promise<void>;
  close(): Promise<void>;
}

export function busTopic(tenantId: string, event: string): string {
  return `portico/v1/tenants/${tenantId}/${event}`;
}

export class BrokerPortInUseError extends Error {}

export interface BusOptions {
  url: string | undefined;
  embedded: { host: string; port: number };
  logger: Logger;
}

export async function createBus(options: BusOptions): Promise<Bus> {
  const embedded = options.url ? undefined : await startEmbeddedBroker(options.embedded, options.logger);
  const url = options.url ?? embedded!.url;
  const client = await connect(url);
  client.on('error', (err) => options.logger.warn({ err: err.message }, 'bus client error'));
  return {
    url,
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
  where: { host: string; port: number },
  logger: Logger,
): Promise<{ url: string; close(): Promise<void> }> {
  const broker = await Aedes.createBroker();
  const server = net.createServer(broker.handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      broker.close();
      reject(
        err.code === 'EADDRINUSE'
          ? new BrokerPortInUseError(
              `MQTT port ${where.port} on ${where.host} is already in use. Set MQTT_PORT to a free port, ` +
                `or MQTT_URL to use the broker that is running there.`,
            )
          : err,
      );
    });
    server.listen(where.port, where.host, () => resolve());
  });
  const address = server.address() as net.AddressInfo;
  const url = `mqtt://${where.host}:${address.port}`;
  logger.info({ url }, 'embedded MQTT broker listening');
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        // Closing the broker first disconnects its clients, so server.close() does not wait on them.
        broker.close(() => server.close(() => resolve()));
      }),
  };
}
