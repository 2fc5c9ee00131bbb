// /v1/persons over real HTTP, without a face engine: CRUD, tenant isolation, list filters and cursor,
// upsert under concurrency, batch import limits, enrollment links over a real SMTP exchange, and the
// onboarding endpoints answering 503 when the engine is unavailable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/infra/crypto.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { integratorOf, registerInvited } from './support.js';

let app: TestApp;
let smtp: SmtpSink;
let mails: string[];
let org: Awaited<ReturnType<typeof integratorOf>>;
let other: Awaited<ReturnType<typeof integratorOf>>;

beforeAll(async () => {
  smtp = await startSmtpSink();
  mails = smtp.messages;
  app = await createTestApp({
    env: { SMTP_URL: smtp.url, PUBLIC_URL: 'https://portico.example.com' },
  });
  org = await integratorOf(app);
  other = await integratorOf(app);
});

afterAll(async () => {
  await app?.close();
  await smtp.close();
});

const createPerson = (headers: Record<string, string>, body: Record<string, unknown>) =>
  app.request('POST', '/v1/persons', { headers, body });

describe('persons CRUD', () => {
  it('creates a person with an API key and answers 201 with the contract fields and no biometric data', async () => {
    const res = await createPerson(org.keyHeaders, {
      name: 'Ana Souza',
      document: '123',
      email: 'ana@example.com',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Ana Souza',
      document: '123',
      externalId: null,
      email: 'ana@example.com',
      enrolled: false,
      enrolledAt: null,
      anonymised: false,
    });
    expect(res.body.id).toEqual(expect.any(String));
    expect(JSON.stringify(res.body)).not.toMatch(/embedding|template/i);
  });

  it('gets, patches and deletes with an admin session too', async () => {
    const created = await createPerson(org.headers, {
      name: 'Bruno',
      document: '456',
      birthDate: '1990-04-30',
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect((await app.request('GET', `/v1/persons/${id}`, { headers: org.keyHeaders })).body.birthDate).toBe(
      '1990-04-30',
    );
    const patched = await app.request('PATCH', `/v1/persons/${id}`, {
      headers: org.keyHeaders,
      body: { phone: '+55 11 5555-0000', birthDate: null },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Bruno', phone: '+55 11 5555-0000', birthDate: null });
    expect((await app.request('DELETE', `/v1/persons/${id}`, { headers: org.headers })).status).toBe(204);
    expect((await app.request('GET', `/v1/persons/${id}`, { headers: org.keyHeaders })).status).toBe(404);
    const events = await app.deps.db.prisma.outboxEvent.findMany({
      where: { tenantId: org.tenantId, name: 'person.deleted' },
    });
    expect(events.map((e) => (e.payload as { data: unknown }).data)).toContainEqual({
      personId: id,
      reason: 'deleted',
    });
  });

  it('answers 404 for a person of another tenant, on every verb', async () => {
    const theirs = await createPerson(other.keyHeaders, { name: 'Other', document: '999' });
    const id = theirs.body.id;
    for (const [method, path, body] of [
      ['GET', `/v1/persons/${id}`, undefined],
      ['PATCH', `/v1/persons/${id}`, { name: 'x' }],
      ['DELETE', `/v1/persons/${id}`, undefined],
      ['DELETE', `/v1/persons/${id}/data`, undefined],
      ['POST', `/v1/persons/${id}/send-enrollment-link`, undefined],
    ] as const) {
      const res = await app.request(method, path, { headers: org.keyHeaders, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    expect((await app.request('GET', `/v1/persons/${id}`, { headers: other.keyHeaders })).body.name).toBe(
      'Other',
    );
  });

  it('refuses a second person with the same externalId with 409 conflict', async () => {
    expect(
      (await createPerson(org.keyHeaders, { name: 'C', document: '1', externalId: 'dup-1' })).status,
    ).toBe(201);
    const again = await createPerson(org.keyHeaders, { name: 'D', document: '2', externalId: 'dup-1' });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
  });

  it('refuses calls without credentials with 401', async () => {
    expect((await app.request('GET', '/v1/persons')).status).toBe(401);
  });
});

describe('GET /v1/persons', () => {
  it('pages in creation order with sort=createdAt and an opaque cursor, and filters by q, externalId and enrolled', async () => {
    const t = await integratorOf(app);
    for (let i = 0; i < 7; i++) {
      await createPerson(t.keyHeaders, {
        name: `Page Person ${i}`,
        document: `doc-${i}`,
        externalId: `pp-${i}`,
      });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: Awaited<ReturnType<TestApp['request']>> = await app.request(
        'GET',
        `/v1/persons?limit=3&sort=createdAt${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { headers: t.keyHeaders },
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.items.map((p: { name: string }) => p.name));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 7 }, (_, i) => `Page Person ${i}`));

    const q = await app.request('GET', '/v1/persons?q=doc-3', { headers: t.keyHeaders });
    expect(q.body.items.map((p: { name: string }) => p.name)).toEqual(['Page Person 3']);
    const ext = await app.request('GET', '/v1/persons?externalId=pp-5', { headers: t.keyHeaders });
    expect(ext.body.items).toHaveLength(1);
    const enrolled = await app.request('GET', '/v1/persons?enrolled=true', { headers: t.keyHeaders });
    expect(enrolled.body.items).toHaveLength(0);
    const bad = await app.request('GET', '/v1/persons?cursor=not-a-cursor', { headers: t.keyHeaders });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
  });
});

describe('POST /v1/persons/upsert', () => {
  it('creates (201) then updates (200) by externalId, keeping fields that were not sent', async () => {
    const first = await app.request('POST', '/v1/persons/upsert', {
      headers: org.keyHeaders,
      body: { externalId: 'hr-1', name: 'Eva', document: 'E1', email: 'eva@example.com' },
    });
    expect(first.status).toBe(201);
    expect(first.body.result).toBe('created');
    const second = await app.request('POST', '/v1/persons/upsert', {
      headers: org.keyHeaders,
      body: { externalId: 'hr-1', name: 'Eva Lima', document: 'E1' },
    });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      result: 'updated',
      person: { id: first.body.person.id, name: 'Eva Lima', email: 'eva@example.com' },
    });
  });

  it('creates exactly one person when 20 upserts with the same externalId race', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        app.request('POST', '/v1/persons/upsert', {
          headers: org.keyHeaders,
          body: { externalId: 'race-1', name: `Racer ${i}`, document: `R${i}` },
        }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 200)).toHaveLength(19);
    expect(new Set(results.map((r) => r.body.person.id)).size).toBe(1);
    const rows = await app.deps.db.prisma.person.count({
      where: { tenantId: org.tenantId, externalId: 'race-1' },
    });
    expect(rows).toBe(1);
  });
});

describe('POST /v1/persons/import', () => {
  it('imports 500 mixed rows and reports every row: created, updated (by externalId) and failed', async () => {
    const t = await integratorOf(app);
    await app.request('POST', '/v1/persons/upsert', {
      headers: t.keyHeaders,
      body: { externalId: 'imp-0', name: 'Before import', document: 'B0' },
    });
    const rows: unknown[] = [];
    for (let i = 0; i < 500; i++) {
      if (i % 10 === 3)
        rows.push({ name: '', document: `D${i}` }); // empty name
      else if (i % 10 === 7) rows.push({ name: `Row ${i}`, document: `D${i}`, email: 'not-an-email' });
      else if (i % 10 === 9) rows.push({ name: `Row ${i}`, document: `D${i}`, unknownField: true });
      else if (i % 50 === 0)
        rows.push({ name: `Row ${i}`, document: `D${i}`, externalId: 'imp-0' }); // same key, 10 times
      else if (i % 2 === 0) rows.push({ name: `Row ${i}`, document: `D${i}`, externalId: `imp-${i}` });
      else rows.push({ name: `Row ${i}`, document: `D${i}` });
    }
    const started = performance.now();
    const res = await app.request('POST', '/v1/persons/import', { headers: t.keyHeaders, body: { rows } });
    const ms = performance.now() - started;
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(500);
    expect(res.body.results.map((r: { index: number }) => r.index)).toEqual(
      Array.from({ length: 500 }, (_, i) => i),
    );
    const failed = res.body.results.filter((r: { status: string }) => r.status === 'failed');
    expect(failed).toHaveLength(150);
    for (const f of failed) {
      expect(f.errors.length).toBeGreaterThan(0);
      expect(f.errors[0].path).toMatch(new RegExp(`^rows\\.${f.index}`));
      expect(f.personId).toBeUndefined();
    }
    expect(res.body.results[0]).toMatchObject({ status: 'updated' });
    expect(res.body.results[50]).toMatchObject({ status: 'updated', personId: res.body.results[0].personId });
    expect(res.body.results[2]).toMatchObject({ status: 'created', personId: expect.any(String) });
    expect(res.body.updated).toBe(10);
    expect(res.body.created).toBe(340);
    expect(res.body.failed).toBe(150);
    // Every good row is stored: 340 new + the one that existed.
    expect(await app.deps.db.prisma.person.count({ where: { tenantId: t.tenantId } })).toBe(341);
    console.log(`[persons] import of 500 rows took ${ms.toFixed(0)} ms`);
  });

  it('refuses 501 rows with 400 too_many_rows and stores nothing', async () => {
    const t = await integratorOf(app);
    const rows = Array.from({ length: 501 }, (_, i) => ({ name: `N${i}`, document: `D${i}` }));
    const res = await app.request('POST', '/v1/persons/import', { headers: t.keyHeaders, body: { rows } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('too_many_rows');
    expect(await app.deps.db.prisma.person.count({ where: { tenantId: t.tenantId } })).toBe(0);
  });
});

describe('POST /v1/persons/:id/send-enrollment-link', () => {
  it('mails a single-use link to the person through SMTP and stores only the token hash', async () => {
    const p = await createPerson(org.keyHeaders, {
      name: 'Link Person',
      document: 'L1',
      email: 'link@example.com',
    });
    const before = mails.length;
    const res = await app.request('POST', `/v1/persons/${p.body.id}/send-enrollment-link`, {
      headers: org.keyHeaders,
    });
    expect(res.status).toBe(200);
    expect(res.body.personId).toBe(p.body.id);
    expect(new Date(res.body.expiresAt).getTime() - Date.now()).toBeGreaterThan(71 * 3600_000);
    expect(mails.length).toBe(before + 1);
    const mail = mails[mails.length - 1]!.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) =>
      String.fromCharCode(parseInt(h, 16)),
    );
    expect(mail).toMatch(/^To: link@example.com/m);
    const token = /https:\/\/portico\.example\.com\/enroll\?token=(et_[A-Za-z0-9_-]+)/.exec(mail)?.[1];
    expect(token).toBeDefined();
    const row = await app.deps.db.prisma.enrollmentToken.findFirst({ where: { personId: p.body.id } });
    expect(row?.purpose).toBe('enrollment_link');
    expect(row?.tokenHash).not.toContain(token);
    expect(row?.tokenHash).toBe(hashToken(token!));
    const verified = await app.request('POST', '/v1/public/onboarding/verify-token', {
      body: { enrollment_token: token },
    });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ valid: true, personId: p.body.id });
  });

  it('answers 400 email_required for a person without e-mail', async () => {
    const p = await createPerson(org.keyHeaders, { name: 'No Mail', document: 'N1' });
    const res = await app.request('POST', `/v1/persons/${p.body.id}/send-enrollment-link`, {
      headers: org.keyHeaders,
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('email_required');
  });
});

describe('public onboarding without a face engine', () => {
  it('registers, verifies the token, and answers enroll with 503 engine_unavailable; health is 503 with the reason', async () => {
    const reg = await registerInvited(app, org, {
      name: 'Self Service',
      document: 'S1',
      email: 'self@example.com',
    });
    expect(reg.status).toBe(201);
    expect(reg.body.enrollment_token).toMatch(/^et_/);
    const registered = await app.deps.db.prisma.auditLog.findFirstOrThrow({
      where: { action: 'person.registered', targetId: reg.body.personId },
    });
    expect(registered.requestId).toBe(reg.headers.get('x-request-id'));
    const health = await app.request('GET', '/v1/public/onboarding/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({
      status: 'unavailable',
      reason: expect.stringContaining('no face engine'),
    });
    const enroll = await app.request('POST', '/v1/public/onboarding/enroll', {
      body: { personId: reg.body.personId, frame: 'aGVsbG8=', enrollment_token: reg.body.enrollment_token },
    });
    expect(enroll.status).toBe(503);
    expect(enroll.body.code).toBe('engine_unavailable');
    // The token survives a failed enrollment.
    const verify = await app.request('POST', '/v1/public/onboarding/verify-token', {
      body: { enrollment_token: reg.body.enrollment_token },
    });
    expect(verify.status).toBe(200);
  });

  it('answers verify-token with 404 for an unknown token and register with 404 for an unknown tenant', async () => {
    const unknown = await app.request('POST', '/v1/public/onboarding/verify-token', {
      body: { enrollment_token: 'et_nope' },
    });
    expect(unknown.status).toBe(404);
    const noTenant = await app.request('POST', '/v1/public/onboarding/register', {
      body: { tenantSlug: 'no-such-tenant', name: 'X', document: 'Y', email: 'x@example.com' },
    });
    expect(noTenant.status).toBe(404);
  });

  it('refuses a public enroll with neither token nor API key with 401', async () => {
    const res = await app.request('POST', '/v1/public/onboarding/enroll', {
      body: { personId: 'p', frame: 'aGVsbG8=' },
    });
    expect(res.status).toBe(401);
  });
});

describe('public onboarding rate limits', () => {
  it('answers register with 429 rate_limited and Retry-After once an address has registered 20 times in 10 minutes', async () => {
    const slug = (await app.deps.db.prisma.tenant.findUniqueOrThrow({ where: { id: other.tenantId } })).slug;
    await app.request('PATCH', `/v1/tenants/${other.tenantId}/settings`, {
      headers: other.keyHeaders,
      body: { selfRegistration: 'open_verified' },
    });
    let limited: Awaited<ReturnType<TestApp['request']>> | undefined;
    for (let i = 0; i < 25 && !limited; i++) {
      const res = await app.request('POST', '/v1/public/onboarding/register', {
        body: { tenantSlug: slug, name: `Flood ${i}`, document: `FL${i}`, email: `flood${i}@example.com` },
      });
      if (res.status === 429) limited = res;
      else expect(res.status, res.text).toBe(202);
    }
    expect(limited?.body.code).toBe('rate_limited');
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
