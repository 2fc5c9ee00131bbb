// Who may listen on the bus: no anonymous client, a tenant's credential reads its own tenant's topics
// and nothing else ($SYS included), no client publishes or retains, no page of a foreign origin opens
// the WebSocket. On the embedded aedes broker over TCP and WebSocket, and on a Mosquitto of our own
// (started here on free ports) configured as cloud/deploy/mosquitto describes.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signBusToken } from '../../src/modules/bus/credentials.js';
import { manualCheckin, person } from '../admin/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { serviceLogin, tenantLogin } from '../support/bus.js';
import { adminOf } from '../support/identity.js';
import { freePort } from '../support/net.js';

type Admin = Awaited<ReturnType<typeof adminOf>>;
interface Seen {
  topic: string;
  body: { id?: string; tenantId?: string; data?: { checkInId?: string; forged?: boolean } };
  retain: boolean;
}

const topicsOf = (tenantId: string) => `portico/v1/tenants/${tenantId}/#`;

function connect(url: string, options: IClientOptions = {}): Promise<MqttClient> {
  return mqtt.connectAsync(url, {
    protocolVersion: 4,
    reconnectPeriod: 0,
    connectTimeout: 5_000,
    ...options,
  });
}

function record(client: MqttClient): Seen[] {
  const seen: Seen[] = [];
  client.on('message', (topic, payload, packet) => {
    let body: Seen['body'] = {};
    try {
      body = JSON.parse(payload.toString());
    } catch {
      body = {};
    }
    seen.push({ topic, body, retain: packet.retain });
  });
  return seen;
}

/** The QoS granted per filter; 128 is a refusal (mqtt.js rejects a SUBACK holding one, with the packet). */
function grants(client: MqttClient, filters: string[]): Promise<number[]> {
  return new Promise((resolve, reject) =>
    client.subscribe(filters, { qos: 1 }, (err, granted) => {
      const packet = (err as { packet?: { granted?: number[] } } | null)?.packet;
      if (packet?.granted) return resolve(packet.granted);
      if (err) return reject(err);
      resolve((granted ?? []).map((g) => g.qos));
    }),
  );
}

/** Whether a client gets in: false when the socket is refused or closed before CONNACK. */
function getsIn(url: string, options: IClientOptions): Promise<boolean> {
  return new Promise((resolve) => {
    const c = mqtt.connect(url, {
      protocolVersion: 4,
      reconnectPeriod: 0,
      connectTimeout: 5_000,
      ...options,
    });
    c.once('connect', () => {
      resolve(true);
      c.end(true);
    });
    c.once('error', () => resolve(false));
    c.once('close', () => resolve(false));
  });
}

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const checkIns = (seen: Seen[]) => seen.map((m) => m.body.data?.checkInId).filter(Boolean);

interface Broker {
  t: TestApp;
  a: Admin;
  b: Admin;
  /** Client options that log in as tenant A / tenant B. */
  loginA: () => Promise<IClientOptions>;
  loginB: () => Promise<IClientOptions>;
  /** The embedded broker answers a refused subscription with 0x80; Mosquitto 2.0 may grant and filter. */
  refusesSubscriptions: boolean;
}

/** The same rules on every broker and transport. */
function busRules(name: string, setUp: () => Promise<Broker>, urlOf: (b: Broker) => string) {
  describe(name, () => {
    let s: Broker;
    let url: string;
    const open: MqttClient[] = [];
    const client = async (options: IClientOptions) => {
      const c = await connect(url, options);
      open.push(c);
      return c;
    };
    const checkIn = async (who: Admin, label: string) =>
      manualCheckin(s.t, who.headers, await person(s.t, who.tenant.tenantId, label));

    beforeAll(async () => {
      s = await setUp();
      url = urlOf(s);
    });
    afterAll(async () => {
      await Promise.all(open.map((c) => c.endAsync(true).catch(() => undefined)));
    });

    it('refuses an anonymous client, a wrong password and tenant A’s credential under B’s name', async () => {
      await expect(connect(url)).rejects.toThrow(/authori|password/i);
      const a = await s.loginA();
      await expect(connect(url, { ...a, password: `${a.password}x` })).rejects.toThrow(/authori|password/i);
      await expect(connect(url, { ...a, username: s.b.tenant.tenantId })).rejects.toThrow(
        /authori|password/i,
      );
    });

    it('gives A nothing of B’s topics, `#`, every tenant or $SYS, and still A’s own check-in', async () => {
      const a = await client(await s.loginA());
      const seen = record(a);
      const foreign = [topicsOf(s.b.tenant.tenantId), '#', 'portico/v1/tenants/+/#', '$SYS/#', '$SYS/+/+'];
      const granted = await grants(a, foreign);
      if (s.refusesSubscriptions) expect(granted).toEqual(foreign.map(() => 128));
      await a.subscribeAsync(topicsOf(s.a.tenant.tenantId), { qos: 1 });

      // B's check-in, seen by the service (which reads every tenant) before A's own is made.
      const watcher = await client(serviceLogin(s.t));
      const watched = record(watcher);
      await watcher.subscribeAsync(topicsOf(s.b.tenant.tenantId), { qos: 1 });
      const other = await checkIn(s.b, 'Bruno Other');
      await expect.poll(() => checkIns(watched)).toContain(other);

      const own = await checkIn(s.a, 'Ana Own');
      await expect.poll(() => checkIns(seen)).toContain(own);
      expect(seen.filter((m) => !m.topic.startsWith(`portico/v1/tenants/${s.a.tenant.tenantId}/`))).toEqual(
        [],
      );
      expect(checkIns(seen)).not.toContain(other);
    });

    it('lets no message A publishes (plain, retained or as its will) reach an authorised subscriber', async () => {
      const topic = `portico/v1/tenants/${s.a.tenant.tenantId}/checkin.success`;
      const forged = JSON.stringify({ id: 'forged', tenantId: s.a.tenant.tenantId, data: { forged: true } });
      const listener = await client(await s.loginA());
      const seen = record(listener);
      await listener.subscribeAsync(topicsOf(s.a.tenant.tenantId), { qos: 1 });

      const publisher = await client({
        ...(await s.loginA()),
        will: { topic, payload: Buffer.from(forged), qos: 1, retain: true },
      });
      publisher.on('error', () => undefined);
      publisher.publish(topic, forged, { qos: 0 });
      publisher.publish(topic, forged, { qos: 0, retain: true });
      publisher.publish(topic, forged, { qos: 1, retain: true }, () => undefined);
      // An unclean end: a broker would now publish the will.
      await new Promise((resolve) => setTimeout(resolve, 300));
      publisher.stream.destroy();

      const own = await checkIn(s.a, 'Ana Real');
      await expect.poll(() => checkIns(seen)).toContain(own);
      // A later subscriber gets no retained message either.
      const late = await client(await s.loginA());
      const lateSeen = record(late);
      await late.subscribeAsync(topicsOf(s.a.tenant.tenantId), { qos: 1 });
      const next = await checkIn(s.a, 'Ana Later');
      await expect.poll(() => checkIns(lateSeen)).toContain(next);
      expect(seen.filter((m) => m.body.data?.forged)).toEqual([]);
      expect(lateSeen.filter((m) => m.body.data?.forged || m.retain)).toEqual([]);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The embedded aedes broker (whatever TEST_MQTT_URL says)
// ---------------------------------------------------------------------------------------------

const ALLOWED_ORIGIN = 'https://console.example';
let embedded: Promise<Broker> | undefined;
function embeddedBroker(): Promise<Broker> {
  embedded ??= (async () => {
    const t = await createTestApp({
      env: { MQTT_URL: '', MQTT_WS_PORT: '0', MQTT_WS_ALLOWED_ORIGINS: ALLOWED_ORIGIN },
    });
    const [a, b] = [await adminOf(t), await adminOf(t)];
    const login = (who: Admin) => async () => tenantLogin(t, who.headers);
    return { t, a, b, loginA: login(a), loginB: login(b), refusesSubscriptions: true };
  })();
  return embedded;
}
afterAll(async () => (await embedded)?.t.close());

busRules('embedded broker over TCP', embeddedBroker, (s) => s.t.deps.bus.url);
busRules('embedded broker over WebSocket', embeddedBroker, (s) => s.t.deps.bus.wsUrl!);

describe('embedded broker credentials and origins', () => {
  let s: Broker;
  beforeAll(async () => {
    s = await embeddedBroker();
  });

  it('refuses a WebSocket upgrade from a foreign Origin before any MQTT, and takes the allowed one', async () => {
    const status = (origin: string) =>
      new Promise<number>((resolve) => {
        const socket = new WebSocket(s.t.deps.bus.wsUrl!, 'mqtt', { origin });
        socket.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        socket.once('open', () => {
          socket.close();
          resolve(101);
        });
        socket.once('error', () => undefined);
      });
    expect(await status('https://evil.example')).toBe(401);
    const login = await s.loginA();
    const withOrigin = (origin: string) => ({ ...login, wsOptions: { headers: { Origin: origin } } });
    expect(await getsIn(s.t.deps.bus.wsUrl!, withOrigin('https://evil.example'))).toBe(false);
    expect(await getsIn(s.t.deps.bus.wsUrl!, withOrigin(ALLOWED_ORIGIN))).toBe(true);
  });

  it('hands out a bus token for the caller’s tenant that expires, and refuses an expired one', async () => {
    const login = await tenantLogin(s.t, s.a.headers);
    expect(login.username).toBe(s.a.tenant.tenantId);
    const ttl = Date.parse(login.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(5 * 60_000);
    expect(ttl).toBeLessThanOrEqual(15 * 60_000);
    const stale = await signBusToken(
      s.t.deps.secrets.jwtKey,
      s.a.tenant.tenantId,
      new Date(Date.now() - 3600_000),
    );
    await expect(
      connect(s.t.deps.bus.url, { username: login.username, password: stale.token }),
    ).rejects.toThrow(/authori|password/i);
  });

  it('admits an API key with the bus:subscribe scope for its own tenant, and not a key without it', async () => {
    const keyWith = async (scopes: string[]) => {
      const res = await s.t.request('POST', '/v1/applications', {
        headers: s.a.headers,
        body: { name: `bus ${scopes.join(' ')}`, scopes },
      });
      expect(res.status, res.text).toBe(201);
      return res.body.apiKey.key as string;
    };
    const username = s.a.tenant.tenantId;
    const reader = await connect(s.t.deps.bus.url, { username, password: await keyWith(['bus:subscribe']) });
    const seen = record(reader);
    await reader.subscribeAsync(topicsOf(username), { qos: 1 });
    const own = await manualCheckin(s.t, s.a.headers, await person(s.t, username, 'Key Reader'));
    await expect.poll(() => checkIns(seen)).toContain(own);
    await reader.endAsync();
    await expect(
      connect(s.t.deps.bus.url, { username, password: await keyWith(['persons:read']) }),
    ).rejects.toThrow(/authori|password/i);
  });
});

// ---------------------------------------------------------------------------------------------
// Mosquitto with cloud/deploy/mosquitto's configuration, on ports of its own
// ---------------------------------------------------------------------------------------------

const MOSQUITTO = '/usr/sbin/mosquitto';
const MOSQUITTO_PASSWD = '/usr/bin/mosquitto_passwd';
const haveMosquitto = existsSync(MOSQUITTO) && existsSync(MOSQUITTO_PASSWD);
if (!haveMosquitto) {
  console.warn(`Mosquitto bus rules skipped: ${MOSQUITTO} or ${MOSQUITTO_PASSWD} is not installed`);
}
const deployDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../deploy/mosquitto');

let mosquitto: Promise<Broker & { ws: string; tcp: string }> | undefined;
let mosquittoProcess: ChildProcess | undefined;
let mosquittoDir: string | undefined;
function mosquittoBroker() {
  mosquitto ??= (async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'portico-mosquitto-'));
    mosquittoDir = dir;
    // Started as root, Mosquitto drops to its own user, which must read this directory's files.
    await chmod(dir, 0o755);
    const [tcpPort, wsPort] = [await freePort(), await freePort()];
    const passwd = path.join(dir, 'portico.passwd');
    const servicePassword = `svc-${Math.random().toString(36).slice(2)}-${Date.now()}`;
    execFileSync(MOSQUITTO_PASSWD, ['-c', '-b', passwd, 'portico-service', servicePassword]);
    await chmod(passwd, 0o644);
    const conf = (await readFile(path.join(deployDir, 'mosquitto.conf'), 'utf8'))
      .replace('/etc/mosquitto/portico.passwd', passwd)
      .replace('/etc/mosquitto/portico.acl', path.join(deployDir, 'portico.acl'))
      .replace('listener 1883', `listener ${tcpPort} 127.0.0.1`)
      .replace('listener 8083', `listener ${wsPort} 127.0.0.1`);
    const confFile = path.join(dir, 'mosquitto.conf');
    await writeFile(confFile, `${conf}\npersistence false\nlog_dest stderr\n`);
    mosquittoProcess = spawn(MOSQUITTO, ['-c', confFile], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    mosquittoProcess.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const tcp = `mqtt://127.0.0.1:${tcpPort}`;
    const service = { username: 'portico-service', password: servicePassword };
    await waitUntil(() => getsIn(tcp, service), 'Mosquitto to start').catch((err: Error) => {
      throw new Error(`${err.message}; its log:\n${log}`);
    });

    const t = await createTestApp({ env: { MQTT_URL: tcp, MQTT_PASSWORD: servicePassword } });
    const [a, b] = [await adminOf(t), await adminOf(t)];
    // Each tenant's account: its tenant id, and a password of the operator's choosing (an API key works).
    const passwords = new Map<string, string>();
    for (const who of [a, b]) {
      const password = `tenant-${Math.random().toString(36).slice(2)}`;
      passwords.set(who.tenant.tenantId, password);
      execFileSync(MOSQUITTO_PASSWD, ['-b', passwd, who.tenant.tenantId, password]);
    }
    await chmod(passwd, 0o644);
    mosquittoProcess.kill('SIGHUP');
    const loginOf = (who: Admin) => async () => ({
      username: who.tenant.tenantId,
      password: passwords.get(who.tenant.tenantId)!,
    });
    await waitUntil(async () => getsIn(tcp, await loginOf(a)()), 'Mosquitto to reload its password file');
    return {
      t,
      a,
      b,
      loginA: loginOf(a),
      loginB: loginOf(b),
      refusesSubscriptions: false,
      tcp,
      ws: `ws://127.0.0.1:${wsPort}`,
    };
  })();
  return mosquitto;
}
afterAll(async () => {
  if (mosquitto) await (await mosquitto).t.close();
  mosquittoProcess?.kill('SIGTERM');
  if (mosquittoDir) await rm(mosquittoDir, { recursive: true, force: true });
});

describe.skipIf(!haveMosquitto)('Mosquitto with cloud/deploy/mosquitto', () => {
  busRules('over TCP', mosquittoBroker, (s) => (s as Broker & { tcp: string }).tcp);
  busRules('over WebSocket', mosquittoBroker, (s) => (s as Broker & { ws: string }).ws);
});
