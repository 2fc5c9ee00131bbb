// A change of the face model without re-enrolling anybody, over real HTTP with real photos: two API
// processes on one database and data directory, the first configured with the default embedder, the
// second with the other one (FACE_MODEL) and its switch worker driven step by step by the test.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { EMBEDDER_IDS, type FaceEngine } from '@portico/face-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faceServiceOf } from '../../src/infra/face.js';
import { createModelSwitch } from '../../src/modules/faces/model-switch.js';
import { createTestApp, type TestApp } from '../support/app.js';
import {
  HAS_LABELLED,
  HAS_MODELS,
  LABELLED_DIR,
  LABELLED_SKIP_REASON,
  sharedFaceEngine,
} from '../support/faces.js';
import { integratorOf } from './support.js';

const [OLD, NEW] = EMBEDDER_IDS;
const photo = async (rel: string) => (await readFile(path.join(LABELLED_DIR, 'bbt', rel))).toString('base64');
if (!HAS_LABELLED) console.warn(LABELLED_SKIP_REASON);

describe.skipIf(!HAS_MODELS || !HAS_LABELLED)('switching the face model re-embeds stored photos', () => {
  let engine: FaceEngine;
  let before: TestApp;
  let after: TestApp;
  let org: Awaited<ReturnType<typeof integratorOf>>;
  const people = new Map<string, string>();

  const identify = (on: TestApp, frame: string) =>
    on.request('POST', `/v1/public/checkin/${org.tenant.slug}/identify`, {
      headers: org.keyHeaders,
      body: { frame },
    });
  const onboard = async (on: TestApp, name: string, files: string[]) => {
    const res = await on.request('POST', '/v1/onboarding', {
      headers: org.keyHeaders,
      body: { name, document: name, frames: await Promise.all(files.map(photo)) },
    });
    expect(res.status, res.text).toBe(201);
    people.set(name, res.body.person.id);
    return res;
  };
  const templates = async () =>
    (
      await before.deps.db.prisma.faceTemplate.findMany({
        where: { tenantId: org.tenantId },
        select: { personId: true, modelId: true },
      })
    ).map(
      (t) => `${[...people].find(([, id]) => id === t.personId)?.[0]}:${t.modelId === OLD ? 'old' : 'new'}`,
    );
  const servedBy = async () =>
    (await before.deps.db.prisma.tenant.findUniqueOrThrow({ where: { id: org.tenantId } })).faceModelId;

  beforeAll(async () => {
    let face;
    ({ engine, face } = await sharedFaceEngine(2));
    before = await createTestApp({ face, env: { FACE_MODEL_SWITCH: 'false' } });
    org = await integratorOf(before);
    await before.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
      headers: org.headers,
      body: { requireLiveness: false },
    });
    await onboard(before, 'amy', ['amy/amy2.png']);
    await onboard(before, 'leonard', ['leonard/leonard1.png', 'leonard/leonard2.png']);
    await onboard(before, 'sheldon', ['sheldon/sheldon1.png']);
    // The second process: the other model, same database and data directory, its worker off.
    after = await createTestApp({
      face: faceServiceOf(engine, NEW),
      database: before.deps.db,
      env: { DATA_DIR: before.dataDir, FACE_MODEL: NEW!, FACE_MODEL_SWITCH: 'false' },
    });
  }, 120_000);

  afterAll(async () => {
    await after?.close();
    await before?.close();
    await engine?.close();
  });

  it('keeps the old model serving while photos are re-embedded, then switches and drops the old templates', async () => {
    expect(await servedBy()).toBe(OLD);
    expect((await templates()).sort()).toEqual(['amy:old', 'leonard:old', 'sheldon:old']);
    const switcher = createModelSwitch(after.deps, { batch: 1 });

    // Template refresh on, with an accept line low enough that the check-ins below refresh.
    const settings = (body: object) =>
      before.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, { headers: org.headers, body });
    expect(
      (await settings({ refreshTemplates: true, matchThreshold: 0.3, stepUpThreshold: 0.3 })).status,
    ).toBe(200);

    // Part way (one person converted): check-ins on the new process still work, by the old model.
    expect(await switcher.runOnce()).toBe(true);
    expect((await templates()).filter((t) => t.endsWith(':new'))).toHaveLength(1);
    expect(await servedBy()).toBe(OLD);
    for (const [name, file] of [
      ['amy', 'amy/amy4.png'],
      ['leonard', 'leonard/leonard4.png'],
    ] as const) {
      const during = await identify(after, await photo(file));
      expect(during.body, name).toMatchObject({ outcome: 'success', person: { id: people.get(name) } });
    }
    // They refreshed the old model's templates.
    expect(
      await before.deps.db.prisma.faceTemplateRefresh.count({ where: { modelId: OLD, kind: 'checkin' } }),
    ).toBe(2);
    expect(
      (await settings({ refreshTemplates: false, matchThreshold: 0.57, stepUpThreshold: 0.35 })).status,
    ).toBe(200);
    // An enrollment during the switch writes a template of each model.
    const penny = await onboard(after, 'penny', ['penny/penny1.png']);
    expect(penny.body.modelId).toBe(NEW);
    expect((await templates()).filter((t) => t.startsWith('penny')).sort()).toEqual([
      'penny:new',
      'penny:old',
    ]);

    // Runs until the switch completes (each run converts a few persons).
    let runs = 0;
    while ((await servedBy()) === OLD) {
      expect(await switcher.runOnce()).toBe(true);
      if (++runs > 10) throw new Error('the switch did not complete');
    }
    expect(await servedBy()).toBe(NEW);
    expect((await templates()).sort()).toEqual(['amy:new', 'leonard:new', 'penny:new', 'sheldon:new']);
    // Photos are kept (they are the source of the next switch); nothing more to do.
    expect(await before.deps.db.prisma.biometricImage.count({ where: { kind: 'enrollment' } })).toBe(5);
    expect(await switcher.runOnce()).toBe(false);
    const audit = await before.deps.db.prisma.auditLog.findFirstOrThrow({
      where: { action: 'face_model.switched' },
    });
    expect(audit.metadata).toMatchObject({ from: OLD, to: NEW, converted: 4, notConverted: 0 });
    // The refresh embeddings went with the old model's templates: the new ones come from the photos.
    expect(await before.deps.db.prisma.faceTemplateRefresh.count()).toBe(0);

    // Everybody is recognised by the new model, on either process (both compute every embedder).
    for (const [name, file] of [
      ['amy', 'amy/amy4.png'],
      ['leonard', 'leonard/leonard4.png'],
      ['penny', 'penny/penny2.png'],
    ] as const) {
      for (const on of [after, before]) {
        // Recognised: admitted, or (the new model here is the weaker one without the mirror) sent to
        // a second factor as the right person, which the API key's answer names.
        const res = await identify(on, await photo(file));
        expect(['success', 'step_up_required'], name).toContain(res.body.outcome);
        expect((res.body.person ?? res.body.candidate)?.id, name).toBe(people.get(name));
      }
    }
    const stranger = await identify(after, await photo('raj/raj1.png'));
    expect(stranger.body).toMatchObject({ outcome: 'denied', person: null });
  });

  it('switches back, marking a person whose photos are gone as not enrolled instead of blocking the switch', async () => {
    const penny = people.get('penny')!;
    await before.deps.db.prisma.biometricImage.updateMany({
      where: { personId: penny },
      data: { erasedAt: new Date() },
    });
    const back = createModelSwitch(before.deps);
    while ((await servedBy()) === NEW) expect(await back.runOnce()).toBe(true);
    expect(await servedBy()).toBe(OLD);
    expect((await templates()).sort()).toEqual(['amy:old', 'leonard:old', 'sheldon:old']);
    const audits = await before.deps.db.prisma.auditLog.findMany({
      where: { action: 'face_model.switched' },
      orderBy: { createdAt: 'asc' },
    });
    expect(audits.at(-1)!.metadata).toMatchObject({ from: NEW, to: OLD, converted: 3, notConverted: 1 });
    const person = await before.request('GET', `/v1/persons/${penny}`, { headers: org.keyHeaders });
    expect(person.body.enrolled).toBe(false);
    const res = await identify(before, await photo('amy/amy4.png'));
    expect(res.body).toMatchObject({ outcome: 'success', person: { id: people.get('amy') } });
  });
});
