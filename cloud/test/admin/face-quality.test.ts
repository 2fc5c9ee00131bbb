// POST /v1/admin/face-quality with the real face engine on real photos: the quality enrollment would
// measure, what to fix, nothing stored; the same 4xx as enrollment for what is not an image.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { FaceEngine } from '@portico/face-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import {
  base64,
  degrade,
  facelessPng,
  HAS_LABELLED,
  HAS_MODELS,
  LABELLED_SKIP_REASON,
  MODELS_SKIP_REASON,
  sharedFaceEngine,
} from '../support/faces.js';
import { loggedInUser } from '../support/identity.js';
import { integratorOf } from '../persons/support.js';
import { facePhoto } from './support.js';

const RUN = HAS_MODELS && HAS_LABELLED;

describe.skipIf(!RUN)('admin face quality preview', () => {
  let engine: FaceEngine;
  let t: TestApp;
  let a: Awaited<ReturnType<typeof integratorOf>>;
  let photo: Buffer;

  const check = (image: string, headers = a.headers) =>
    t.request('POST', '/v1/admin/face-quality', { headers, body: { image } });

  /** What a preview must leave behind: nothing biometric, in the database or on disk. */
  async function stored() {
    const { prisma } = t.deps.db;
    const files = await readdir(path.join(t.dataDir, 'images'), { recursive: true }).catch(() => []);
    return {
      persons: await prisma.person.count(),
      templates: await prisma.faceTemplate.count(),
      images: await prisma.biometricImage.count(),
      files: files.length,
    };
  }

  beforeAll(async () => {
    const shared = await sharedFaceEngine(1);
    engine = shared.engine;
    t = await createTestApp({ face: shared.face });
    a = await integratorOf(t);
    photo = await facePhoto();
  });
  afterAll(async () => {
    await t?.close();
    await engine?.close();
  });

  it('scores a real photo as enrollment does, against the tenant’s level, and stores nothing', async () => {
    const res = await check(base64(photo));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ faceDetected: true, threshold: 0.5 });
    expect(res.body.quality).toBeGreaterThan(0);
    expect(res.body.acceptable).toBe(res.body.quality >= 0.5);
    expect(res.body.issues.includes('below_threshold')).toBe(!res.body.acceptable);
    for (const f of ['detector', 'size', 'sharpness', 'exposure', 'pose']) {
      expect(res.body.factors[f]).toBeGreaterThanOrEqual(0);
      expect(res.body.factors[f]).toBeLessThanOrEqual(1);
    }
    expect(await stored()).toEqual({ persons: 0, templates: 0, images: 0, files: 0 });
    // The quality enrollment measures for the same photo.
    const enrolled = await t.request('POST', '/v1/onboarding', {
      headers: a.keyHeaders,
      body: { name: 'John Simm', document: `D-${newId()}`, frame: base64(photo) },
    });
    expect(enrolled.status, enrolled.text).toBe(201);
    expect(enrolled.body.quality).toBe(res.body.quality);
  });

  it('says what to fix on a blurred photo', async () => {
    const blurred = await degrade({ name: 'photo', bytes: photo }, 'blurred');
    const res = await check(base64(blurred.bytes));
    expect(res.status, res.text).toBe(200);
    expect(res.body.issues).toContain('blurry');
    expect(res.body.factors.sharpness).toBeLessThan(0.5);
  });

  it('answers faceDetected false for an image without a face', async () => {
    const res = await check(base64(await facelessPng()));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      faceDetected: false,
      quality: null,
      threshold: 0.5,
      acceptable: false,
      issues: ['no_face'],
      factors: null,
    });
  });

  it('answers what is not an image with the 4xx of enrollment', async () => {
    const text = await check(Buffer.from('just some text, not a picture').toString('base64'));
    expect(text.status).toBe(400);
    expect(text.body.code).toBe('unsupported_image');
    const garbage = await check('***not base64***');
    expect(garbage.status).toBe(400);
    expect(garbage.body.code).toBe('invalid_base64');
    const missing = await t.request('POST', '/v1/admin/face-quality', { headers: a.headers, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('validation_failed');
  });

  it('refuses an operator (who may not enroll) and an API key with 403', async () => {
    const operator = await loggedInUser(t, a.tenantId, 'operator', `op-${newId()}@example.com`);
    expect((await check(base64(photo), operator)).status).toBe(403);
    expect((await check(base64(photo), a.keyHeaders)).status).toBe(403);
  });
});

describe.skipIf(RUN)('admin face quality preview (skipped)', () => {
  it(`needs the face models and ../shared/faces: ${HAS_MODELS ? LABELLED_SKIP_REASON : MODELS_SKIP_REASON}`, () => {});
});
