// `Idempotency-Key` on POST routes (cloud/src/http/idempotency.ts), over real HTTP on PGlite (or
// TEST_DATABASE_URL): a retry gets the first answer and does nothing twice; another body is refused;
// keys belong to one credential; answers are kept 24 h.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integratorOf } from '../persons/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { TestClock } from '../support/identity.js';

const clock = new TestClock(new Date());
let app: TestApp;
let org: Awaited<ReturnType<typeof integratorOf>>;

beforeAll(async () => {
  app = await createTestApp({ clock });
  org = await integratorOf(app);
});
afterAll(async () => {
  await app?.close();
});

const createPerson = (key: string, body: unknown, headers: Record<string, string> = org.keyHeaders) =>
  app.request('POST', '/v1/persons', { headers: { ...headers, 'idempotency-key': key }, body });
const personsNamed = async (document: string) =>
  app.deps.db.prisma.person.count({ where: { tenantId: org.tenantId, document } });

describe('Idempotency-Key', () => {
  it('answers a retry with the same key and body with the first answer, and creates one person', async () => {
    const body = { name: 'Ada Lovelace', document: 'IDEM-1' };
    const first = await createPerson('k-replay', body);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const retry = await createPerson('k-replay', body);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('content-type')).toMatch(/application\/json/);
    expect(retry.body).toEqual(first.body);
    expect(await personsNamed('IDEM-1')).toBe(1);
  });

  it('refuses the same key with another body with 409 idempotency_key_reused', async () => {
    await createPerson('k-conflict', { name: 'A', document: 'IDEM-2' });
    const other = await createPerson('k-conflict', { name: 'B', document: 'IDEM-3' });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('idempotency_key_reused');
    expect(await personsNamed('IDEM-3')).toBe(0);
  });

  it('replays a problem answer too (a 409 stays the same 409, nothing is retried into a 201)', async () => {
    await app.request('POST', '/v1/persons', {
      headers: org.keyHeaders,
      body: { name: 'Taken', document: 'IDEM-X', externalId: 'ext-idem' },
    });
    const body = { name: 'Other', document: 'IDEM-Y', externalId: 'ext-idem' };
    const first = await createPerson('k-problem', body);
    expect(first.status).toBe(409);
    const retry = await createPerson('k-problem', body);
    expect(retry.status).toBe(409);
    expect(retry.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(retry.body).toEqual(first.body);
  });

  it('keeps keys apart per credential: another API key with the same key does its own work', async () => {
    const other = await app.request('POST', '/v1/applications', {
      headers: org.headers,
      body: { name: 'other' },
    });
    const otherHeaders = { authorization: `Bearer ${other.body.apiKey.key}` };
    const body = { name: 'Shared key', document: 'IDEM-4' };
    expect((await createPerson('k-shared', body)).status).toBe(201);
    const second = await createPerson('k-shared', body, otherHeaders);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(await personsNamed('IDEM-4')).toBe(2);
  });

  it('forgets a key after 24 hours: the same key then runs the request again', async () => {
    const body = { name: 'Expiring', document: 'IDEM-5' };
    expect((await createPerson('k-expiry', body)).status).toBe(201);
    clock.advance(23 * 60 * 60 * 1000);
    expect((await createPerson('k-expiry', body)).headers.get('idempotent-replayed')).toBe('true');
    clock.advance(60 * 60 * 1000 + 1);
    const later = await createPerson('k-expiry', body);
    expect(later.status).toBe(201);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(await personsNamed('IDEM-5')).toBe(2);
  });

  it('answers 409 idempotency_key_in_use while the first request runs, and takes over a dead one after 2 minutes', async () => {
    const body = { name: 'Running', document: 'IDEM-6' };
    const { createHash } = await import('node:crypto');
    // A first request whose process died before answering: its claim is all that is left.
    const hash = createHash('sha256')
      .update(`POST /v1/persons\n${JSON.stringify(body)}`)
      .digest('hex');
    const keyHash = createHash('sha256').update(org.apiKey).digest('hex');
    const key = await app.deps.db.prisma.apiKey.findUniqueOrThrow({ where: { keyHash } });
    await app.deps.db.prisma.idempotencyKey.create({
      data: {
        id: `idem-${Date.now()}`,
        scope: `apiKey:${org.tenantId}:${key.id}`,
        key: 'k-running',
        requestHash: hash,
        state: 'in_progress',
        lockedAt: clock.now(),
        createdAt: clock.now(),
        expiresAt: new Date(clock.now().getTime() + 24 * 3600_000),
      },
    });
    const busy = await createPerson('k-running', body);
    expect(busy.status).toBe(409);
    expect(busy.body.code).toBe('idempotency_key_in_use');
    expect(busy.headers.get('retry-after')).toBe('1');
    clock.advance(2 * 60 * 1000 + 1);
    const taken = await createPerson('k-running', body);
    expect(taken.status).toBe(201);
    expect(await personsNamed('IDEM-6')).toBe(1);
  });

  it('refuses a malformed key with 400 validation_failed', async () => {
    const res = await createPerson('x'.repeat(256), { name: 'A', document: 'IDEM-7' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });

  it('is documented on every POST in /docs-json', async () => {
    const doc = (await app.request('GET', '/docs-json')).body;
    const post = doc.paths['/v1/persons'].post;
    expect(
      post.parameters.some(
        (p: { in: string; name: string }) => p.in === 'header' && p.name === 'Idempotency-Key',
      ),
    ).toBe(true);
    expect(JSON.stringify(post.responses['409'])).toContain('idempotency_key_reused');
    expect(JSON.stringify(post.responses['409'])).toContain('idempotency_key_in_use');
  });
});
