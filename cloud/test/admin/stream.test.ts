// GET /v1/admin/checkins/stream read as the console reads it (fetch + a ReadableStream with the Bearer
// header): check-ins made through the API arrive, from this process and from a second API process on
// the same database and broker, never another tenant's; Last-Event-ID resumes.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import { KEEP_ALIVE_MS } from '../../src/modules/admin/checkin-stream.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { adminOf, bearer, login } from '../support/identity.js';
import {
  INTERNAL_SECRET,
  manualCheckin,
  openEvent,
  person,
  registerDevice,
  type Headers,
} from './support.js';

interface ServerSentEvent {
  /** When the test read it (Date.now()). */
  at: number;
  id: string | undefined;
  event: string | undefined;
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests assert on shapes
}

/** An open stream: the events and comments read so far, and a way to wait for one. */
async function openStream(url: string, headers: Headers) {
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  const events: ServerSentEvent[] = [];
  const comments: string[] = [];
  const reading = (async () => {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) comments.push(line.slice(1).trim());
          else if (line.includes(':'))
            fields[line.slice(0, line.indexOf(':'))] = line.slice(line.indexOf(':') + 1).trim();
        }
        if (fields.data !== undefined) {
          events.push({ at: Date.now(), id: fields.id, event: fields.event, data: JSON.parse(fields.data) });
        }
      }
    }
  })().catch(() => undefined);
  return {
    res,
    events,
    comments,
    /** Settles when the server ends the stream. */
    ended: reading,
    async waitFor(match: (e: ServerSentEvent) => boolean, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.find(match);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`no matching event; got ${JSON.stringify(events.map((e) => e.id))}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    async close() {
      abort.abort();
      await reading;
    },
  };
}

type Stream = Awaited<ReturnType<typeof openStream>>;

describe('live check-in stream', () => {
  let t: TestApp;
  let second: TestApp;
  let a: Awaited<ReturnType<typeof adminOf>>;
  let b: Awaited<ReturnType<typeof adminOf>>;
  let gala: string;
  let ana: string;
  const streams: Stream[] = [];
  // API processes of one deployment: the same secrets, database and broker.
  const env = {
    INTERNAL_SECRET,
    JWT_SECRET: randomBytes(32).toString('hex'),
    DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
  const open = async (app: TestApp, headers: Headers) => {
    const s = await openStream(`${app.url}/v1/admin/checkins/stream`, headers);
    streams.push(s);
    return s;
  };

  beforeAll(async () => {
    t = await createTestApp({ env });
    second = await createTestApp({ env: { ...env, ...sameBus(t) }, database: t.deps.db });
    a = await adminOf(t);
    b = await adminOf(t);
    gala = await openEvent(t, a.tenant.tenantId, 'Gala');
    ana = await person(t, a.tenant.tenantId, 'Ana Souza');
  });
  afterAll(async () => {
    for (const s of streams) await s.close();
    await second?.close();
    await t?.close();
  });

  it('is ended by a server stop at once, not after the stop’s grace for requests in flight', async () => {
    const third = await createTestApp({ env: { ...env, ...sameBus(t) }, database: t.deps.db });
    const s = await openStream(`${third.url}/v1/admin/checkins/stream`, a.headers);
    await expect.poll(() => s.comments).toContain('connected');
    let ended = false;
    void s.ended.then(() => (ended = true));
    // A minute of grace: the stop waits for it only if the stream is left open.
    const stopping = third.close(60_000);
    await expect.poll(() => ended, { timeout: 10_000 }).toBe(true);
    await stopping;
  }, 30_000);

  it('answers text/event-stream and says it is connected', async () => {
    const s = await open(t, a.headers);
    expect(s.res.status).toBe(200);
    expect(s.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(s.res.headers.get('cache-control')).toBe('no-store');
    await expect.poll(() => s.comments).toContain('connected');
  });

  it('streams a manual check-in made through the API, in the list’s shape, and never another tenant’s', async () => {
    const mine = await open(t, a.headers);
    const theirs = await open(t, b.headers);
    const other = await person(t, b.tenant.tenantId, 'Bea Outra');
    const theirId = await manualCheckin(t, b.headers, other);
    await theirs.waitFor((e) => e.id === theirId);
    const id = await manualCheckin(t, a.headers, ana, gala);
    const answered = Date.now();
    const event = await mine.waitFor((e) => e.id === id);
    console.log(`check-in on the stream ${event.at - answered} ms after the check-in's answer`);
    expect(event.event).toBe('checkin');
    const listed = await t.request('GET', '/v1/admin/checkins?limit=1', { headers: a.headers });
    expect(event.data).toEqual(listed.body.items[0]);
    expect(event.data).toMatchObject({
      method: 'manual',
      person: { id: ana, name: 'Ana Souza' },
      event: { id: gala },
    });
    expect(mine.events.map((e) => e.id)).not.toContain(theirId);
    expect(theirs.events.map((e) => e.id)).not.toContain(id);
  });

  it('streams offline check-ins when a device syncs them', async () => {
    const s = await open(t, a.headers);
    const device = await registerDevice(t, a.headers, 'Door 1');
    const clientId = newId();
    const res = await t.request('POST', '/v1/sync/batch', {
      headers: device.headers,
      body: {
        items: [
          {
            clientId,
            method: 'qr',
            outcome: 'success',
            personId: ana,
            eventId: gala,
            recordedAt: new Date().toISOString(),
          },
        ],
      },
    });
    expect(res.body.results[0].status, res.text).toBe('accepted');
    const event = await s.waitFor((e) => e.id === clientId);
    expect(event.data).toMatchObject({ method: 'qr', offline: true, deviceId: device.id });
  });

  it('delivers a check-in recorded by another API process (through the broker)', async () => {
    const s = await open(t, a.headers);
    const id = await manualCheckin(second, a.headers, ana);
    const event = await s.waitFor((e) => e.id === id);
    expect(event.data.person).toEqual({ id: ana, name: 'Ana Souza' });
    // And the other way round: a stream on the second process sees this one's check-ins.
    const there = await open(second, a.headers);
    const back = await manualCheckin(t, a.headers, ana);
    await there.waitFor((e) => e.id === back);
  });

  it('resumes after Last-Event-ID with the check-ins received since, oldest first', async () => {
    const first = await manualCheckin(t, a.headers, ana);
    const missed = [await manualCheckin(t, a.headers, ana), await manualCheckin(t, a.headers, ana)];
    const s = await open(t, { ...a.headers, 'last-event-id': first });
    await s.waitFor((e) => e.id === missed[1]);
    expect(s.events.map((e) => e.id)).toEqual(missed);
  });

  it('does not send again the check-in a resume names when the bus delivers it late', async () => {
    const first = await manualCheckin(t, a.headers, ana);
    const s = await open(t, { ...a.headers, 'last-event-id': first });
    await expect.poll(() => s.comments).toContain('connected');
    // The outbox published `first` after the stream opened (as a loaded process can).
    await t.deps.bus.publish({
      id: newId(),
      event: 'checkin.success',
      tenantId: a.tenant.tenantId,
      timestamp: new Date().toISOString(),
      data: { checkInId: first },
    });
    const next = await manualCheckin(t, a.headers, ana);
    await s.waitFor((e) => e.id === next);
    expect(s.events.map((e) => e.id)).toEqual([next]);
  });

  it('ends the stream at once when its session signs out, and not the same user’s other session', async () => {
    const session = await adminOf(t);
    const other = await login(t, session.tenant.adminEmail);
    const s = await open(t, session.headers);
    const kept = await open(t, bearer(other.token!));
    await expect.poll(() => s.comments).toContain('connected');
    await expect.poll(() => kept.comments).toContain('connected');
    let ended = false;
    void s.ended.then(() => (ended = true));
    const signedOut = Date.now();
    const out = await t.request('POST', '/v1/auth/logout', { headers: session.headers });
    expect(out.status).toBe(204);
    // Not at the next keep-alive (KEEP_ALIVE_MS): the logout said so in this process.
    await expect.poll(() => ended, { timeout: KEEP_ALIVE_MS / 3, interval: 20 }).toBe(true);
    console.log(`stream ended ${Date.now() - signedOut} ms after the logout was sent`);
    // The user's other session streams on.
    const bia = await person(t, session.tenant.tenantId, 'Bia Lima');
    const checkIn = await manualCheckin(t, bearer(other.token!), bia);
    expect((await kept.waitFor((e) => e.id === checkIn)).event).toBe('checkin');
  });

  it('ends the stream of a session signed out through another API process at its next keep-alive', async () => {
    const session = await adminOf(t);
    const s = await open(second, session.headers);
    await expect.poll(() => s.comments).toContain('connected');
    let ended = false;
    void s.ended.then(() => (ended = true));
    const out = await t.request('POST', '/v1/auth/logout', { headers: session.headers });
    expect(out.status).toBe(204);
    await expect.poll(() => ended, { timeout: KEEP_ALIVE_MS + 5_000, interval: 100 }).toBe(true);
  }, 30_000);

  it('refuses an API key with 403', async () => {
    const app = await t.request('POST', '/v1/applications', { headers: a.headers, body: { name: 'HR' } });
    const res = await t.request('GET', '/v1/admin/checkins/stream', {
      headers: { authorization: `Bearer ${app.body.apiKey.key}` },
    });
    expect(res.status).toBe(403);
  });
});

/** Another process of the same service: its broker, with the service's bus credential. */
function sameBus(t: TestApp): Record<string, string> {
  return { MQTT_URL: t.deps.bus.url, MQTT_PASSWORD: t.deps.secrets.busPassword };
}
