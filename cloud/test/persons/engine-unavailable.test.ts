// The runtime's face service when the models are missing: the server still starts and serves
// persons; health answers 503 with the reason (naming the fetch command) and enrollment 503.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FETCH_COMMAND } from '@portico/face-engine';
import { startFaceService, type FaceService } from '../../src/infra/face.js';
import { createLogger } from '../../src/infra/logger.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { integratorOf } from './support.js';

let emptyDir: string;
let face: FaceService;
let app: TestApp;

beforeAll(async () => {
  emptyDir = await mkdtemp(path.join(os.tmpdir(), 'portico-no-models-'));
  face = startFaceService({ modelDir: emptyDir, workers: 1, logger: createLogger('silent') });
  app = await createTestApp({ face });
  await face.started();
});

afterAll(async () => {
  await app?.close();
  await face?.close();
  await rm(emptyDir, { recursive: true, force: true });
});

describe('face engine without models', () => {
  it('lets the server start and serve persons', async () => {
    const t = await integratorOf(app);
    const res = await app.request('POST', '/v1/persons', {
      headers: t.keyHeaders,
      body: { name: 'A', document: 'B' },
    });
    expect(res.status).toBe(201);
  });

  it('answers health with 503 and the reason', async () => {
    const res = await app.request('GET', '/v1/public/onboarding/health');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ status: 'unavailable', workers: 0 });
    expect(res.body.reason).toContain(FETCH_COMMAND);
  });

  it('answers enrollment and one-call onboarding with 503 engine_unavailable', async () => {
    const t = await integratorOf(app);
    const person = await app.request('POST', '/v1/persons', {
      headers: t.keyHeaders,
      body: { name: 'A', document: 'B' },
    });
    const enroll = await app.request('POST', '/v1/public/onboarding/enroll', {
      headers: t.keyHeaders,
      body: { personId: person.body.id, frame: 'aGVsbG8=' },
    });
    expect(enroll.status).toBe(503);
    expect(enroll.body.code).toBe('engine_unavailable');
    expect(enroll.headers.get('retry-after')).toBe('30');
    expect(enroll.body.detail).not.toContain(FETCH_COMMAND);
    const onboard = await app.request('POST', '/v1/onboarding', {
      headers: t.headers,
      body: { name: 'C', document: 'D', frame: 'aGVsbG8=' },
    });
    expect(onboard.status).toBe(503);
    expect(await app.deps.db.prisma.person.count({ where: { tenantId: t.tenantId } })).toBe(1);
  });
});
