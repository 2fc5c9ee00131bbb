// Limits that fit a venue (issue 26): a door rush comes from one address (the venue's Wi-Fi), so link and
// QR check-ins are limited per token and per event, unknown tokens per address; API keys per key (a
// tenant setting), callers without credentials per address. The clock is the test's: a minute passes
// when the test says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import { adminOf, bearer, startApp, type IdentityApp } from '../support/identity.js';

const MINUTE = 60_000;
const VENUE = { 'x-forwarded-for': '203.0.113.50' };
const JSON_CLIENT = { accept: 'application/json' };

describe('limits that fit a venue', () => {
  let app: IdentityApp;
  let admin: Awaited<ReturnType<typeof adminOf>>;
  let key: Record<string, string>;
  let keyId: string;

  beforeAll(async () => {
    app = await startApp();
    admin = await adminOf(app);
    // An API key outlives the minutes this file moves the clock by (a session token lasts 15 minutes).
    const created = await app.request('POST', '/v1/applications', {
      headers: admin.headers,
      body: { name: 'door server' },
    });
    expect(created.status, created.text).toBe(201);
    key = bearer(created.body.apiKey.key);
    keyId = created.body.apiKey.id;
  });
  afterAll(() => app?.close());

  const settings = (body: object) =>
    app.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, { headers: key, body });

  /** An open event with `count` guests: their link tokens. */
  async function openEventWithGuests(count: number) {
    const event = await app.request('POST', '/v1/events', { headers: key, body: { name: 'Door rush' } });
    expect(event.status, event.text).toBe(201);
    for (const status of ['published', 'open']) {
      const res = await app.request('PATCH', `/v1/events/${event.body.id}/status`, {
        headers: key,
        body: { status },
      });
      expect(res.status, res.text).toBe(200);
    }
    const tokens: string[] = [];
    for (let i = 0; i < count; i++) {
      const guest = await app.request('POST', `/v1/events/${event.body.id}/guests`, {
        headers: key,
        body: { name: `Guest ${i}` },
      });
      expect(guest.status, guest.text).toBe(201);
      tokens.push(String(guest.body.checkinUrl).split('/').pop()!);
    }
    return { eventId: event.body.id as string, tokens };
  }

  /** A person with an identity and its QR token. */
  async function qrCode(name: string) {
    const tenantId = admin.tenant.tenantId;
    const personId = newId();
    const identityId = newId();
    await app.deps.db.prisma.person.create({
      data: { id: personId, tenantId, name, document: `DOC-${personId.slice(-8)}` },
    });
    await app.deps.db.prisma.identity.create({ data: { id: identityId, tenantId, personId } });
    const res = await app.request('GET', `/v1/checkin/identities/${identityId}/qr-token`, { headers: key });
    expect(res.status, res.text).toBe(201);
    return res.body.token as string;
  }

  const viaLink = (token: string, headers: Record<string, string> = VENUE) =>
    app.request('GET', `/v1/public/checkin/link/${token}`, { headers: { ...JSON_CLIENT, ...headers } });
  const viaQr = (token: string, headers: Record<string, string> = VENUE) =>
    app.request('GET', `/v1/public/checkin/qr/${token}`, { headers: { ...JSON_CLIENT, ...headers } });

  /** `calls` run `at a time` concurrently: a burst. */
  async function burst<T>(calls: (() => Promise<T>)[], atATime = 10): Promise<T[]> {
    const results: T[] = [];
    for (let i = 0; i < calls.length; i += atATime) {
      results.push(...(await Promise.all(calls.slice(i, i + atATime).map((call) => call()))));
    }
    return results;
  }

  it('checks in a burst of 60 guests by their links from one address within a minute: none refused', async () => {
    const { tokens } = await openEventWithGuests(60);
    const answers = await burst(tokens.map((token) => () => viaLink(token)));
    expect(answers.filter((res) => res.status === 429)).toHaveLength(0);
    expect(answers.map((res) => res.body.result)).toEqual(tokens.map(() => 'checked_in'));
  }, 60_000);

  it('checks in a burst of 60 QR codes from one address within a minute: none refused', async () => {
    const codes: string[] = [];
    for (let i = 0; i < 60; i++) codes.push(await qrCode(`Person ${i}`));
    const answers = await burst(codes.map((code) => () => viaQr(code)));
    expect(answers.filter((res) => res.status === 429)).toHaveLength(0);
    expect(answers.map((res) => res.body.outcome)).toEqual(codes.map(() => 'success'));
  }, 60_000);

  it('limits one link hammered to 10 calls a minute (429 rate_limited with Retry-After), other guests at the same address unaffected', async () => {
    const { tokens } = await openEventWithGuests(2);
    const [hammered, other] = tokens as [string, string];
    const first = await viaLink(hammered);
    expect(first.body.result).toBe('checked_in');
    for (let i = 0; i < 9; i++) expect((await viaLink(hammered)).body.result).toBe('already_checked_in');
    const limited = await viaLink(hammered, { 'x-forwarded-for': '198.51.100.1' });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBe(60);
    expect((await viaLink(other)).body.result).toBe('checked_in');
    app.clock.advance(MINUTE);
    expect((await viaLink(hammered)).body.result).toBe('already_checked_in');
    expect(
      await app.deps.db.prisma.checkIn.count({ where: { method: 'link', guest: { linkToken: hammered } } }),
    ).toBe(1);
  });

  it('limits one QR code hammered to 10 scans a minute', async () => {
    const code = await qrCode('Hammer');
    const statuses = [];
    for (let i = 0; i < 11; i++)
      statuses.push((await viaQr(code, { 'x-forwarded-for': `192.0.2.${i}` })).status);
    expect(statuses).toEqual([...Array<number>(10).fill(200), 429]);
    app.clock.advance(MINUTE);
    expect((await viaQr(code)).status).toBe(200);
  });

  it('limits unknown tokens to 60 a minute per address across link and QR; then even a valid link from there waits, another address does not', async () => {
    const { tokens } = await openEventWithGuests(2);
    const guesser = { 'x-forwarded-for': '198.51.100.66' };
    const guess = (i: number) => `lk_guess${String(i).padStart(20, '0')}`;
    const answers = [];
    for (let i = 0; i < 30; i++) answers.push((await viaLink(guess(i), guesser)).status);
    for (let i = 30; i < 60; i++) answers.push((await viaQr(`qr_${guess(i)}`, guesser)).status);
    expect(answers).toEqual(Array<number>(60).fill(404));
    const refused = await viaLink(guess(60), guesser);
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // A right guess must not answer differently from a wrong one while the address is over.
    expect((await viaLink(tokens[0]!, guesser)).status).toBe(429);
    expect((await viaLink(tokens[1]!, { 'x-forwarded-for': '198.51.100.67' })).body.result).toBe(
      'checked_in',
    );
    app.clock.advance(MINUTE);
    expect((await viaLink(tokens[0]!, guesser)).body.result).toBe('checked_in');
  });

  it('an API key sustains 10 identifications a second for a minute at the default limits without a 429', async () => {
    // The limit is decided at the route before the engine is asked: this app has none, so a call within
    // the limits answers 503 engine_unavailable and one over them 429. 600 calls without waiting a real
    // minute (the clock moves a second per 10 calls) and without a face engine.
    const identify = () =>
      app.request('POST', `/v1/public/checkin/${admin.tenant.slug}/identify`, {
        headers: { ...key, ...VENUE },
        body: { frame: 'AAAA' },
      });
    const codes = new Map<string, number>();
    for (let second = 0; second < 60; second++) {
      for (const res of await Promise.all(Array.from({ length: 10 }, identify))) {
        codes.set(res.body.code, (codes.get(res.body.code) ?? 0) + 1);
      }
      app.clock.advance(1000);
    }
    expect(Object.fromEntries(codes)).toEqual({ engine_unavailable: 600 });
    // Counted against the key (600 in its one-minute window), not against the venue's address.
    const bucket = await app.deps.db.prisma.rateLimitBucket.findUnique({
      where: { key: `checkin:identify:key:${keyId}` },
    });
    expect(bucket?.count).toBe(600);
    expect(
      await app.deps.db.prisma.rateLimitBucket.findUnique({
        where: { key: `checkin:identify:ip:${VENUE['x-forwarded-for']}` },
      }),
    ).toBeNull();
  }, 120_000);

  it('limits an API key per key by the tenant’s apiKeyCheckinsPerMinute, whatever address it calls from', async () => {
    expect((await settings({ apiKeyCheckinsPerMinute: 9 })).status).toBe(400);
    expect((await settings({ apiKeyCheckinsPerMinute: 1201 })).status).toBe(400);
    expect((await settings({ apiKeyCheckinsPerMinute: 1.5 })).status).toBe(400);
    const set = await settings({ apiKeyCheckinsPerMinute: 20 });
    expect(set.status, set.text).toBe(200);
    expect(set.body.apiKeyCheckinsPerMinute).toBe(20);
    try {
      app.clock.advance(MINUTE);
      const challenge = (ip: string) =>
        app.request('GET', `/v1/public/checkin/${admin.tenant.slug}/liveness/challenge`, {
          headers: { ...key, 'x-forwarded-for': ip },
        });
      for (let i = 0; i < 20; i++) expect((await challenge(`192.0.2.${100 + i}`)).status).toBe(200);
      const limited = await challenge('192.0.2.200');
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe('rate_limited');
      // A caller without credentials at the key's address has its own counter.
      expect(
        (
          await app.request('GET', `/v1/public/checkin/${admin.tenant.slug}/liveness/challenge`, {
            headers: { 'x-forwarded-for': '192.0.2.200' },
          })
        ).status,
      ).toBe(200);
    } finally {
      await settings({ apiKeyCheckinsPerMinute: 900 });
    }
  });

  it('still limits identify without credentials to 120 calls a minute per address, and not the API key at that address', async () => {
    app.clock.advance(MINUTE);
    const address = { 'x-forwarded-for': '198.51.100.120' };
    const identify = (headers: Record<string, string>) =>
      app.request('POST', `/v1/public/checkin/${admin.tenant.slug}/identify`, {
        headers,
        body: { frame: 'AAAA' },
      });
    const statuses = [];
    for (let i = 0; i < 121; i++) statuses.push((await identify(address)).status);
    // The tenant takes API keys only (identifyCallers credentialed): 403, counted all the same.
    expect(statuses.slice(0, 120)).toEqual(Array<number>(120).fill(403));
    expect(statuses[120]).toBe(429);
    expect((await identify({ ...address, ...key })).body.code).toBe('engine_unavailable');
    expect((await identify({ 'x-forwarded-for': '198.51.100.121' })).status).toBe(403);
  }, 60_000);
});
