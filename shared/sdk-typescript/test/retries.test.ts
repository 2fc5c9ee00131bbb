// A POST retried after its answer was lost, against the real service: a TCP relay between the SDK and
// the service forwards the request, lets the service do the work, and cuts the connection as the answer
// comes back. The SDK sends the POST again with the same Idempotency-Key and gets the stored answer:
// one person, not two.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@portico/test-support/app';
import { adminOf } from '@portico/test-support/identity';
import { createPortico, ok } from '../src/index.js';

let t: TestApp;
let relay: net.Server;
let relayUrl: string;
let apiKey: string;
let tenantId: string;
/** Answers still to cut (counted per connection that carried an answer back). */
let answersToDrop = 0;

beforeAll(async () => {
  t = await createTestApp();
  const admin = await adminOf(t);
  tenantId = admin.tenant.tenantId;
  apiKey = (
    await t.request('POST', '/v1/applications', { headers: admin.headers, body: { name: 'retries' } })
  ).body.apiKey.key;
  const upstream = new URL(t.url);
  relay = net.createServer((client) => {
    const server = net.connect(Number(upstream.port), upstream.hostname);
    client.pipe(server);
    let dropping: boolean | undefined;
    server.on('data', (chunk) => {
      dropping ??= answersToDrop-- > 0;
      if (dropping) {
        client.destroy();
        server.destroy();
      } else client.write(chunk);
    });
    server.on('end', () => client.end());
    client.on('error', () => server.destroy());
    server.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => relay?.close(resolve));
  await t?.close();
});

it('creates one person when the answer to a POST is lost and the SDK sends it again', async () => {
  const waits: number[] = [];
  const portico = createPortico({ baseUrl: relayUrl, apiKey, sleep: async (ms) => void waits.push(ms) });
  answersToDrop = 1;
  const person = ok(
    await portico.api.POST('/v1/persons', { body: { name: 'Lost Answer', document: 'RETRY-1' } }),
  );
  expect(answersToDrop).toBe(-1); // the first answer was cut, the second passed
  expect(waits).toHaveLength(1);
  const rows = await t.deps.db.prisma.person.findMany({ where: { tenantId, document: 'RETRY-1' } });
  expect(rows.map((r) => r.id)).toEqual([person.id]);
});

it('without an Idempotency-Key the same lost answer would have created two (the service does the work twice)', async () => {
  // What the key prevents, shown with a client that sends none and retries by hand.
  answersToDrop = 1;
  const send = () =>
    fetch(`${relayUrl}/v1/persons`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'No Key', document: 'RETRY-2' }),
    });
  await expect(send()).rejects.toThrow();
  expect((await send()).status).toBe(201);
  expect(await t.deps.db.prisma.person.count({ where: { tenantId, document: 'RETRY-2' } })).toBe(2);
});
