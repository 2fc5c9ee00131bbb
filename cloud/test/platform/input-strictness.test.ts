// Caller input the database cannot take, query strings read loosely, errors that echo megabytes and
// headers Node refuses: each is a 4xx problem+json, never a 500 or a bare status line.
import net, { type AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from '../../src/http/errors.js';
import { requestContext } from '../../src/http/request-context.js';
import { createLogger } from '../../src/infra/logger.js';
import { integratorOf } from '../persons/support.js';
import { createTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { createTestDatabase } from '../support/database.js';

type Integrator = Awaited<ReturnType<typeof integratorOf>>;

function expectValidationFailed(res: TestResponse, path?: string) {
  expect(res.status).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body.code).toBe('validation_failed');
  if (path) expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
}

describe('input strictness', () => {
  let t: TestApp;
  let who: Integrator;
  beforeAll(async () => {
    t = await createTestApp();
    who = await integratorOf(t);
  });
  afterAll(() => t.close());

  describe('NUL bytes and unpaired surrogates', () => {
    it('refuses a NUL byte in a person’s name with 400 validation_failed on the field', async () => {
      const res = await t.request('POST', '/v1/persons', {
        headers: who.keyHeaders,
        body: { name: 'Ana\u0000Souza', document: '123' },
      });
      expectValidationFailed(res, 'body.name');
    });

    it('refuses an unpaired surrogate in a document with 400 validation_failed', async () => {
      const res = await t.request('POST', '/v1/persons', {
        headers: who.keyHeaders,
        body: { name: 'Ana', document: '12\ud800' },
      });
      expectValidationFailed(res, 'body.document');
    });

    it('keeps emoji, right-to-left text and combining marks', async () => {
      const name = 'שלום 👩🏽‍💻 e\u0301';
      const res = await t.request('POST', '/v1/persons', {
        headers: who.keyHeaders,
        body: { name, document: 'rtl-1' },
      });
      expect(res.status).toBe(201);
      expect(res.body.name).toBe(name);
    });

    it('refuses a NUL byte in the public registration’s tenant slug with 400, not 500', async () => {
      const res = await t.request('POST', '/v1/public/onboarding/register', {
        body: { tenantSlug: 'acme\u0000', name: 'Ana', document: '1', email: 'ana@example.com' },
      });
      expectValidationFailed(res, 'body.tenantSlug');
    });

    it('refuses a NUL byte in q, in a cursor and in a path id with 400 validation_failed', async () => {
      expectValidationFailed(
        await t.request('GET', '/v1/persons?q=a%00b', { headers: who.keyHeaders }),
        'query.q',
      );
      expectValidationFailed(
        await t.request('GET', '/v1/applications?cursor=a%00b', { headers: who.headers }),
        'query.cursor',
      );
      expectValidationFailed(
        await t.request('GET', '/v1/persons/a%00b', { headers: who.keyHeaders }),
        'params.id',
      );
    });

    it('answers a malformed path id with 404 not_found, and one that cannot be an id with 400', async () => {
      const unknown = await t.request('GET', '/v1/persons/not-an-id', { headers: who.keyHeaders });
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe('not_found');
      const tooLong = await t.request('GET', `/v1/persons/${'x'.repeat(65)}`, { headers: who.keyHeaders });
      expectValidationFailed(tooLong, 'params.id');
      const badEscape = await t.request('GET', '/v1/persons/%E0%A4%A', { headers: who.keyHeaders });
      expect(badEscape.status).toBe(400);
      expect(badEscape.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    });

    it('reports an import row with a NUL byte as failed and stores the others', async () => {
      const res = await t.request('POST', '/v1/persons/import', {
        headers: who.keyHeaders,
        body: {
          rows: [
            { name: 'Nul\u0000Row', document: 'imp-1' },
            { name: 'Good Row', document: 'imp-2' },
          ],
        },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ created: 1, failed: 1 });
      expect(res.body.results[0]).toMatchObject({
        status: 'failed',
        errors: [expect.objectContaining({ path: 'rows.0.name' })],
      });
      expect(res.body.results[1].status).toBe('created');
    });
  });

  describe('query strings', () => {
    it('treats % and _ in q as plain characters, not wildcards', async () => {
      for (const [name, document] of [
        ['100% Sure', 'pct-1'],
        ['snake_case', 'und-1'],
        ['back\\slash', 'bsl-1'],
        ['Plain Name', 'pln-1'],
      ]) {
        const created = await t.request('POST', '/v1/persons', {
          headers: who.keyHeaders,
          body: { name, document },
        });
        expect(created.status).toBe(201);
      }
      const names = async (q: string) => {
        const res = await t.request('GET', `/v1/persons?q=${encodeURIComponent(q)}`, {
          headers: who.keyHeaders,
        });
        expect(res.status).toBe(200);
        return res.body.items.map((p: { name: string }) => p.name);
      };
      expect(await names('%')).toEqual(['100% Sure']);
      expect(await names('_')).toEqual(['snake_case']);
      expect(await names('\\')).toEqual(['back\\slash']);
      expect(await names('plain')).toEqual(['Plain Name']);
    });

    it('refuses a cursor the API did not issue on the applications list, and pages with its own', async () => {
      expectValidationFailed(
        await t.request('GET', '/v1/applications?cursor=zzz', { headers: who.headers }),
        'query.cursor',
      );
      for (const name of ['second app', 'third app']) {
        await t.request('POST', '/v1/applications', { headers: who.headers, body: { name } });
      }
      const first = await t.request('GET', '/v1/applications?limit=2', { headers: who.headers });
      expect(first.body.items).toHaveLength(2);
      const rest = await t.request('GET', `/v1/applications?limit=2&cursor=${first.body.nextCursor}`, {
        headers: who.headers,
      });
      expect(rest.status).toBe(200);
      expect(rest.body.items.map((a: { name: string }) => a.name)).toEqual(['third app']);
      expect(rest.body.nextCursor).toBeNull();
    });

    it.each([
      ['q[]=a', 'query'],
      ['q[$ne]=x', 'query'],
      ['nmae=typo', 'query'],
      ['q=a&q=b', 'query.q'],
      ['limit=0x10', 'query.limit'],
      ['limit=1e1', 'query.limit'],
      ['limit=', 'query.limit'],
      ['limit=%2016', 'query.limit'],
    ])('refuses ?%s on the persons list with 400 validation_failed', async (qs, path) => {
      const res = await t.request('GET', `/v1/persons?${qs}`, { headers: who.keyHeaders });
      expectValidationFailed(res, path);
    });

    it('refuses a query parameter on a route that takes none', async () => {
      const res = await t.request('GET', '/v1/auth/me?debug=1', { headers: who.headers });
      expectValidationFailed(res, 'query');
    });

    it('documents that 400 in /docs-json for routes that take no parameters too', async () => {
      const doc = (await t.request('GET', '/docs-json')).body;
      expect(doc.paths['/v1/auth/me'].get.responses['400'].description).toMatch(/validation_failed/);
    });

    it('refuses a hexadecimal latitude on the QR check-in', async () => {
      const res = await t.request('GET', `/v1/public/checkin/qr/${'x'.repeat(32)}?lat=0x10`);
      expectValidationFailed(res, 'query.lat');
    });
  });

  describe('error size', () => {
    it('answers a body of 200,000 unknown keys with a short error naming a few of them', async () => {
      const body: Record<string, number> = { name: 1 };
      for (let i = 0; i < 200_000; i++) body[`k${i}`] = 1;
      const res = await t.request('POST', '/v1/persons', { headers: who.keyHeaders, body });
      expectValidationFailed(res, 'body');
      expect(res.text.length).toBeLessThan(4_000);
      const unknown = res.body.errors.find((e: { path: string }) => e.path === 'body');
      expect(unknown.message).toBe('unknown keys "k0", "k1", "k2", "k3", "k4" and 199995 more');
    });

    it('lists the first 20 field errors and says how many more there were', async () => {
      const rows = Array.from({ length: 5_000 }, () => 'not a row');
      const res = await t.request('POST', '/v1/persons/import', { headers: who.keyHeaders, body: { rows } });
      expectValidationFailed(res);
      expect(res.body.errors).toHaveLength(20);
      expect(res.body.errors[0].path).toBe('body.rows.0');
      expect(res.body.omittedErrors).toBe(4_980);
      expect(res.body.detail).toMatch(/; and 4980 more$/);
      expect(res.text.length).toBeLessThan(4_000);
    });
  });

  it('answers request headers over 16 KB with 431 headers_too_large as problem+json', async () => {
    const res = await fetch(`${t.url}/v1/health/live`, { headers: { 'x-filler': 'a'.repeat(20_000) } });
    expect(res.status).toBe(431);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const body = (await res.json()) as { requestId?: string };
    expect(body).toMatchObject({
      status: 431,
      code: 'headers_too_large',
      type: expect.stringContaining('headers'),
    });
    expect(body.requestId).toBe(res.headers.get('x-request-id'));
  });
});

describe('requests the HTTP parser refuses', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('answers a request that is not HTTP with 400 malformed_request as problem+json, then closes', async () => {
    const { hostname, port } = new URL(t.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), hostname, () => socket.write('HELLO THERE\r\n\r\n'));
      let data = '';
      socket.on('data', (chunk) => (data += String(chunk)));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toMatch(/content-type: application\/problem\+json/i);
    expect(head).toMatch(/connection: close/i);
    expect(JSON.parse(body!)).toMatchObject({ status: 400, code: 'malformed_request' });
  });
});

describe('database encoding errors', () => {
  it('answer 400 validation_failed, not 500, when a NUL reaches PostgreSQL past every schema', async () => {
    const db = await createTestDatabase();
    const logger = createLogger('silent');
    const app = express();
    app.use(requestContext(logger));
    app.get('/text', async () => {
      await db.prisma.$queryRaw`SELECT ${'a\u0000b'}::text`;
    });
    app.get('/json', async () => {
      await db.prisma.$queryRaw`SELECT ${'{"a":"\\u0000"}'}::jsonb`;
    });
    app.get('/model', async () => {
      await db.prisma.person.findFirst({ where: { id: 'a\u0000b' } });
    });
    app.use(errorHandler(logger));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const path of ['/text', '/json', '/model']) {
        const res = await fetch(base + path);
        expect(res.status, path).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(((await res.json()) as { code?: string }).code).toBe('validation_failed');
      }
    } finally {
      server.close();
      await db.close();
    }
  });
});

describe('rows removed while a request runs', () => {
  it('answer 409 conflict, not 500, when a write meets a foreign key whose row went away', async () => {
    const db = await createTestDatabase();
    const logger = createLogger('silent');
    const app = express();
    app.use(requestContext(logger));
    // What a sandbox call meets when a reset deletes its tenant between its checks and its write.
    app.post('/person', async () => {
      await db.prisma.person.create({
        data: { id: 'p_race', tenantId: 'tenant_that_went_away', name: 'Ana', document: '1' },
      });
    });
    app.use(errorHandler(logger));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/person`, {
        method: 'POST',
      });
      expect(res.status).toBe(409);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await res.json()) as { code?: string }).code).toBe('conflict');
    } finally {
      server.close();
      await db.close();
    }
  });
});
