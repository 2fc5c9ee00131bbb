// Template refresh (issue 22, tenant setting refreshTemplates, off by default): a check-in admitted on
// the face alone at or above the accept line + TEMPLATE_REFRESH.margin makes the person's template the
// mean of their enrollment photos and their last TEMPLATE_REFRESH.keep such check-ins, audited, the
// check-in embeddings kept encrypted and erased with the person's biometrics. The lines are set around
// measured scores, so each case happens on purpose.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { TEMPLATE_REFRESH } from '@portico/checkin-policy';
import type { FaceEngine } from '@portico/face-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { HAS_LABELLED, HAS_MODELS, LABELLED_DIR, sharedFaceEngine } from '../support/faces.js';
import { adminOf, bearer } from '../support/identity.js';

const photo = async (rel: string) => (await readFile(path.join(LABELLED_DIR, rel))).toString('base64');
const SKIP = !HAS_LABELLED || !HAS_MODELS;
if (SKIP) {
  console.warn(
    `template refresh tests skipped: ${!HAS_LABELLED ? `no labelled photos at ${LABELLED_DIR}` : 'no face models (pnpm --filter @portico/face-engine models)'}`,
  );
}

describe.skipIf(SKIP)('template refresh (tenant setting refreshTemplates)', () => {
  let engine: FaceEngine;
  let t: TestApp;
  let admin: Awaited<ReturnType<typeof adminOf>>;
  let key: Record<string, string>;
  let amy: { personId: string; identityId: string };
  /** Measured scores against Amy's enrollment-only template. */
  const before: Record<string, number> = {};

  const round = (n: number) => Math.round(n * 10_000) / 10_000;
  const settings = async (body: object) => {
    const res = await t.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, {
      body,
      headers: admin.headers,
    });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  const identify = async (rel: string, headers: Record<string, string> = key) => {
    const res = await t.request('POST', `/v1/public/checkin/${admin.tenant.slug}/identify`, {
      body: { frame: await photo(rel) },
      headers,
    });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  /** The probe `rel` lands `above` over the accept line (refuse line well below). */
  const linesUnder = (score: number, above: number) =>
    settings({
      matchThreshold: round(score - above),
      stepUpThreshold: Math.max(0, round(score - above - 0.2)),
    });
  const refreshRows = (personId: string, kind = 'checkin') =>
    t.deps.db.prisma.faceTemplateRefresh.findMany({
      where: { personId, kind },
      orderBy: { createdAt: 'asc' },
    });
  const template = (personId: string) =>
    t.deps.db.prisma.faceTemplate.findFirstOrThrow({ where: { personId } });
  const audits = () =>
    t.deps.db.prisma.auditLog.findMany({
      where: { tenantId: admin.tenant.tenantId, action: 'face_template.refreshed' },
      orderBy: { createdAt: 'asc' },
    });
  const enroll = async (name: string, rel: string) => {
    const res = await t.request('POST', '/v1/onboarding', {
      body: { name, document: `DOC-${name}`, frame: await photo(rel) },
      headers: admin.headers,
    });
    expect(res.status, res.text).toBe(201);
    return { personId: res.body.person.id as string, identityId: res.body.identityId as string };
  };

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
    await settings({ requireLiveness: false, qrRepeatWindowMinutes: 0 });
    amy = await enroll('Amy', 'bbt/amy/amy2.png');
    for (const rel of ['bbt/amy/amy1.png', 'bbt/amy/amy3.png', 'bbt/amy/amy4.png', 'bbt/amy/amy5.png']) {
      before[rel] = (await identify(rel)).score;
    }
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await engine?.close();
  });

  it('is off by default: an accepted face well above the line keeps no refresh row and leaves the template as it was', async () => {
    const { refreshTemplates } = await settings({});
    expect(refreshTemplates).toBe(false);
    const kept = await template(amy.personId);
    await linesUnder(before['bbt/amy/amy4.png']!, 0.2);
    const res = await identify('bbt/amy/amy4.png');
    expect(res).toMatchObject({ outcome: 'success', person: { id: amy.personId } });
    expect(await t.deps.db.prisma.faceTemplateRefresh.count()).toBe(0);
    expect(await audits()).toHaveLength(0);
    const now = await template(amy.personId);
    expect(now.id).toBe(kept.id);
    expect(Buffer.from(now.embeddingEnc).equals(Buffer.from(kept.embeddingEnc))).toBe(true);
  });

  it('does not refresh on a face accepted just above the accept line (under the margin)', async () => {
    await settings({ refreshTemplates: true });
    const kept = await template(amy.personId);
    await linesUnder(before['bbt/amy/amy4.png']!, TEMPLATE_REFRESH.margin / 2);
    const res = await identify('bbt/amy/amy4.png');
    expect(res).toMatchObject({ outcome: 'success', person: { id: amy.personId } });
    expect(await refreshRows(amy.personId)).toHaveLength(0);
    expect((await template(amy.personId)).id).toBe(kept.id);
  });

  it('refreshes on a face accepted well above the line: one refresh row, an audit row without biometric data, and a third photo scores higher', async () => {
    await settings({ refreshTemplates: true });
    const kept = await template(amy.personId);
    await linesUnder(before['bbt/amy/amy1.png']!, TEMPLATE_REFRESH.margin + 0.05);
    const res = await identify('bbt/amy/amy1.png');
    expect(res).toMatchObject({ outcome: 'success', person: { id: amy.personId } });

    const rows = await refreshRows(amy.personId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ checkInId: res.checkInId, score: res.score });
    // Stored encrypted: not the raw 2,048 bytes of 512 float32.
    expect(rows[0]!.embeddingEnc.length).not.toBe(2048);
    const [audit] = await audits();
    expect(audit).toMatchObject({
      actorType: 'system',
      targetType: 'person',
      targetId: amy.personId,
      metadata: expect.objectContaining({ checkInId: res.checkInId, score: res.score }),
    });
    expect(JSON.stringify(audit!.metadata)).not.toMatch(/embedding|\[-?0\.\d+,/);
    expect((await template(amy.personId)).id).not.toBe(kept.id);

    // The next search uses the refreshed template (the in-memory gallery was updated).
    await settings({ refreshTemplates: false });
    const third = await identify('bbt/amy/amy3.png');
    expect(third.person.id).toBe(amy.personId);
    expect(third.score).toBeGreaterThan(before['bbt/amy/amy3.png']!);
  });

  it('keeps at most TEMPLATE_REFRESH.keep check-in embeddings: the third refresh drops the oldest', async () => {
    await settings({ refreshTemplates: true });
    const first = (await refreshRows(amy.personId))[0]!;
    for (const rel of ['bbt/amy/amy3.png', 'bbt/amy/amy5.png']) {
      // Against the refreshed template the score moves a little: the line leaves room for it.
      await linesUnder(before[rel]! - 0.1, TEMPLATE_REFRESH.margin + 0.05);
      const res = await identify(rel);
      expect(res).toMatchObject({ outcome: 'success', person: { id: amy.personId } });
    }
    const rows = await refreshRows(amy.personId);
    expect(rows).toHaveLength(TEMPLATE_REFRESH.keep);
    expect(rows.map((r) => r.id)).not.toContain(first.id);
    expect(await audits()).toHaveLength(3);
    expect(await refreshRows(amy.personId, 'enrollment')).toHaveLength(1);
  });

  it('never refreshes anyone on a stranger’s face', async () => {
    await settings({ refreshTemplates: true, matchThreshold: 0.57, stepUpThreshold: 0.35 });
    const rows = await t.deps.db.prisma.faceTemplateRefresh.findMany({ select: { id: true } });
    const res = await identify('bbt/penny/penny1.png');
    expect(res.outcome).toBe('denied');
    expect(await t.deps.db.prisma.faceTemplateRefresh.findMany({ select: { id: true } })).toEqual(rows);
    expect(await audits()).toHaveLength(3);
  });

  it('does not refresh on a check-in completed by a step-up', async () => {
    // Measured against the refreshed template, with refreshes off; then the lines around it.
    await settings({ refreshTemplates: false });
    const now = (await identify('bbt/amy/amy4.png')).score as number;
    await settings({
      refreshTemplates: true,
      stepUpThreshold: round(now - 0.1),
      matchThreshold: round(now + 0.05),
    });
    const kept = await template(amy.personId);
    const refreshes = (await audits()).length;
    const step = await identify('bbt/amy/amy4.png');
    expect(step.outcome).toBe('step_up_required');
    const qr = await t.request('GET', `/v1/checkin/identities/${amy.identityId}/qr-token`, {
      headers: admin.headers,
    });
    const done = await t.request(
      'POST',
      `/v1/public/checkin/${admin.tenant.slug}/step-up/${step.stepUp.attemptId}`,
      { body: { factor: 'qr', token: qr.body.token }, headers: key },
    );
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({ outcome: 'success', stepUp: { factor: 'qr' } });
    expect(await audits()).toHaveLength(refreshes);
    expect((await template(amy.personId)).id).toBe(kept.id);
  });

  it('erases the refresh rows when the person is anonymised, and when deleted', async () => {
    await settings({ refreshTemplates: false });
    const penny = await enroll('Penny', 'bbt/penny/penny1.png');
    const score = (await identify('bbt/penny/penny3.png')).score as number;
    await linesUnder(score, TEMPLATE_REFRESH.margin + 0.05);
    await settings({ refreshTemplates: true });
    expect((await identify('bbt/penny/penny3.png')).person?.id).toBe(penny.personId);
    // The sum of the enrollment photos and the check-in's embedding.
    expect(await t.deps.db.prisma.faceTemplateRefresh.count({ where: { personId: penny.personId } })).toBe(2);
    const anonymised = await t.request('DELETE', `/v1/persons/${penny.personId}/data`, {
      headers: admin.headers,
    });
    expect([200, 204], anonymised.text).toContain(anonymised.status);
    expect(await t.deps.db.prisma.faceTemplateRefresh.count({ where: { personId: penny.personId } })).toBe(0);

    expect(await t.deps.db.prisma.faceTemplateRefresh.count({ where: { personId: amy.personId } })).toBe(3);
    const deleted = await t.request('DELETE', `/v1/persons/${amy.personId}`, { headers: admin.headers });
    expect(deleted.status, deleted.text).toBe(204);
    expect(await t.deps.db.prisma.faceTemplateRefresh.count({ where: { personId: amy.personId } })).toBe(0);
  });
});
