// Identify is no oracle for anonymous callers (issue 12 item 3): they get the outcome, never the match
// score, the threshold or the liveness score; API-key callers get the scores. And only where the tenant
// takes them (issue 23 item 2, identifyCallers): by default an anonymous photo is 403, and where allowed
// the answer names nobody. And the contract's
// quick-start (frame plus the tenant's API key, no nonce) works under the default settings (item 9).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FaceEngine } from '@portico/face-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { HAS_LABELLED, HAS_MODELS, LABELLED_DIR, sharedFaceEngine } from '../support/faces.js';
import { adminOf, bearer } from '../support/identity.js';

const photo = async (rel: string) => (await readFile(path.join(LABELLED_DIR, rel))).toString('base64');

describe.skipIf(!HAS_LABELLED || !HAS_MODELS)('identify: who sees the scores, and the quick-start', () => {
  let engine: FaceEngine;
  let t: TestApp;
  let admin: Awaited<ReturnType<typeof adminOf>>;
  let key: Record<string, string>;
  let amyId: string;
  const settings = (body: object) =>
    t.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, { body, headers: admin.headers });
  const identify = (body: object, headers: Record<string, string> = {}) =>
    t.request('POST', `/v1/public/checkin/${admin.tenant.slug}/identify`, { body, headers });
  const challenge = async () =>
    (await t.request('GET', `/v1/public/checkin/${admin.tenant.slug}/liveness/challenge`)).body
      .nonce as string;

  beforeAll(async () => {
    let face;
    ({ engine, face } = await sharedFaceEngine(1));
    t = await createTestApp({ face });
    admin = await adminOf(t);
    const app = await t.request('POST', '/v1/applications', {
      body: { name: 'server' },
      headers: admin.headers,
    });
    key = bearer(app.body.apiKey.key);
    const enrolled = await t.request('POST', '/v1/onboarding', {
      body: { name: 'Amy Farrah Fowler', document: 'DOC-AMY', frame: await photo('bbt/amy/amy2.png') },
      headers: admin.headers,
    });
    expect(enrolled.status, enrolled.text).toBe(201);
    amyId = enrolled.body.person.id;
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await engine?.close();
  });

  it('refuses an anonymous still photo with 403 anonymous_identify_not_allowed under the default identifyCallers, nonce or not, recording nothing; the API key identifies it', async () => {
    await settings({ requireLiveness: false });
    const defaults = await t.request('GET', `/v1/tenants/${admin.tenant.tenantId}/settings`, {
      headers: admin.headers,
    });
    expect(defaults.body.identifyCallers).toBe('credentialed');
    const before = await t.deps.db.prisma.checkIn.count();
    const frame = await photo('bbt/amy/amy4.png');
    for (const body of [{ frame }, { frame, nonce: await challenge() }]) {
      const res = await identify(body);
      expect(res.status, res.text).toBe(403);
      expect(res.body.code).toBe('anonymous_identify_not_allowed');
      expect(res.text).not.toContain(amyId);
    }
    expect(await t.deps.db.prisma.checkIn.count()).toBe(before);
    const withKey = await identify({ frame }, key);
    expect(withKey.body).toMatchObject({ outcome: 'success', person: { id: amyId } });
  });

  it('with identifyCallers anonymous_with_challenge, still refuses an anonymous still photo: 400 without the challenge’s frames, 422 liveness_failed with it repeated as them', async () => {
    await settings({ requireLiveness: false, identifyCallers: 'anonymous_with_challenge' });
    const before = await t.deps.db.prisma.checkIn.count();
    const frame = await photo('bbt/amy/amy4.png');
    const alone = await identify({ frame, nonce: await challenge() });
    expect(alone.status, alone.text).toBe(400);
    expect(alone.body.code).toBe('validation_failed');
    const repeated = await identify({ frame, frames: [frame, frame, frame], nonce: await challenge() });
    expect(repeated.status, repeated.text).toBe(422);
    expect(repeated.body.code).toBe('liveness_failed');
    for (const res of [alone, repeated]) expect(res.text).not.toContain(amyId);
    expect(await t.deps.db.prisma.checkIn.count()).toBe(before);
    // Without a nonce an anonymous caller is refused before any face work.
    const bare = await identify({ frame });
    expect(bare.status).toBe(400);
    expect(bare.body.code).toBe('invalid_nonce');
    await settings({ identifyCallers: 'credentialed' });
  });

  it('answers an API-key caller the scores', async () => {
    await settings({ requireLiveness: false });
    const res = await identify({ frame: await photo('bbt/penny/penny1.png') }, key);
    expect(res.status, res.text).toBe(200);
    expect(res.body.outcome).toBe('denied');
    expect(res.body.score).toEqual(expect.any(Number));
    expect(res.body.threshold).toEqual(expect.any(Number));
    // Recorded with its scores whoever called: the audit trail and the tenant's history keep them.
    const row = await t.deps.db.prisma.checkIn.findUniqueOrThrow({ where: { id: res.body.checkInId } });
    expect(row.score).toBe(res.body.score);
  });

  it('answers an API-key caller a spoof as liveness_failed with its liveness score', async () => {
    await settings({ requireLiveness: true, livenessThreshold: 0.5 });
    const withKey = await identify(
      { frame: await photo('spoof/image_F1.jpg'), nonce: await challenge() },
      key,
    );
    expect(withKey.body.outcome).toBe('liveness_failed');
    expect(withKey.body.livenessScore).toEqual(expect.any(Number));
  });

  it('lets the tenant’s API key identify without a nonce under the default settings; passive liveness still runs', async () => {
    await settings({ requireLiveness: true, livenessThreshold: 0.5, identifyCallers: 'credentialed' });
    const live = await identify({ frame: await photo('bbt/amy/amy4.png') }, key);
    expect(live.status, live.text).toBe(200);
    expect(live.body.livenessScore).toEqual(expect.any(Number));
    const spoof = await identify({ frame: await photo('spoof/image_F1.jpg') }, key);
    expect(spoof.status).toBe(200);
    expect(spoof.body.outcome).toBe('liveness_failed');
    // A nonce that is sent is still checked.
    const forged = await identify({ frame: await photo('bbt/amy/amy4.png'), nonce: 'a.1.forged' }, key);
    expect(forged.status).toBe(400);
    expect(forged.body.code).toBe('invalid_nonce');
    // Anonymous callers, where the tenant takes them, still need one.
    await settings({ identifyCallers: 'anonymous_with_challenge' });
    const anonymous = await identify({ frame: await photo('bbt/amy/amy4.png') });
    expect(anonymous.status).toBe(400);
    expect(anonymous.body.code).toBe('invalid_nonce');
  });
  it('reads the key’s tenant with the key, as it is at that call: its settings changed apply to the next call, and another tenant’s slug is 404 on the challenge and identify', async () => {
    await settings({ requireLiveness: false, identifyCallers: 'credentialed' });
    const frame = await photo('bbt/amy/amy4.png');
    const before = await identify({ frame }, key);
    expect(before.body.outcome, before.text).toBe('success');
    // The threshold raised above any score: the very next call decides with it.
    await settings({ matchThreshold: 0.999, stepUpThreshold: 0.999 });
    const after = await identify({ frame }, key);
    expect(after.status, after.text).toBe(200);
    expect(after.body.threshold).toBe(0.999);
    expect(after.body.outcome).toBe('denied');
    await settings({ matchThreshold: before.body.threshold, stepUpThreshold: before.body.threshold });
    // The key is its tenant's only: another tenant's public paths do not know it.
    const other = await adminOf(t);
    const checkins = await t.deps.db.prisma.checkIn.count();
    const nonce = await t.request('GET', `/v1/public/checkin/${other.tenant.slug}/liveness/challenge`, {
      headers: key,
    });
    expect(nonce.status).toBe(404);
    const elsewhere = await t.request('POST', `/v1/public/checkin/${other.tenant.slug}/identify`, {
      body: { frame },
      headers: key,
    });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.code).toBe('not_found');
    expect(await t.deps.db.prisma.checkIn.count()).toBe(checkins);
  });
});
