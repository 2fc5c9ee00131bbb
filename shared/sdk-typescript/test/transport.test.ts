// Retries and backoff seen from a real HTTP server that answers as the test says (the service itself
// rarely answers 503 on demand): which answers are retried, how long the SDK waits, when it stops.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import {
  createPortico,
  ok,
  PorticoConnectionError,
  PorticoError,
  PorticoTimeoutError,
  VERSION,
} from '../src/index.js';

const problem = (status: number, code: string) =>
  JSON.stringify({ type: 'about:blank', title: 'T', status, code, detail: 'd', requestId: 'r' });

let server: http.Server;
let url: string;
let script: { status: number | 'hang' | 'drop'; headers?: Record<string, string> }[] = [];
const seen: {
  method: string;
  body: string;
  authorization?: string;
  idempotencyKey?: string;
  userAgent?: string;
}[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({
        method: req.method!,
        body,
        authorization: req.headers.authorization,
        idempotencyKey: req.headers['idempotency-key'] as string | undefined,
        userAgent: req.headers['user-agent'],
      });
      const next = script.shift() ?? { status: 200 };
      if (next.status === 'hang') return;
      if (next.status === 'drop') return void req.socket.destroy();
      res.writeHead(next.status, {
        'content-type': next.status < 300 ? 'application/json' : 'application/problem+json',
        ...next.headers,
      });
      res.end(
        next.status < 300 ? JSON.stringify({ items: [], nextCursor: null }) : problem(next.status, 'x'),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const client = (waits: number[], retry = {}) =>
  createPortico({
    baseUrl: url,
    apiKey: 'pk_test_key',
    retry,
    random: () => 1,
    sleep: async (ms) => void waits.push(ms),
  });

it('retries 503 with exponential backoff when no Retry-After is given, re-sending the same body', async () => {
  script = [{ status: 503 }, { status: 503 }, { status: 201 }];
  seen.length = 0;
  const waits: number[] = [];
  const res = await client(waits).api.POST('/v1/persons', { body: { name: 'A', document: 'B' } });
  expect(res.response.status).toBe(201);
  expect(waits).toEqual([500, 1_000]);
  expect(seen.map((s) => s.body)).toEqual(Array(3).fill(JSON.stringify({ name: 'A', document: 'B' })));
  expect(seen.every((s) => s.authorization === 'Bearer pk_test_key')).toBe(true);
});

it('honours an HTTP-date Retry-After and gives up after maxRetries with the last problem', async () => {
  const at = new Date(Date.now() + 5_000).toUTCString();
  script = Array(4).fill({ status: 429, headers: { 'retry-after': at } });
  const waits: number[] = [];
  const res = await client(waits, { maxRetries: 3 }).api.GET('/v1/persons');
  expect(waits).toHaveLength(3);
  for (const w of waits) expect(w).toBeGreaterThan(3_000);
  expect(() => ok(res)).toThrow(PorticoError);
});

it('sends one Idempotency-Key per POST, the same on every retry, and a new one for the next POST', async () => {
  script = [{ status: 503 }, { status: 'drop' }, { status: 500 }, { status: 201 }, { status: 201 }];
  seen.length = 0;
  const sdk = client([]);
  expect((await sdk.api.POST('/v1/persons', { body: { name: 'A', document: 'B' } })).response.status).toBe(
    201,
  );
  expect((await sdk.api.POST('/v1/persons', { body: { name: 'C', document: 'D' } })).response.status).toBe(
    201,
  );
  const keys = seen.map((s) => s.idempotencyKey);
  expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
  expect(keys.slice(0, 4)).toEqual(Array(4).fill(keys[0]));
  expect(keys[4]).not.toBe(keys[0]);
  script = [];
});

it('retries a dropped connection and a 500 on a GET, and does not retry a 400 or a PATCH after a 500', async () => {
  script = [{ status: 'drop' }, { status: 500 }, { status: 200 }];
  const waits: number[] = [];
  expect((await client(waits).api.GET('/v1/persons')).response.status).toBe(200);
  expect(waits).toEqual([500, 1_000]);
  script = [{ status: 400 }, { status: 200 }];
  expect((await client([]).api.GET('/v1/persons')).response.status).toBe(400);
  script = [{ status: 500 }, { status: 200 }];
  const patched = await client([]).api.PATCH('/v1/persons/{id}', { params: { path: { id: 'p' } }, body: {} });
  expect(patched.response.status).toBe(500);
  script = [];
});

it('surfaces a connection that keeps failing as PorticoConnectionError after maxRetries', async () => {
  script = Array(3).fill({ status: 'drop' });
  seen.length = 0;
  const attempt = client([], { maxRetries: 2 }).api.POST('/v1/persons', {
    body: { name: 'A', document: 'B' },
  });
  await expect(attempt).rejects.toBeInstanceOf(PorticoConnectionError);
  expect(seen).toHaveLength(3);
  script = [];
});

it('names the SDK and its version in the User-Agent (the version of package.json)', async () => {
  seen.length = 0;
  await client([]).api.GET('/v1/persons');
  const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  expect(VERSION).toBe(pkg.version);
  expect(seen[0]!.userAgent).toBe(`portico-sdk-typescript/${pkg.version} node/${process.versions.node}`);
});

it('aborts an attempt that outlives timeoutMs', async () => {
  script = [{ status: 'hang' }];
  const started = Date.now();
  await expect(client([], { timeoutMs: 200, maxRetries: 0 }).api.GET('/v1/persons')).rejects.toBeInstanceOf(
    PorticoTimeoutError,
  );
  expect(Date.now() - started).toBeLessThan(5_000);
  script = [];
});

it('still aborts at timeoutMs after the garbage collector ran during the attempt', async () => {
  // Node 20's AbortSignal.any holds its sources weakly: a collected timeout signal never fires.
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  script = [{ status: 'hang' }];
  const attempt = client([], { timeoutMs: 300, maxRetries: 0 })
    .api.GET('/v1/persons')
    .then(
      () => 'answered',
      (error: Error) => error.name,
    );
  const collecting = setInterval(gc, 50);
  const outcome = await Promise.race([
    attempt,
    new Promise((resolve) => setTimeout(() => resolve('still pending after 3 s'), 3_000)),
  ]);
  clearInterval(collecting);
  expect(outcome).toBe('PorticoTimeoutError');
  script = [];
});

it("the caller's signal still aborts an attempt that has a timeoutMs", async () => {
  script = [{ status: 'hang' }];
  const controller = new AbortController();
  const attempt = client([], { timeoutMs: 60_000 }).api.GET('/v1/persons', { signal: controller.signal });
  setTimeout(() => controller.abort(), 100);
  await expect(attempt).rejects.toThrow(/abort/i);
  script = [];
});
