// Check-in by face over HTTP with real photos from ../shared/faces: enroll from one photo, recognise
// another photo of the same person, deny another person, and the liveness rules.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FaceEngine } from '@portico/face-engine';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOf, bearer } from '../support/identity.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { recordCheckin } from '../../src/modules/checkin/record.js';
import { serviceLogin } from '../support/bus.js';
import {
  base64,
  facelessPng,
  HAS_LABELLED,
  HAS_MODELS,
  LABELLED_DIR,
  sharedFaceEngine,
} from '../support/faces.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const photo = async (rel: string) => (await readFile(path.join(LABELLED_DIR, rel))).toString('base64');

describe.skipIf(!HAS_LABELLED || !HAS_MODELS)(`identify by face (real photos from ${LABELLED_DIR})`, () => {
  let engine: FaceEngine;
  let t: TestApp;
  let receiver: WebhookReceiver;
  let admin: Awaited<ReturnType<typeof adminOf>>;
  let amyId: string;
  /** An API key of the tenant: its callers see the scores (anonymous callers get the outcome only). */
  let key: Record<string, string>;
  const settings = (body: object) =>
    t.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, { body, headers: admin.headers });
  const challenge = async () =>
    (await t.request('GET', `/v1/public/checkin/${admin.tenant.slug}/liveness/challenge`)).body
      .nonce as string;
  const identify = (body: object, headers: Record<string, string> = {}) =>
    t.request('POST', `/v1/public/checkin/${admin.tenant.slug}/identify`, { body, headers });

  beforeAll(async () => {
    let face;
    ({ engine, face } = await sharedFaceEngine(1));
    t = await createTestApp({ face });
    receiver = await startWebhookReceiver();
    admin = await adminOf(t);
    // Anonymous callers are taken here (the nonce tests); identify-access.test.ts covers the default.
    await settings({ webhookUrl: receiver.url, identifyCallers: 'anonymous_with_challenge' });
    const app = await t.request('POST', '/v1/applications', {
      body: { name: 'scores' },
      headers: admin.headers,
    });
    key = bearer(app.body.apiKey.key);
    for (const [name, file] of [
      ['Amy Farrah Fowler', 'bbt/amy/amy2.png'],
      ['Leonard Hofstadter', 'bbt/leonard/leonard1.png'],
    ] as const) {
      const res = await t.request('POST', '/v1/onboarding', {
        body: { name, document: `DOC-${name.length}`, frame: await photo(file) },
        headers: admin.headers,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      if (name.startsWith('Amy')) amyId = res.body.person.id;
    }
  }, 120_000);
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
    await engine?.close();
  });

  it('recognises an enrolled person in another photo, stores the frame encrypted and announces it', async () => {
    await settings({ requireLiveness: false });
    const bus = await mqtt.connectAsync(t.deps.bus.url, serviceLogin(t));
    await bus.subscribeAsync(`portico/v1/tenants/${admin.tenant.tenantId}/checkin.success`, { qos: 1 });
    const published = new Promise<string>((resolve) => bus.once('message', (_t, p) => resolve(p.toString())));
    const frame = await photo('bbt/amy/amy4.png');
    const res = await identify({ frame, deviceId: 'door-1' }, key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      outcome: 'success',
      method: 'facial',
      person: { id: amyId, displayName: 'Amy' },
      threshold: 0.57,
      geofenceStatus: 'not_applicable',
    });
    expect(res.body.score).toBeGreaterThanOrEqual(0.57);

    const webhook = await receiver.waitForBody((b) => b.data.checkInId === res.body.checkInId);
    expect(webhook).toMatchObject({
      event: 'checkin.success',
      data: { personId: amyId, method: 'facial', geofenceStatus: 'not_applicable', deviceId: 'door-1' },
    });
    expect(JSON.parse(await published)).toMatchObject({
      event: 'checkin.success',
      data: { checkInId: res.body.checkInId },
    });
    await bus.endAsync();

    const image = await t.deps.db.prisma.biometricImage.findFirstOrThrow({
      where: { checkInId: res.body.checkInId },
    });
    expect(image.kind).toBe('checkin');
    const onDisk = await readFile(path.join(t.deps.config.dataDir, image.storageKey));
    expect(onDisk.includes(Buffer.from(frame, 'base64').subarray(0, 64))).toBe(false);
    const audit = await t.deps.db.prisma.auditLog.findFirstOrThrow({
      where: { targetId: res.body.checkInId },
    });
    expect(audit.action).toBe('checkin.facial');
    expect(JSON.stringify(audit.metadata)).not.toContain(frame.slice(0, 32));
  });

  it('denies a person who is not enrolled', async () => {
    await settings({ requireLiveness: false });
    const res = await identify({ frame: await photo('bbt/penny/penny1.png') }, key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: 'denied', reason: 'not_recognised', person: null });
    expect(res.body.score).toBeLessThan(0.57);
    const webhook = await receiver.waitForBody((b) => b.data.checkInId === res.body.checkInId);
    expect(webhook).toMatchObject({ event: 'checkin.denied', data: { personId: null } });
  });

  it('writes a recognised check-in without reading the person again, and answers 404 with nothing recorded when the person was erased after the search', async () => {
    // The search confirmed the template an instant before; the person row is read back with the
    // check-in's own statement. Erased in between (by another process), the statement's foreign key fails.
    const attempt = (personId: string) =>
      recordCheckin(t.deps, {
        tenantId: admin.tenant.tenantId,
        method: 'facial',
        verdict: 'recognised',
        personId,
        personKnown: true,
        event: null,
        actor: { kind: 'public' },
      });
    const recorded = await attempt(amyId);
    expect(recorded).toMatchObject({ outcome: 'success', person: { id: amyId, displayName: 'Amy' } });
    const gone = await t.request('POST', '/v1/persons', {
      body: { name: 'Gone Soon', document: 'DOC-GONE' },
      headers: admin.headers,
    });
    expect(gone.status, gone.text).toBe(201);
    await t.deps.db.prisma.person.delete({ where: { id: gone.body.id } });
    const before = await t.deps.db.prisma.checkIn.count();
    await expect(attempt(gone.body.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    expect(await t.deps.db.prisma.checkIn.count()).toBe(before);
  });

  it('keeps no frame of a refused identification (no face, not an image)', async () => {
    await settings({ requireLiveness: false });
    const imagesDir = path.join(t.deps.config.dataDir, 'images', admin.tenant.tenantId);
    const files = async () => (existsSync(imagesDir) ? (await readdir(imagesDir)).length : 0);
    const [filesBefore, rowsBefore] = [await files(), await t.deps.db.prisma.biometricImage.count()];
    const noFace = await identify({ frame: base64(await facelessPng()) }, key);
    expect(noFace.status).toBe(400);
    expect(noFace.body.code).toBe('no_face_detected');
    const notImage = await identify({ frame: Buffer.from('GIF89a not a jpeg').toString('base64') }, key);
    expect(notImage.status).toBe(400);
    expect(notImage.body.code).toBe('unsupported_image');
    expect(await files()).toBe(filesBefore);
    expect(await t.deps.db.prisma.biometricImage.count()).toBe(rowsBefore);
  });

  it('requires a fresh single-use nonce when the tenant requires liveness', async () => {
    await settings({ requireLiveness: true, livenessThreshold: 0 });
    const frame = await photo('bbt/amy/amy4.png');
    const missing = await identify({ frame });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('invalid_nonce');
    // A nonce that is sent is checked whoever sends it: here the tenant's key.
    const nonce = await challenge();
    const first = await identify({ frame, nonce }, key);
    expect(first.status).toBe(200);
    const replay = await identify({ frame, nonce }, key);
    expect(replay.status).toBe(400);
    expect(replay.body.code).toBe('invalid_nonce');
    const forged = await identify({ frame, nonce: `${nonce.slice(0, -3)}abc` }, key);
    expect(forged.body.code).toBe('invalid_nonce');
  });

  it('records liveness_failed for a presentation attack below the tenant threshold', async () => {
    await settings({ requireLiveness: true, livenessThreshold: 0.5 });
    const res = await identify({ frame: await photo('spoof/image_F1.jpg'), nonce: await challenge() }, key);
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('liveness_failed');
    expect(res.body.livenessScore).toBeLessThan(0.5);
    const webhook = await receiver.waitForBody((b) => b.data.checkInId === res.body.checkInId);
    expect(webhook.event).toBe('checkin.liveness_failed');
  });

  it('accepts the tenant’s API key and refuses another tenant’s with 404', async () => {
    await settings({ requireLiveness: false });
    const app = await t.request('POST', '/v1/applications', {
      body: { name: 'kiosk' },
      headers: admin.headers,
    });
    const key = app.body.apiKey?.key ?? app.body.key;
    const frame = await photo('bbt/leonard/leonard2.png');
    const own = await identify({ frame }, bearer(key));
    expect(own.status).toBe(200);
    expect(own.body.outcome).toBe('success');
    const other = await adminOf(t);
    const otherApp = await t.request('POST', '/v1/applications', {
      body: { name: 'x' },
      headers: other.headers,
    });
    const foreign = await identify({ frame }, bearer(otherApp.body.apiKey?.key ?? otherApp.body.key));
    expect(foreign.status).toBe(404);
  });

  it('answers bad frames with their codes', async () => {
    await settings({ requireLiveness: false });
    expect((await identify({ frame: '!!!not base64!!!' }, key)).body.code).toBe('invalid_base64');
    expect((await identify({ frame: Buffer.from('GIF89a........').toString('base64') }, key)).body.code).toBe(
      'unsupported_image',
    );
    expect((await identify({ frame: 42 }, key)).body.code).toBe('validation_failed');
    const unknownEvent = await identify(
      {
        frame: await photo('bbt/amy/amy4.png'),
        eventId: '01a20000-0000-7000-8000-000000000000',
      },
      key,
    );
    expect(unknownEvent.status).toBe(404);
    expect(unknownEvent.body.code).toBe('not_found');
  });
});
