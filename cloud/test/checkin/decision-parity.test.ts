// The evaluation measures the product's decision, so it must be the product's decision: the same
// photos enrolled through the API and identified through the API get the answer, candidate and
// score that the face engine's evaluation path (identify + faceDecision, as in src/open-set.ts)
// computes from the engine's own analysis. Photos: ../shared/faces (skipped, and said, without it).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { faceDecision, type FaceAnswer, type FacePolicy } from '@portico/checkin-policy';
import { FaceIndex, identify, type FaceEngine } from '@portico/face-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integratorOf } from '../persons/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import {
  degrade,
  HAS_LABELLED,
  HAS_MODELS,
  LABELLED_DIR,
  LABELLED_SKIP_REASON,
  MODELS_SKIP_REASON,
  sharedFaceEngine,
} from '../support/faces.js';

const SKIP = !HAS_MODELS || !HAS_LABELLED;
if (SKIP) console.warn(`decision parity skipped: ${!HAS_MODELS ? MODELS_SKIP_REASON : LABELLED_SKIP_REASON}`);

/** Lines that put these photos' genuine scores on both sides, so all three answers occur. */
const LINES = { matchThreshold: 0.7, stepUpThreshold: 0.45, probeQualityMin: 0.3 };
const STRANGERS = new Set(['johns/John_Savage', 'bbt/raj', 'bbt/stuart']);

describe.skipIf(SKIP)('the evaluation decides as the cloud does', () => {
  let engine: FaceEngine;
  let app: TestApp;
  let org: Awaited<ReturnType<typeof integratorOf>>;
  const index = new FaceIndex();
  const probes: Array<{ name: string; bytes: Buffer }> = [];

  beforeAll(async () => {
    let face;
    ({ engine, face } = await sharedFaceEngine(2));
    app = await createTestApp({ face });
    org = await integratorOf(app);
    const patched = await app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
      headers: org.headers,
      body: { requireLiveness: false, ...LINES },
    });
    expect(patched.status, patched.text).toBe(200);
    for (const set of ['bbt', 'johns']) {
      for (const person of (await readdir(path.join(LABELLED_DIR, set), { withFileTypes: true }))
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort()) {
        const dir = path.join(LABELLED_DIR, set, person);
        const files = (await readdir(dir)).filter((f) => /\.(jpe?g|png)$/i.test(f)).sort();
        const photos = await Promise.all(
          files.map(async (f) => ({
            name: `${set}/${person}/${f}`,
            bytes: await readFile(path.join(dir, f)),
          })),
        );
        if (STRANGERS.has(`${set}/${person}`)) {
          probes.push(...photos);
          continue;
        }
        // Enrolled with its first photo that enrollment accepts; the others are probes.
        let enrolledWith = -1;
        for (const [i, photo] of photos.entries()) {
          const res = await app.request('POST', '/v1/onboarding', {
            headers: org.keyHeaders,
            body: { name: person, document: `D-${person}`, frame: photo.bytes.toString('base64') },
          });
          if (res.status === 400 && res.body.code === 'face_quality_too_low') continue;
          expect(res.status, res.text).toBe(201);
          index.add(res.body.person.id, (await engine.analyze(photo.bytes)).embedding);
          enrolledWith = i;
          break;
        }
        probes.push(...photos.filter((_, i) => i !== enrolledWith));
      }
    }
    // A face too small to judge, to see the retake agree too.
    probes.push(await degrade(probes[0]!, 'shrunk'));
  }, 300_000);
  afterAll(async () => {
    await app?.close();
    await engine?.close();
  });

  it('gives every probe the same answer, candidate and calibrated score', async () => {
    const policy: FacePolicy = { ...LINES, requireLiveness: false, livenessThreshold: 0.5 };
    const seen = new Map<FaceAnswer, number>();
    for (const probe of probes) {
      const analysis = await engine.analyze(probe.bytes);
      const [best] = identify(index, analysis.embedding);
      const expected = faceDecision(policy, analysis, best, null);
      seen.set(expected, (seen.get(expected) ?? 0) + 1);
      const res = await app.request('POST', `/v1/public/checkin/${org.tenant.slug}/identify`, {
        headers: org.keyHeaders,
        body: { frame: probe.bytes.toString('base64') },
      });
      if (expected === 'retake') {
        expect(res.status, `${probe.name}: ${res.text}`).toBe(422);
        expect(res.body.code).toBe('face_retake');
        continue;
      }
      expect(res.status, `${probe.name}: ${res.text}`).toBe(200);
      const answer =
        res.body.outcome === 'success'
          ? 'accept'
          : res.body.outcome === 'step_up_required'
            ? 'step_up'
            : res.body.reason === 'not_recognised'
              ? 'refuse'
              : res.body.outcome;
      expect(answer, probe.name).toBe(expected);
      expect(res.body.score, probe.name).toBeCloseTo(best!.score, 3);
      if (answer === 'accept') expect(res.body.person.id, probe.name).toBe(best!.id);
      if (answer === 'step_up') expect(res.body.candidate.id, probe.name).toBe(best!.id);
    }
    // The comparison means something only if the photos reached every answer.
    for (const answer of ['accept', 'step_up', 'refuse', 'retake'] as const) {
      expect(seen.get(answer) ?? 0, answer).toBeGreaterThan(0);
    }
  }, 300_000);
});
