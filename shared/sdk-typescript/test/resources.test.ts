// The resource-shaped calls (generated from the OpenAPI document, the same as Python's) against a real
// service: each resource's calls, list iterators over several pages, sandbox and extra headers for an
// API key and an admin session.
import type { FaceEngine } from '@portico/face-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@portico/test-support/app';
import {
  base64,
  HAS_MODELS,
  MODELS_SKIP_REASON,
  samePersonPair,
  sharedFaceEngine,
} from '@portico/test-support/faces';
import { newTenant } from '@portico/test-support/identity';
import { createPortico, type Portico, type PorticoError, type PorticoOptions } from '../src/index.js';

if (!HAS_MODELS) console.warn(MODELS_SKIP_REASON);

/** The error a call rejects with. */
const failure = (call: Promise<unknown>) =>
  call.then(
    () => undefined,
    (e: unknown) => e as PorticoError,
  );

/** Every item of an async iterable (Node 20 has no Array.fromAsync). */
async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe.skipIf(!HAS_MODELS)('@portico/sdk resources against a running service', () => {
  let engine: FaceEngine;
  let t: TestApp;
  let tenant: Awaited<ReturnType<typeof newTenant>>;
  let admin: Portico;
  let apiKey: string;
  /** A client whose requests are counted (method and path), over the real fetch. */
  const counted = (options: Partial<PorticoOptions> = {}) => {
    const requests: string[] = [];
    const portico = createPortico({
      baseUrl: t.url,
      apiKey,
      ...options,
      fetch: (input) => {
        const request = input as Request;
        requests.push(`${request.method} ${new URL(request.url).pathname}`);
        return globalThis.fetch(request);
      },
    });
    return { portico, requests };
  };

  beforeAll(async () => {
    let face;
    ({ engine, face } = await sharedFaceEngine(1));
    t = await createTestApp({ face });
    tenant = await newTenant(t);
    admin = createPortico({ baseUrl: t.url });
    await admin.login(tenant.adminEmail, tenant.adminPassword);
    await admin.tenants.updateSettings(tenant.tenantId, { requireLiveness: false });
    apiKey = (await admin.applications.create({ name: 'resources test' })).apiKey.key;
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await engine?.close();
  });

  it('lists 120 persons with a page size of 50: every person once, in 3 requests, and page() is the first page', async () => {
    const { portico, requests } = counted();
    const imported = await portico.persons.import({
      rows: Array.from({ length: 120 }, (_, i) => ({ name: `Paged ${i}`, document: `PG-${i}` })),
    });
    expect(imported).toMatchObject({ created: 120, failed: 0 });
    requests.length = 0;
    const seen: string[] = [];
    for await (const person of portico.persons.list({ q: 'Paged', limit: 50 })) seen.push(person.id);
    expect(seen).toHaveLength(120);
    expect(new Set(seen).size).toBe(120);
    expect(requests).toEqual(Array(3).fill('GET /v1/persons'));

    const first = await portico.persons.list({ q: 'Paged', limit: 50 }).page();
    expect(first.items).toHaveLength(50);
    expect(first.total).toBe(120);
    expect(first.nextCursor).toBeTruthy();
    // Breaking out of the loop fetches no further page.
    requests.length = 0;
    for await (const _ of portico.persons.list({ q: 'Paged', limit: 50 })) break;
    expect(requests).toHaveLength(1);
  });

  it('creates, reads, updates, upserts, imports a CSV file, anonymises and deletes persons', async () => {
    const portico = createPortico({ baseUrl: t.url, apiKey });
    const ada = await portico.persons.create({ name: 'Ada Lovelace', document: 'AL-1815' });
    expect(await portico.persons.get(ada.id)).toMatchObject({ name: 'Ada Lovelace', enrolled: false });
    expect(await portico.persons.update(ada.id, { email: 'ada@example.com' })).toMatchObject({
      email: 'ada@example.com',
    });
    const upsert = { externalId: 'grace-1906', name: 'Grace Hopper', document: 'GH-1906' };
    expect((await portico.persons.upsert(upsert)).result).toBe('created');
    const again = await portico.persons.upsert({ ...upsert, name: 'Grace B. Hopper' });
    expect(again).toMatchObject({ result: 'updated', person: { name: 'Grace B. Hopper' } });

    const csv = 'name,document,externalId\nAlan Turing,AT-1912,alan-1912\n';
    const fromFile = await portico.persons.import({
      file: new TextEncoder().encode(csv),
      filename: 'people.csv',
    });
    expect(fromFile).toMatchObject({ created: 1, failed: 0 });
    const [alan] = await all(portico.persons.list({ externalId: 'alan-1912' }));
    expect(alan).toMatchObject({ name: 'Alan Turing' });

    await portico.persons.anonymise(alan!.id);
    expect((await portico.persons.get(alan!.id)).anonymised).toBe(true);
    await portico.persons.delete(ada.id);
    expect(await failure(portico.persons.get(ada.id))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('enrolls a face and checks the person in by face, by QR code and by hand', async () => {
    const portico = createPortico({ baseUrl: t.url, apiKey });
    const [enroll, door] = await samePersonPair();
    const person = await portico.persons.create({ name: 'Face Person', document: 'FP-1' });
    const enrolled = await portico.enrollment.enroll({ personId: person.id, frame: base64(enroll.bytes) });
    expect(enrolled).toMatchObject({ personId: person.id, enrolled: true });

    const byFace = await portico.checkin.identify(tenant.slug, {
      frame: base64(door.bytes),
      deviceId: 'sdk',
    });
    expect(byFace).toMatchObject({ outcome: 'success', person: { id: person.id } });

    const { identityId } = await portico.persons.get(person.id);
    const qr = await portico.checkin.qrToken(identityId!);
    const byQr = await portico.checkin.qr(qr.token, { deviceId: 'sdk' });
    expect(byQr).toMatchObject({ outcome: 'success', method: 'qr', person: { id: person.id } });

    const byHand = await admin.checkin.manual({ personId: person.id });
    expect(byHand).toMatchObject({ outcome: 'success', method: 'manual', person: { id: person.id } });
  });

  it('creates, reads, updates, lists and opens events; adds, imports, lists and invites guests', async () => {
    const portico = createPortico({ baseUrl: t.url, apiKey });
    const event = await portico.events.create({ name: 'Launch' });
    expect(await portico.events.get(event.id)).toMatchObject({ name: 'Launch', status: 'draft' });
    expect(await portico.events.update(event.id, { description: 'Doors at 7' })).toMatchObject({
      description: 'Doors at 7',
    });
    expect((await portico.events.status(event.id, { status: 'open' })).status).toBe('open');
    const events = await all(portico.events.list({ limit: 1 }));
    expect(events.map((e) => e.id)).toContain(event.id);

    const guest = await portico.guests.create(event.id, { name: 'Guest One', email: 'one@example.com' });
    const imported = await portico.guests.import(event.id, {
      file: new TextEncoder().encode(
        'name,email\nGuest Two,two@example.com\nGuest Three,three@example.com\n',
      ),
      filename: 'guests.csv',
    });
    expect(imported).toMatchObject({ created: 2, failed: 0 });
    const { requests, portico: countedClient } = counted();
    const names = [];
    for await (const g of countedClient.guests.list(event.id, { limit: 2 })) names.push(g.name);
    expect(names.sort()).toEqual(['Guest One', 'Guest Three', 'Guest Two']);
    expect(requests).toHaveLength(2);
    const invited = await portico.guests.invite(event.id, { guestIds: [guest.id] });
    expect(invited).toBeTruthy();
  });

  it('creates applications and their keys, lists, rotates and revokes them', async () => {
    const created = await admin.applications.create({ name: 'second app' });
    const apps = await all(admin.applications.list());
    expect(apps.map((a) => a.id)).toContain(created.application.id);
    const key = await admin.applications.keys.create(created.application.id, {});
    expect(key.key).toMatch(/^pk_live_/);
    const keys = await admin.applications.keys.list(created.application.id);
    expect(keys.items.map((k) => k.id)).toContain(key.id);
    const rotated = await admin.applications.keys.rotate(created.application.id, key.id);
    expect(rotated.key).not.toBe(key.key);
    await admin.applications.keys.revoke(created.application.id, rotated.id);
    const refused = await failure(
      createPortico({ baseUrl: t.url, apiKey: rotated.key }).persons.list().page(),
    );
    expect(refused).toMatchObject({ status: 401 });
    await admin.applications.delete(created.application.id);
  });

  it('acts on the sandbox with an admin session switched to it and with a pk_test_ key, apart from live', async () => {
    const sandboxAdmin = createPortico({
      baseUrl: t.url,
      accessToken: admin.accessToken,
      environment: 'sandbox',
    });
    const inSandbox = await sandboxAdmin.persons.create({ name: 'Sandbox Sam', document: 'SB-1' });
    const sandboxApp = await admin.applications.create({ name: 'sandbox app', environment: 'sandbox' });
    expect(sandboxApp.apiKey.key).toMatch(/^pk_test_/);
    const testKey = createPortico({ baseUrl: t.url, apiKey: sandboxApp.apiKey.key });
    expect(await testKey.persons.get(inSandbox.id)).toMatchObject({ name: 'Sandbox Sam' });
    const live = createPortico({ baseUrl: t.url, apiKey });
    expect(await failure(live.persons.get(inSandbox.id))).toMatchObject({ status: 404 });
    const liveNames = (await all(admin.persons.list({ q: 'Sandbox Sam' }))).map((p) => p.name);
    expect(liveNames).toEqual([]);
  });

  it('sends extra headers with every call for an API key and an admin session, and per call', async () => {
    const keyClient = createPortico({
      baseUrl: t.url,
      apiKey,
      headers: { 'x-request-id': 'integrator-key-0001' },
    });
    expect(await failure(keyClient.persons.get('nobody'))).toMatchObject({
      code: 'not_found',
      requestId: 'integrator-key-0001',
    });
    const session = createPortico({
      baseUrl: t.url,
      accessToken: admin.accessToken,
      headers: { 'x-request-id': 'integrator-admin-0001' },
    });
    expect(await failure(session.events.get('nothing'))).toMatchObject({
      code: 'not_found',
      requestId: 'integrator-admin-0001',
    });
    const perCall = await failure(
      session.events.get('nothing', { headers: { 'x-request-id': 'integrator-call-0001' } }),
    );
    expect(perCall?.requestId).toBe('integrator-call-0001');
  });

  it('keeps the path-string client underneath and webhooks.verify on the client', async () => {
    const portico = createPortico({ baseUrl: t.url, apiKey });
    const { data } = await portico.api.GET('/v1/persons', { params: { query: { limit: 1 } } });
    expect(data?.items).toHaveLength(1);
    expect(await portico.webhooks.verify({ rawBody: '{}', headers: {}, secret: 's' })).toBe(false);
  });
});
