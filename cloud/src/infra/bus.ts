// Message bus: MQTT 3.1.1 (the embedded aedes broker speaks no MQTT 5), QoS 1, JSON payloads that carry
// their own event id, topics `portico/v1/tenants/{tenantId}/{eventName}`.
// Without MQTT_URL an embedded aedes broker is started and the service connects to it like any client,
// so one code path serves both modes. The embedded broker also serves MQTT over WebSocket (any path) on
// its own port, for browsers, unless that listener is turned off.
// The embedded broker admits no anonymous client: the service's own connection has its own credential,
// every other client one bound to a single tenant (checked by `authenticateTenant`), which may only
// subscribe under `portico/v1/tenants/{itsTenant}/` and never publish ($SYS, wills and retained messages
// included); WebSocket upgrades are taken from the allowed origins only.
import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { Aedes, type Client } from 'aedes';
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

/** A username and password for an MQTT connection. */
export interface BusCredential {
  username: string;
  password: string;
}

/** Who a tenant credential admits: its tenant, until `expiresAt` (a bus token) or while valid (an API key). */
export interface BusGrant {
  tenantId: string;
  expiresAt?: Date | undefined;
}

/** Checks a client's username and password; undefined refuses the connection. */
export type TenantAuthenticator = (username: string, password: string) => Promise<BusGrant | undefined>;

export interface EmbeddedBrokerOptions {
  host: string;
  /** TCP port (0: a free one). */
  port: number;
  /** WebSocket port (0: a free one); undefined: no WebSocket listener. */
  wsPort?: number | undefined;
  /** Origins a browser's WebSocket upgrade may come from (exact `scheme://host[:port]`). */
  allowedOrigins?: readonly string[];
  /** Resolves every client credential but the service's own. */
  authenticateTenant: TenantAuthenticator;
}

export interface BusOptions {
  url: string | undefined;
  /** Where the embedded broker listens and whom it admits (unused with `url`). */
  embedded: EmbeddedBrokerOptions;
  /**
   * The service's own connection: the only client of the embedded broker that may publish and subscribe
   * to every tenant. With `url`, sent to that broker when given (else the connection is anonymous).
   */
  credential: BusCredential | undefined;
  logger: Logger;
}

export async function createBus(options: BusOptions): Promise<Bus> {
  if (!options.url && !options.credential)
    throw new Error('the embedded broker needs the service credential');
  const embedded = options.url
    ? undefined
    : await startEmbeddedBroker(options.embedded, options.credential!, options.logger);
  const url = options.url ?? embedded!.url;
  const client = await connect(url, options.credential);
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

async function connect(url: string, credential: BusCredential | undefined): Promise<MqttClient> {
  return mqtt.connectAsync(url, {
    ...credential,
    protocolVersion: 4,
    clientId: `portico-cloud-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    reconnectPeriod: 1000,
    connectTimeout: 10_000,
  });
}

/** The topic filters a tenant's client may subscribe to: literal topics and wildcards below its own root. */
function tenantMaySubscribe(tenantId: string, filter: string): boolean {
  const root = busTopic(tenantId, '');
  return filter.startsWith(root) && filter.length > root.length;
}

/** What the broker knows of a connected client: the service, or one tenant's subscriber. */
type Principal = { kind: 'service' } | { kind: 'tenant'; tenantId: string };

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** MQTT 3.1.1 CONNACK return codes aedes sends for an error carrying them. */
const refusal = (returnCode: 2 | 4 | 5, message: string) => Object.assign(new Error(message), { returnCode });

async function startEmbeddedBroker(
  where: EmbeddedBrokerOptions,
  service: BusCredential,
  logger: Logger,
): Promise<{ url: string; wsUrl: string | undefined; close(): Promise<void> }> {
  const principals = new WeakMap<Client, Principal>();
  const expiries = new Map<Client, NodeJS.Timeout>();
  const broker = await Aedes.createBroker({
    authenticate: (client, username, password, done) => {
      const user = username ?? '';
      const pass = password?.toString('utf8') ?? '';
      if (!user || !pass) return done(refusal(4, 'bus credentials required'), false);
      if (user === service.username) {
        if (!sameSecret(pass, service.password)) return done(refusal(4, 'bad bus credentials'), false);
        principals.set(client, { kind: 'service' });
        return done(null, true);
      }
      where.authenticateTenant(user, pass).then(
        (grant) => {
          if (!grant) return done(refusal(4, 'bad bus credentials'), false);
          // A client id held by another principal (the service, another tenant) is not taken over.
          const holder = (broker as unknown as { clients: Record<string, Client> }).clients[client.id];
          const held = holder && principals.get(holder);
          if (held && (held.kind !== 'tenant' || held.tenantId !== grant.tenantId)) {
            return done(refusal(2, 'client id in use'), false);
          }
          principals.set(client, { kind: 'tenant', tenantId: grant.tenantId });
          // A bus token admits a connection until it expires, not for as long as the socket lives.
          if (grant.expiresAt) {
            const timer = setTimeout(
              () => client.close(),
              Math.max(0, grant.expiresAt.getTime() - Date.now()),
            );
            timer.unref();
            expiries.set(client, timer);
          }
          done(null, true);
        },
        (err: unknown) => {
          logger.warn({ err: (err as Error).message }, 'bus authentication failed');
          done(refusal(5, 'bus authentication unavailable'), false);
        },
      );
    },
    // Only the service publishes; a client's publish (a will included) is refused and the client dropped.
    authorizePublish: (client, packet, done) => {
      const principal = client && principals.get(client);
      if (principal?.kind === 'service' && !packet.retain) return done(null);
      done(new Error(`publishing to ${packet.topic} is not allowed`));
    },
    authorizeSubscribe: (client, subscription, done) => {
      const principal = client && principals.get(client);
      const allowed =
        principal?.kind === 'service' ||
        (principal?.kind === 'tenant' && tenantMaySubscribe(principal.tenantId, subscription.topic));
      // null grants nothing (SUBACK 0x80) and keeps the client connected.
      done(null, allowed ? subscription : null);
    },
    // Defence in depth: whatever a subscription matched, a tenant's client only receives its own topics.
    authorizeForward: (client, packet) => {
      const principal = client && principals.get(client);
      if (principal?.kind === 'service') return packet;
      if (principal?.kind === 'tenant' && packet.topic.startsWith(busTopic(principal.tenantId, '')))
        return packet;
      return null;
    },
  });
  broker.on('clientDisconnect', (client) => {
    clearTimeout(expiries.get(client));
    expiries.delete(client);
  });
  const tcp = net.createServer(broker.handle);
  const web = where.wsPort === undefined ? undefined : http.createServer();
  let wss: WebSocketServer | undefined;
  // Closing the broker first disconnects its clients (a WebSocket client's stream terminates its socket),
  // so the servers' close() does not wait on them.
  const close = () =>
    new Promise<void>((resolve) => {
      expiries.forEach((timer) => clearTimeout(timer));
      expiries.clear();
      broker.close(() => {
        wss?.close();
        let open = web ? 2 : 1;
        const closed = () => --open === 0 && resolve();
        tcp.close(closed);
        web?.close(closed);
      });
    });
  const allowedOrigins = new Set(where.allowedOrigins ?? []);
  try {
    const port = await listen(tcp, where.port, where.host, 'MQTT_PORT');
    const wsPort = web && (await listen(web, where.wsPort!, where.host, 'MQTT_WS_PORT'));
    // Attached once listening: it re-emits the server's errors, a busy port included, as its own.
    // A browser always sends Origin: one of another site's pages is refused before any MQTT is spoken.
    // Non-browser clients send none and still need credentials.
    wss =
      web &&
      new WebSocketServer({
        server: web,
        verifyClient: ({ origin }: { origin?: string }) => !origin || allowedOrigins.has(origin),
      });
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
