// Biometric enrollment over real HTTP with real photos (../shared/faces, or the registry photos when
// that folder is absent) and the real face engine: quality, degraded photos, duplicates, bad frames,
// tokens, one-call onboarding, and erasure on anonymise/delete checked in the database and on disk.
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createTestApp, type TestApp } from '../support/app.js';
import {
  base64,
  cleanPhotos,
  degrade,
  facelessPng,
  HAS_LABELLED,
  HAS_MODELS,
  MODELS_SKIP_REASON,
  samePersonPair,
  sharedFaceEngine,
  type Degradation,
  type Photo,
} from '../support/faces.js';
import type { FaceEngine } from '@portico/face-engine';
import { startWebhookReceiver } from '../support/webhook-receiver.js';
import { issueEnrollmentToken } from '../../src/modules/onboarding/tokens.js';
import { integratorOf, registerInvited } from './support.js';

if (!HAS_MODELS) console.warn(MODELS_SKIP_REASON);
if (!HAS_LABELLED) console.warn('../shared/faces absent: enrollment tests use the registry photos instead');

let engine: FaceEngine;
let app: TestApp;
let org: Awaited<ReturnType<typeof integratorOf>>;
let photos: Photo[];
const latencies: number[] = [];
/** The i-th clean photo (cycling: the registry fallback has fewer). */
const photo = (i: number) => photos[i % photos.length]!;

describe.skipIf(!HAS_MODELS)('biometric enrollment with real photos', () => {
  beforeAll(async () => {
    const shared = await sharedFaceEngine(2);
    engine = shared.engine;
    app = await createTestApp({ face: shared.face });
    org = await integratorOf(app);
    photos = await cleanPhotos();
  });

  afterAll(async () => {
    await app?.close();
    await engine?.close();
    if (latencies.length) {
      const sorted = [...latencies].sort((a, b) => a - b);
      console.log(
        `[enrollment] ${sorted.length} enrollments over HTTP: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms, ` +
          `max ${sorted[sorted.length - 1]!.toFixed(0)} ms`,
      );
    }
  });

  async function newPerson(
    headers: Record<string, string> = org.keyHeaders,
    extra: Record<string, unknown> = {},
  ) {
    const res = await app.request('POST', '/v1/persons', {
      headers,
      body: { name: 'Face Person', document: `F-${Math.random()}`, ...extra },
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  async function enroll(
    personId: string,
    frame: string,
    headers: Record<string, string> = org.keyHeaders,
    token?: string,
  ) {
    const started = performance.now();
    const res = await app.request('POST', '/v1/public/onboarding/enroll', {
      headers,
      body: { personId, frame, ...(token ? { enrollment_token: token } : {}) },
    });
    if (res.status === 200) latencies.push(performance.now() - started);
    return res;
  }

  /** A tenant of its own, so duplicate checks of one test never see another test's faces. */
  async function freshTenant(settings: Record<string, unknown> = {}) {
    const t = await integratorOf(app);
    if (Object.keys(settings).length) {
      const res = await app.request('PATCH', `/v1/tenants/${t.tenantId}/settings`, {
        headers: t.headers,
        body: settings,
      });
      expect(res.status).toBe(200);
    }
    return t;
  }

  it('reports the engine healthy', async () => {
    const res = await app.request('GET', '/v1/public/onboarding/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', workers: 2, modelId: engine.modelId });
  });

  it('enrolls an existing person with an admin session of the tenant (the console), not of another tenant', async () => {
    const t = await freshTenant();
    const personId = await newPerson(t.keyHeaders);
    const frame = base64(photo(0).bytes);
    const other = await freshTenant();
    expect((await enroll(personId, frame, other.headers)).status).toBe(404);
    const res = await enroll(personId, frame, t.headers);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ personId, enrolled: true, photos: 1 });
    const person = await app.request('GET', `/v1/persons/${personId}`, { headers: t.keyHeaders });
    expect(person.body.enrolled).toBe(true);
  });

  it('enrolls clean photos with a quality value at or above the default level 0.5', async () => {
    const t = await freshTenant();
    for (const photo of photos) {
      const personId = await newPerson(t.keyHeaders);
      const res = await enroll(personId, base64(photo.bytes), t.keyHeaders);
      expect(res.status, `${photo.name}: ${res.text}`).toBe(200);
      expect(res.body).toEqual({
        personId,
        quality: expect.any(Number),
        photos: 1,
        enrolled: true,
        modelId: engine.modelId,
      });
      expect(res.body.quality).toBeGreaterThanOrEqual(0.5);
      expect(res.body.quality).toBeLessThanOrEqual(1);
      console.log(`[enrollment] clean ${photo.name}: quality ${res.body.quality}`);
      const person = await app.request('GET', `/v1/persons/${personId}`, { headers: t.keyHeaders });
      expect(person.body).toMatchObject({ enrolled: true, enrolledAt: expect.any(String) });
      expect(JSON.stringify(person.body)).not.toMatch(/embedding|template/i);
    }
  });

  // Darkening to 10 % brightness sometimes leaves no detectable face at all: that is refused too
  // (400 no_face_detected). Every degraded photo must be refused, and each degradation must produce
  // face_quality_too_low (with its measured quality) on at least one photo.
  const degradations: Degradation[] = ['blurred', 'darkened', 'shrunk'];
  it.each(degradations)(
    'refuses %s versions of clean photos with 400 face_quality_too_low and the quality',
    async (how) => {
      const t = await freshTenant();
      const codes: string[] = [];
      for (const photo of photos) {
        const personId = await newPerson(t.keyHeaders);
        const bad = await degrade(photo, how);
        const res = await enroll(personId, base64(bad.bytes), t.keyHeaders);
        console.log(`[enrollment] ${bad.name}: ${res.status} ${res.body.code} quality ${res.body.quality}`);
        expect(res.status, `${bad.name}: ${res.text}`).toBe(400);
        expect(['face_quality_too_low', 'no_face_detected']).toContain(res.body.code);
        codes.push(res.body.code);
        if (res.body.code === 'face_quality_too_low') {
          expect(res.body.quality).toBeLessThan(0.5);
          expect(res.body.required).toBe(0.5);
        }
        const person = await app.request('GET', `/v1/persons/${personId}`, { headers: t.keyHeaders });
        expect(person.body.enrolled).toBe(false);
      }
      expect(codes).toContain('face_quality_too_low');
    },
  );

  it('follows the tenant’s biometricQualityLevel: the same photo passes at 0.5 and fails at 0.999', async () => {
    const t = await freshTenant({ biometricQualityLevel: 0.999 });
    const personId = await newPerson(t.keyHeaders);
    const res = await enroll(personId, base64(photo(0).bytes), t.keyHeaders);
    // A perfect 1.0 is possible in principle; the figure says which.
    if (res.status === 200) expect(res.body.quality).toBeGreaterThanOrEqual(0.999);
    else expect(res.body).toMatchObject({ code: 'face_quality_too_low', required: 0.999 });
  });

  it('refuses the same face for a second person with 409 duplicate_face, unless the tenant allows duplicates', async () => {
    const [a, b] = await samePersonPair();
    const t = await freshTenant();
    const first = await newPerson(t.keyHeaders);
    expect((await enroll(first, base64(a.bytes), t.keyHeaders)).status).toBe(200);
    const second = await newPerson(t.keyHeaders);
    const dup = await enroll(second, base64(b.bytes), t.keyHeaders);
    expect(dup.status, dup.text).toBe(409);
    expect(dup.body.code).toBe('duplicate_face');
    expect(dup.text).not.toContain(first);
    // Re-enrolling the first person with the other photo of the same face is not a duplicate.
    expect((await enroll(first, base64(b.bytes), t.keyHeaders)).status).toBe(200);
    expect(await app.deps.db.prisma.faceTemplate.count({ where: { personId: first } })).toBe(1);
    expect(await app.deps.db.prisma.biometricImage.count({ where: { personId: first } })).toBe(1);

    const lax = await freshTenant({ allowDuplicateFaces: true });
    const p1 = await newPerson(lax.keyHeaders);
    const p2 = await newPerson(lax.keyHeaders);
    expect((await enroll(p1, base64(a.bytes), lax.keyHeaders)).status).toBe(200);
    expect((await enroll(p2, base64(b.bytes), lax.keyHeaders)).status).toBe(200);
  });

  it('answers an enrollment link whose face is another person’s with a plain refusal (409 conflict, never duplicate_face) and queues the possible duplicate for the admins in the audit log', async () => {
    const [a, b] = await samePersonPair();
    const t = await freshTenant();
    const first = await newPerson(t.keyHeaders);
    expect((await enroll(first, base64(a.bytes), t.keyHeaders)).status).toBe(200);
    const linkFor = async (personId: string) =>
      (
        await issueEnrollmentToken(app.deps.db.prisma, {
          tenantId: t.tenantId,
          personId,
          purpose: 'enrollment_link',
          now: new Date(),
        })
      ).token;
    const second = await newPerson(t.keyHeaders);
    const dup = await enroll(second, base64(b.bytes), {}, await linkFor(second));
    expect(dup.status, dup.text).toBe(409);
    expect(dup.body.code).toBe('conflict');
    expect(dup.text).not.toContain(first);
    expect(dup.text).not.toMatch(/duplicate|already enrolled/i);
    const queued = await app.request('GET', '/v1/admin/audit-log?action=person.possible_duplicate', {
      headers: t.headers,
    });
    expect(queued.status, queued.text).toBe(200);
    expect(queued.body.items).toHaveLength(1);
    expect(queued.body.items[0]).toMatchObject({
      action: 'person.possible_duplicate',
      targetId: second,
      metadata: expect.objectContaining({ matchedPersonId: first }),
    });
    expect(await app.deps.db.prisma.faceTemplate.count({ where: { personId: second } })).toBe(0);
  });

  it('sees a template enrolled by another process: the gallery reloads when the database changed', async () => {
    const [a] = await samePersonPair();
    const t = await freshTenant();
    const first = await newPerson(t.keyHeaders);
    expect((await enroll(first, base64(a.bytes), t.keyHeaders)).status).toBe(200);
    // Simulate another API process: this process's gallery is dropped behind its back...
    app.deps.gallery.invalidate(t.tenantId);
    const hits = await app.deps.gallery.search(
      t.tenantId,
      engine.modelId,
      (await engine.analyze(a.bytes)).embedding,
      1,
    );
    expect(hits[0]).toMatchObject({ personId: first });
    // ...and a template deleted directly in the database is no longer found.
    await app.deps.db.prisma.faceTemplate.deleteMany({ where: { personId: first } });
    expect(
      await app.deps.gallery.search(t.tenantId, engine.modelId, (await engine.analyze(a.bytes)).embedding, 1),
    ).toEqual([]);
  });

  it('two API processes on one database: each sees the other’s enrollments and deletions at its next search', async () => {
    const key = randomBytes(32).toString('base64');
    const a = await createTestApp({ face: app.deps.face, env: { DATA_ENCRYPTION_KEY: key } });
    const b = await createTestApp({
      face: app.deps.face,
      env: { DATA_ENCRYPTION_KEY: key },
      database: a.deps.db,
    });
    try {
      const t = await integratorOf(a);
      const [x, y] = await samePersonPair();
      const enrollOn = async (on: TestApp, personId: string, frame: Buffer) =>
        on.request('POST', '/v1/public/onboarding/enroll', {
          headers: t.keyHeaders,
          body: { personId, frame: base64(frame) },
        });
      const person = async (on: TestApp) =>
        (
          await on.request('POST', '/v1/persons', {
            headers: t.keyHeaders,
            body: { name: 'P', document: 'D' },
          })
        ).body.id as string;
      // B loads its (empty) gallery first, then A enrolls the face.
      expect(b.deps.gallery.size(t.tenantId, engine.modelId)).toBeUndefined();
      expect(
        await b.deps.gallery.search(t.tenantId, engine.modelId, new Float32Array(512).fill(0.04), 1),
      ).toEqual([]);
      const p1 = await person(a);
      expect((await enrollOn(a, p1, x.bytes)).status).toBe(200);
      const p2 = await person(b);
      const dup = await enrollOn(b, p2, y.bytes);
      expect(dup.status, dup.text).toBe(409);
      expect(dup.body.code).toBe('duplicate_face');
      expect((await a.request('DELETE', `/v1/persons/${p1}`, { headers: t.keyHeaders })).status).toBe(204);
      expect((await enrollOn(b, p2, y.bytes)).status).toBe(200);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('delivers person.enrolled and person.deleted (anonymised) to the tenant’s webhook', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const t = await freshTenant({ webhookUrl: receiver.url });
      const personId = await newPerson(t.keyHeaders);
      const ok = await enroll(personId, base64(photo(3).bytes), t.keyHeaders);
      expect(ok.status).toBe(200);
      const enrolled = await receiver.waitForBody(
        (b) => b.event === 'person.enrolled' && b.data.personId === personId,
      );
      expect(enrolled).toMatchObject({
        tenantId: t.tenantId,
        data: { quality: ok.body.quality, modelId: engine.modelId },
      });
      await app.request('DELETE', `/v1/persons/${personId}/data`, { headers: t.keyHeaders });
      const deleted = await receiver.waitForBody(
        (b) => b.event === 'person.deleted' && b.data.personId === personId,
      );
      expect(deleted.data.reason).toBe('anonymised');
      expect(receiver.received.map((r) => r.rawBody).join()).not.toMatch(/embedding|Face Person/);
    } finally {
      await receiver.close();
    }
  });

  it('answers bad frames with their codes', async () => {
    const personId = await newPerson();
    const cases: Array<[string, string, number, string]> = [
      ['not base64', '%%% not base64 %%%', 400, 'invalid_base64'],
      [
        'a GIF',
        base64(Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'binary')),
        400,
        'unsupported_image',
      ],
      ['truncated JPEG', base64(photo(0).bytes.subarray(0, 200)), 400, 'unsupported_image'],
      ['no face', base64(await facelessPng()), 400, 'no_face_detected'],
      [
        'over 8 MB',
        base64(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.alloc(8 * 1024 * 1024 + 10)])),
        413,
        'image_too_large',
      ],
    ];
    for (const [what, frame, status, code] of cases) {
      const res = await enroll(personId, frame);
      expect(res.status, `${what}: ${res.text}`).toBe(status);
      expect(res.body.code, what).toBe(code);
    }
    expect(await app.deps.db.prisma.biometricImage.count({ where: { personId } })).toBe(0);
  });

  it('enrolls through the public flow with a single-use token and emits person.enrolled', async () => {
    const t = await freshTenant();
    const reg = await registerInvited(app, t, {
      name: 'Self Enrolled',
      document: 'SE-1',
      email: 'se@example.com',
    });
    expect(reg.status).toBe(201);
    const { personId, enrollment_token: token } = reg.body;
    const frame = base64(photo(1).bytes);
    const other = await newPerson(t.keyHeaders);
    const wrongPerson = await enroll(other, frame, {}, token);
    expect(wrongPerson.body.code).toBe('invalid_token');
    const ok = await enroll(personId, frame, {}, token);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.enrolled).toBe(true);
    const reused = await enroll(personId, frame, {}, token);
    expect(reused.status).toBe(400);
    expect(reused.body.code).toBe('invalid_token');
    const verify = await app.request('POST', '/v1/public/onboarding/verify-token', {
      body: { enrollment_token: token },
    });
    expect(verify.body.code).toBe('invalid_token');

    const events = await app.deps.db.prisma.outboxEvent.findMany({
      where: { tenantId: t.tenantId, name: 'person.enrolled' },
    });
    expect(events.map((e) => (e.payload as { data: unknown }).data)).toEqual([
      { personId, quality: ok.body.quality, modelId: engine.modelId },
    ]);
  });

  it('refuses an API key of another tenant with 404', async () => {
    const personId = await newPerson();
    const stranger = await freshTenant();
    const res = await enroll(personId, base64(photo(0).bytes), stranger.keyHeaders);
    expect(res.status).toBe(404);
  });

  it('onboards person + identity + enrollment in one call, and leaves nothing behind when the face is refused', async () => {
    const t = await freshTenant();
    const ok = await app.request('POST', '/v1/onboarding', {
      headers: t.headers,
      body: { name: 'One Call', document: 'OC-1', externalId: 'oc-1', frame: base64(photo(2).bytes) },
    });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body).toMatchObject({
      person: { name: 'One Call', enrolled: true },
      identityId: expect.any(String),
    });
    const identity = await app.deps.db.prisma.identity.findUnique({ where: { id: ok.body.identityId } });
    expect(identity).toMatchObject({ personId: ok.body.person.id, status: 'active' });

    const before = await app.deps.db.prisma.person.count({ where: { tenantId: t.tenantId } });
    const bad = await app.request('POST', '/v1/onboarding', {
      headers: t.headers,
      body: { name: 'Blurry', document: 'OC-2', frame: base64((await degrade(photo(3), 'blurred')).bytes) },
    });
    expect(bad.body.code).toBe('face_quality_too_low');
    const dupKey = await app.request('POST', '/v1/onboarding', {
      headers: t.keyHeaders,
      body: {
        name: 'Same key',
        document: 'OC-3',
        externalId: 'oc-1',
        frame: base64(photo(4).bytes),
      },
    });
    expect(dupKey.status).toBe(409);
    expect(await app.deps.db.prisma.person.count({ where: { tenantId: t.tenantId } })).toBe(before);
    expect(await app.deps.db.prisma.identity.count({ where: { tenantId: t.tenantId } })).toBe(1);
    expect(await imageFiles(t.tenantId)).toHaveLength(1);
  });

  async function imageFiles(tenantId: string): Promise<string[]> {
    const dir = path.join(app.dataDir, 'images', tenantId);
    return existsSync(dir) ? readdir(dir) : [];
  }

  it('stores the image encrypted (mode 0600) and the template encrypted', async () => {
    const t = await freshTenant();
    const personId = await newPerson(t.keyHeaders);
    expect((await enroll(personId, base64(photo(0).bytes), t.keyHeaders)).status).toBe(200);
    const image = await app.deps.db.prisma.biometricImage.findFirstOrThrow({ where: { personId } });
    const file = path.join(app.dataDir, image.storageKey);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const onDisk = await readFile(file);
    expect(onDisk.includes(photo(0).bytes.subarray(0, 64))).toBe(false);
    expect(image.byteSize).toBe(photo(0).bytes.length);
    const template = await app.deps.db.prisma.faceTemplate.findFirstOrThrow({ where: { personId } });
    expect(template.modelId).toBe(engine.modelId);
    expect(template.embeddingEnc.length).toBeGreaterThan(2048);
  });

  it('anonymise leaves no template, image row, image file, token or personal field behind', async () => {
    const t = await freshTenant();
    const personId = await newPerson(t.keyHeaders, {
      externalId: 'anon-1',
      email: 'anon@example.com',
      phone: '+1 555 0100',
      birthDate: '1980-01-01',
    });
    expect((await enroll(personId, base64(photo(0).bytes), t.keyHeaders)).status).toBe(200);
    await app.request('POST', `/v1/persons/${personId}/send-enrollment-link`, { headers: t.keyHeaders });
    const prisma = app.deps.db.prisma;
    const identity = await prisma.identity.create({
      data: { id: `id-${personId}`, tenantId: t.tenantId, personId },
    });
    await prisma.checkIn.create({
      data: {
        id: `ci-${personId}`,
        tenantId: t.tenantId,
        personId,
        identityId: identity.id,
        method: 'facial',
        outcome: 'success',
        latitude: 1.5,
        longitude: 2.5,
        occurredAt: new Date(),
      },
    });
    // A check-in capture linked only through the check-in (as identify stores it) is erased too.
    const store = app.deps.images;
    const capture = await store.save(t.tenantId, `cap-${personId}`, photo(0).bytes);
    await prisma.biometricImage.create({
      data: {
        id: `cap-${personId}`,
        tenantId: t.tenantId,
        checkInId: `ci-${personId}`,
        kind: 'checkin',
        contentType: 'image/jpeg',
        ...capture,
      },
    });
    const image = await prisma.biometricImage.findFirstOrThrow({ where: { personId } });
    const file = path.join(app.dataDir, image.storageKey);
    expect(existsSync(file)).toBe(true);
    expect(existsSync(store.pathOf(capture.storageKey))).toBe(true);

    const res = await app.request('DELETE', `/v1/persons/${personId}/data`, { headers: t.keyHeaders });
    expect(res.status).toBe(204);

    expect(await prisma.faceTemplate.count({ where: { personId } })).toBe(0);
    expect(await prisma.biometricImage.count({ where: { OR: [{ personId }, { id: image.id }] } })).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(store.pathOf(capture.storageKey))).toBe(false);
    expect(await prisma.biometricImage.count({ where: { id: `cap-${personId}` } })).toBe(0);
    expect(await imageFiles(t.tenantId)).toEqual([]);
    expect(await prisma.enrollmentToken.count({ where: { personId } })).toBe(0);
    const row = await prisma.person.findUniqueOrThrow({ where: { id: personId } });
    expect(row).toMatchObject({
      name: 'Anonymised',
      document: '',
      externalId: null,
      email: null,
      phone: null,
      birthDate: null,
      enrolledAt: null,
      anonymisedAt: expect.any(Date),
    });
    const checkIn = await prisma.checkIn.findUniqueOrThrow({ where: { id: `ci-${personId}` } });
    expect(checkIn).toMatchObject({
      personId: null,
      identityId: null,
      anonymised: true,
      latitude: null,
      longitude: null,
    });
    expect((await prisma.identity.findUniqueOrThrow({ where: { id: identity.id } })).status).toBe('revoked');
    const wire = await app.request('GET', `/v1/persons/${personId}`, { headers: t.keyHeaders });
    expect(wire.body).toMatchObject({ anonymised: true, enrolled: false, name: 'Anonymised' });
    const events = await prisma.outboxEvent.findMany({
      where: { tenantId: t.tenantId, name: 'person.deleted' },
    });
    expect(events.map((e) => (e.payload as { data: unknown }).data)).toEqual([
      { personId, reason: 'anonymised' },
    ]);
    const audit = await prisma.auditLog.findFirstOrThrow({
      where: { targetId: personId, action: 'person.anonymised' },
    });
    expect(JSON.stringify(audit.metadata)).not.toMatch(/anon@example|555 0100|1980/);
    // The face is gone from the gallery: the same face enrolls for someone else without a duplicate.
    const next = await newPerson(t.keyHeaders);
    expect((await enroll(next, base64(photo(0).bytes), t.keyHeaders)).status).toBe(200);
    // Enrolling an anonymised person is refused.
    expect((await enroll(personId, base64(photo(0).bytes), t.keyHeaders)).status).toBe(409);
  });

  it('delete removes the person with their template, image rows and files', async () => {
    const t = await freshTenant();
    const personId = await newPerson(t.keyHeaders);
    expect((await enroll(personId, base64(photo(1).bytes), t.keyHeaders)).status).toBe(200);
    const image = await app.deps.db.prisma.biometricImage.findFirstOrThrow({ where: { personId } });
    expect((await app.request('DELETE', `/v1/persons/${personId}`, { headers: t.keyHeaders })).status).toBe(
      204,
    );
    expect(await app.deps.db.prisma.faceTemplate.count({ where: { personId } })).toBe(0);
    expect(await app.deps.db.prisma.biometricImage.count({ where: { id: image.id } })).toBe(0);
    expect(existsSync(path.join(app.dataDir, image.storageKey))).toBe(false);
  });
});
