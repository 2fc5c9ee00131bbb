import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

// The routes section 4 of the contract says do not exist.
const NONEXISTENT = [
  ['POST', '/v1/auth/api-keys'],
  ['POST', '/v1/persons/0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11/enroll'],
  ['POST', '/v1/persons/batch'],
  ['POST', '/v1/events/0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11/checkin'],
  ['GET', '/v1/events/0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11/checkins'],
  ['GET', '/v1/webhooks'],
] as const;

describe('HTTP platform', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('answers the liveness probe', async () => {
    const res = await t.request('GET', '/v1/health/live');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('answers the readiness probe after a database round trip', async () => {
    const res = await t.request('GET', '/v1/health/ready');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
    expect(res.body.checks.database.ok).toBe(true);
  });

  it.each(NONEXISTENT)('answers %s %s with 404 not_found as problem+json', async (method, path) => {
    const res = await t.request(method, path, method === 'POST' ? { body: { name: 'x' } } : {});
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({
      status: 404,
      code: 'not_found',
      type: expect.stringContaining('not_found'),
    });
    expect(res.body.requestId).toBe(res.headers.get('x-request-id'));
  });

  it('answers an unknown path with 404 even with bad credentials or a broken body', async () => {
    const res = await t.request('POST', '/v1/nothing-here', {
      raw: '{"broken',
      headers: { 'content-type': 'application/json', authorization: 'Bearer nonsense' },
    });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });

  it('keeps a well-formed incoming request id and generates one otherwise', async () => {
    const kept = await t.request('GET', '/v1/health/live', {
      headers: { 'x-request-id': 'trace-abc-12345' },
    });
    expect(kept.headers.get('x-request-id')).toBe('trace-abc-12345');
    const replaced = await t.request('GET', '/v1/health/live', {
      headers: { 'x-request-id': 'bad id <script>' },
    });
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('refuses a wrong x-internal-secret with 403', async () => {
    const res = await t.request('GET', '/v1/health/live', { headers: { 'x-internal-secret': 'wrong' } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
  });

  it('answers 503 with the reason when the database is down', async () => {
    const other = await createTestApp();
    try {
      await other.deps.db.close();
      const res = await other.request('GET', '/v1/health/ready');
      expect(res.status).toBe(503);
      expect(res.body.status).toBe('unavailable');
      expect(res.body.checks.database).toMatchObject({ ok: false, reason: expect.any(String) });
    } finally {
      // On PostgreSQL the app's stop then waits on a worker whose query the ended pool never settles
      // (found 2026-11-26, not fixed yet: a shutdown after losing the database can hang); this test is
      // about the probe's answer, so its teardown waits 5 s at most.
      await Promise.race([
        other.close().catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, 5_000)),
      ]);
    }
  });
});

describe('request bodies', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { BODY_LIMIT: '2kb' } });
  });
  afterAll(() => t.close());

  it('answers malformed JSON with 400 malformed_json', async () => {
    const res = await t.request('POST', '/v1/auth/login', {
      raw: '{"email": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('malformed_json');
  });

  it('answers wrong types with 400 validation_failed and field paths', async () => {
    const res = await t.request('POST', '/v1/auth/login', { body: { email: 42 } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(
      expect.arrayContaining(['body.email', 'body.password']),
    );
  });

  it('answers a body over the limit with 413 payload_too_large', async () => {
    const res = await t.request('POST', '/v1/auth/login', {
      body: { email: 'a@b.co', password: 'x'.repeat(4096) },
    });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
  });

  it('answers a non-JSON body with 415 unsupported_media_type', async () => {
    const res = await t.request('POST', '/v1/auth/login', {
      raw: 'email=a',
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('unsupported_media_type');
  });
});
