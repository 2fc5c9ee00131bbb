import net from 'node:net';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrokerPortInUseError, busTopic, createBus, type Bus } from '../../src/infra/bus.js';
import { createLogger } from '../../src/infra/logger.js';
import { freePort } from '../support/net.js';

const logger = createLogger('silent');
// The service's own login, and one tenant login per tenant id (password `pw-{tenantId}`).
const service = { username: 'portico-service', password: 'service-password-for-tests' };
const authenticateTenant = async (username: string, password: string) =>
  password === `pw-${username}` ? { tenantId: username } : undefined;
const login = (tenantId: string) => ({
  protocolVersion: 4 as const,
  username: tenantId,
  password: `pw-${tenantId}`,
});
const embedded = (where: { port: number; wsPort?: number }) => ({
  host: '127.0.0.1',
  authenticateTenant,
  ...where,
});
// CI sets TEST_MQTT_URL to Mosquitto on 127.0.0.1; locally the embedded aedes broker is used.
const external = process.env.TEST_MQTT_URL;

describe(`message bus (${external ? `external broker ${external}` : 'embedded aedes'})`, () => {
  let bus: Bus;
  beforeAll(async () => {
    bus = await createBus({
      url: external,
      embedded: embedded({ port: 0 }),
      credential: external ? undefined : service,
      logger,
    });
  });
  afterAll(() => bus.close());

  it('delivers a published event to a subscriber at QoS 1 on the tenant topic', async () => {
    const tenantId = `t-${Date.now()}`;
    const client = await mqtt.connectAsync(bus.url, { ...login(tenantId), clean: true });
    try {
      const granted = await client.subscribeAsync(`portico/v1/tenants/${tenantId}/#`, { qos: 1 });
      expect(granted[0]?.qos).toBe(1);
      const received = new Promise<{ topic: string; payload: string; qos: number }>((resolve) =>
        client.once('message', (topic, payload, packet) =>
          resolve({ topic, payload: payload.toString(), qos: packet.qos }),
        ),
      );
      await bus.publish({
        id: 'evt-1',
        event: 'checkin.success',
        tenantId,
        timestamp: '2026-11-21T10:00:00.000Z',
        data: { personId: 'p1' },
      });
      const msg = await received;
      expect(msg.topic).toBe(busTopic(tenantId, 'checkin.success'));
      expect(msg.qos).toBe(1);
      expect(JSON.parse(msg.payload)).toEqual({
        id: 'evt-1',
        event: 'checkin.success',
        tenantId,
        timestamp: '2026-11-21T10:00:00.000Z',
        data: { personId: 'p1' },
      });
    } finally {
      await client.endAsync();
    }
  });
});

describe('embedded broker', () => {
  it('explains a busy MQTT port instead of crashing with a stack trace', async () => {
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    const port = (squatter.address() as net.AddressInfo).port;
    try {
      const attempt = createBus({
        url: undefined,
        embedded: embedded({ port }),
        credential: service,
        logger,
      });
      await expect(attempt).rejects.toBeInstanceOf(BrokerPortInUseError);
      await expect(attempt).rejects.toThrow(/MQTT_PORT/);
    } finally {
      squatter.close();
    }
  });

  it('explains a busy WebSocket port and releases the TCP port it had taken', async () => {
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    const wsPort = (squatter.address() as net.AddressInfo).port;
    const tcpPort = await freePort();
    try {
      const attempt = createBus({
        url: undefined,
        embedded: embedded({ port: tcpPort, wsPort }),
        credential: service,
        logger,
      });
      await expect(attempt).rejects.toBeInstanceOf(BrokerPortInUseError);
      await expect(attempt).rejects.toThrow(/MQTT_WS_PORT/);
      const bus = await createBus({
        url: undefined,
        embedded: embedded({ port: tcpPort }),
        credential: service,
        logger,
      });
      expect(bus.url).toBe(`mqtt://127.0.0.1:${tcpPort}`);
      await bus.close();
    } finally {
      squatter.close();
    }
  });

  it('has no WebSocket listener when it is turned off', async () => {
    const bus = await createBus({
      url: undefined,
      embedded: embedded({ port: 0 }),
      credential: service,
      logger,
    });
    try {
      expect(bus.wsUrl).toBeUndefined();
    } finally {
      await bus.close();
    }
  });

  it('serves MQTT over WebSocket: a ws:// client gets the messages TCP subscribers get, until the bus closes', async () => {
    const bus = await createBus({
      url: undefined,
      embedded: embedded({ port: 0, wsPort: 0 }),
      credential: service,
      logger,
    });
    const tenantId = `t-${Date.now()}`;
    const other = `${tenantId}-other`;
    expect(bus.wsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    expect(bus.wsUrl).not.toBe(bus.url.replace('mqtt:', 'ws:'));
    const tcp = await mqtt.connectAsync(bus.url, login(tenantId));
    const ws = await mqtt.connectAsync(bus.wsUrl!, { ...login(tenantId), reconnectPeriod: 0 });
    const received = { tcp: [] as string[], ws: [] as string[] };
    tcp.on('message', (topic, payload) => received.tcp.push(`${topic} ${payload.toString()}`));
    ws.on('message', (topic, payload) => received.ws.push(`${topic} ${payload.toString()}`));
    try {
      await tcp.subscribeAsync(`portico/v1/tenants/${tenantId}/#`, { qos: 1 });
      const [granted] = await ws.subscribeAsync(`portico/v1/tenants/${tenantId}/#`, { qos: 1 });
      expect(granted?.qos).toBe(1);
      const message = (id: string, tenant: string) => ({
        id,
        event: 'person.created',
        tenantId: tenant,
        timestamp: '2026-11-23T10:00:00.000Z',
        data: { personId: id },
      });
      await bus.publish(message('e1', tenantId));
      await bus.publish(message('e2', other));
      await bus.publish(message('e3', tenantId));
      await expect.poll(() => received.ws.length).toBe(2);
      await expect.poll(() => received.tcp.length).toBe(2);
      expect(received.ws).toEqual(received.tcp);
      expect(received.ws.map((m) => JSON.parse(m.slice(m.indexOf(' ') + 1)).id)).toEqual(['e1', 'e3']);
      expect(received.ws[0]!.split(' ')[0]).toBe(busTopic(tenantId, 'person.created'));

      const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
      await bus.close();
      await closed;
      // Nothing listens there any more (not merely a listener that ignores upgrades).
      const refused = await new Promise<string | undefined>((resolve) => {
        const probe = net.connect(Number(new URL(bus.wsUrl!).port), '127.0.0.1');
        probe.once('connect', () => {
          probe.destroy();
          resolve(undefined);
        });
        probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code));
      });
      expect(refused).toBe('ECONNREFUSED');
    } finally {
      ws.end(true);
      tcp.end(true);
    }
  });
});
