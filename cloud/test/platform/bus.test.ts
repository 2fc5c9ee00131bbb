import net from 'node:net';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrokerPortInUseError, busTopic, createBus, type Bus } from '../../src/infra/bus.js';
import { createLogger } from '../../src/infra/logger.js';

const logger = createLogger('silent');
// CI sets TEST_MQTT_URL to Mosquitto on 127.0.0.1; locally the embedded aedes broker is used.
const external = process.env.TEST_MQTT_URL;

describe(`message bus (${external ? `external broker ${external}` : 'embedded aedes'})`, () => {
  let bus: Bus;
  beforeAll(async () => {
    bus = await createBus({ url: external, embedded: { host: '127.0.0.1', port: 0 }, logger });
  });
  afterAll(() => bus.close());

  it('delivers a published event to a subscriber at QoS 1 on the tenant topic', async () => {
    const tenantId = `t-${Date.now()}`;
    const client = await mqtt.connectAsync(bus.url, { protocolVersion: 4, clean: true });
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
      const attempt = createBus({ url: undefined, embedded: { host: '127.0.0.1', port }, logger });
      await expect(attempt).rejects.toBeInstanceOf(BrokerPortInUseError);
      await expect(attempt).rejects.toThrow(/MQTT_PORT/);
    } finally {
      squatter.close();
    }
  });
});
