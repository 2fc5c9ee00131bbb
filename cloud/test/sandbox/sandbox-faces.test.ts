// The sandbox's faces (real photos from ../shared/faces, real face engine): a sandbox gallery never
// matches a live person nor the reverse, and a reset erases the sandbox's templates and image files.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FaceEngine } from '@portico/face-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { bearer } from '../support/identity.js';
import { HAS_LABELLED, HAS_MODELS, LABELLED_DIR, sharedFaceEngine } from '../support/faces.js';
import { integratorOf } from '../persons/support.js';

const photo = async (rel: string) => (await readFile(path.join(LABELLED_DIR, rel))).toString('base64');

describe.skipIf(!HAS_LABELLED || !HAS_MODELS)(`sandbox faces (real photos from ${LABELLED_DIR})`, () => {
  let engine: FaceEngine;
  let t: TestApp;
  let live: Awaited<ReturnType<typeof integratorOf>>;
  let testKey: Record<string, string>;
  const identify = async (headers: Record<string, string>, file: string) => {
    const res = await t.request('POST', `/v1/public/checkin/${live.tenant.slug}/identify`, {
      headers,
      body: { frame: await photo(file) },
    });
    expect(res.status, res.text).toBe(200);
    return res.body as { outcome: string; person: { id: string } | null };
  };
  const onboard = async (headers: Record<string, string>, name: string, file: string) => {
    const res = await t.request('POST', '/v1/onboarding', {
      headers,
      body: { name, document: `DOC-${name}`, frame: await photo(file) },
    });
    expect(res.status, res.text).toBe(201);
    return res.body.person.id as string;
  };

  beforeAll(async () => {
    let face;
    ({ engine, face } = await sharedFaceEngine(1));
    t = await createTestApp({ face });
    live = await integratorOf(t);
    const app = await t.request('POST', '/v1/applications', {
      headers: live.headers,
      body: { name: 'CI', environment: 'sandbox' },
    });
    testKey = bearer(app.body.apiKey.key);
    // API-key callers may skip the liveness nonce; passive liveness still judges the frame.
    await t.request('PATCH', `/v1/tenants/${live.tenantId}/settings`, {
      headers: live.headers,
      body: { requireLiveness: false },
    });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await engine?.close();
  });

  it('never matches a live person in the sandbox, nor a sandbox person in live', async () => {
    const liveAmy = await onboard(live.keyHeaders, 'Amy Farrah Fowler', 'bbt/amy/amy2.png');
    expect(await identify(testKey, 'bbt/amy/amy4.png')).toMatchObject({ outcome: 'denied', person: null });
    expect((await identify(live.keyHeaders, 'bbt/amy/amy4.png')).person?.id).toBe(liveAmy);

    const sandboxLeonard = await onboard(testKey, 'Leonard Hofstadter', 'bbt/leonard/leonard1.png');
    const inSandbox = await identify(testKey, 'bbt/leonard/leonard2.png');
    expect(inSandbox).toMatchObject({ outcome: 'success', person: { id: sandboxLeonard } });
    expect(await identify(live.keyHeaders, 'bbt/leonard/leonard2.png')).toMatchObject({
      outcome: 'denied',
      person: null,
    });

    // Amy enrolled in both: each environment answers its own person.
    const sandboxAmy = await onboard(testKey, 'Amy Farrah Fowler', 'bbt/amy/amy2.png');
    expect((await identify(testKey, 'bbt/amy/amy4.png')).person?.id).toBe(sandboxAmy);
    expect((await identify(live.keyHeaders, 'bbt/amy/amy4.png')).person?.id).toBe(liveAmy);
  });

  it('reset erases the sandbox’s templates and image files and leaves live faces alone', async () => {
    const db = t.deps.db.prisma;
    const sandbox = await db.tenant.findUniqueOrThrow({ where: { sandboxOfId: live.tenantId } });
    const sandboxImages = await db.biometricImage.findMany({ where: { tenantId: sandbox.id } });
    const liveImages = await db.biometricImage.findMany({ where: { tenantId: live.tenantId } });
    expect(sandboxImages.length).toBeGreaterThan(0);
    const onDisk = (key: string) => existsSync(t.deps.images.pathOf(key));
    expect(sandboxImages.every((i) => onDisk(i.storageKey))).toBe(true);

    const reset = await t.request('POST', `/v1/tenants/${live.tenantId}/sandbox/reset`, {
      headers: live.headers,
    });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body.erased.images).toBe(sandboxImages.length);

    expect(sandboxImages.some((i) => onDisk(i.storageKey))).toBe(false);
    expect(liveImages.every((i) => onDisk(i.storageKey))).toBe(true);
    expect(await db.faceTemplate.count({ where: { tenantId: sandbox.id } })).toBe(0);
    expect(await db.faceTemplate.count({ where: { tenantId: live.tenantId } })).toBe(1);
    expect(await identify(testKey, 'bbt/leonard/leonard2.png')).toMatchObject({ outcome: 'denied' });
    expect(await identify(live.keyHeaders, 'bbt/amy/amy4.png')).toMatchObject({ outcome: 'success' });
  });
});
