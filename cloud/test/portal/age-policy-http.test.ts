// The tenant's age_policy enforced over HTTP: at registration (persons, import, public register) and at
// enrollment (birth date required, minors refused or enrolled with a guardian's consent, real face engine).
import type { FaceEngine } from '@portico/face-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { base64, cleanPhotos, HAS_MODELS, MODELS_SKIP_REASON, sharedFaceEngine } from '../support/faces.js';
import { integratorOf } from '../persons/support.js';

let app: TestApp;
let engine: FaceEngine | undefined;

beforeAll(async () => {
  const shared = HAS_MODELS ? await sharedFaceEngine(1) : undefined;
  engine = shared?.engine;
  app = await createTestApp(shared ? { face: shared.face } : {});
});
afterAll(async () => {
  await app?.close();
  await engine?.close();
});

// A birth date that makes a person `years` old today (the app runs on the real clock here).
function bornYearsAgo(years: number, plusDays = 0): string {
  const d = new Date();
  d.setUTCFullYear(d.getUTCFullYear() - years);
  d.setUTCDate(d.getUTCDate() + plusDays);
  return d.toISOString().slice(0, 10);
}

async function tenantWithPolicy(policy: { minimumAge: number | null; belowMinimum: string }) {
  const org = await integratorOf(app);
  const res = await app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
    headers: org.headers,
    // Registration open (with the address verified), so that the age rule is what answers.
    body: { age_policy: policy, selfRegistration: 'open_verified' },
  });
  expect(res.status, res.text).toBe(200);
  const slug = (await app.deps.db.prisma.tenant.findUniqueOrThrow({ where: { id: org.tenantId } })).slug;
  return { ...org, slug };
}

describe('age_policy deny', () => {
  it('refuses registering a person under the minimum age (400 age_below_minimum) by every route', async () => {
    const t = await tenantWithPolicy({ minimumAge: 18, belowMinimum: 'deny' });
    const minor = bornYearsAgo(18, 1);
    const created = await app.request('POST', '/v1/persons', {
      headers: t.keyHeaders,
      body: { name: 'Too Young', document: 'Y-1', birthDate: minor },
    });
    expect(created.status).toBe(400);
    expect(created.body).toMatchObject({ code: 'age_below_minimum', minimumAge: 18 });
    const upsert = await app.request('POST', '/v1/persons/upsert', {
      headers: t.keyHeaders,
      body: { name: 'Too Young', document: 'Y-2', externalId: 'y-2', birthDate: minor },
    });
    expect(upsert.body.code).toBe('age_below_minimum');
    const register = await app.request('POST', '/v1/public/onboarding/register', {
      body: {
        tenantSlug: t.slug,
        name: 'Too Young',
        document: 'Y-3',
        email: 'y3@example.com',
        birthDate: minor,
      },
    });
    expect(register.status).toBe(400);
    expect(register.body.code).toBe('age_below_minimum');
    expect(await app.deps.db.prisma.person.count({ where: { tenantId: t.tenantId } })).toBe(0);

    const imported = await app.request('POST', '/v1/persons/import', {
      headers: t.keyHeaders,
      body: {
        rows: [
          { name: 'Adult', document: 'A-1', birthDate: bornYearsAgo(18) },
          { name: 'Minor', document: 'M-1', birthDate: minor },
          { name: 'Unknown age', document: 'U-1' },
        ],
      },
    });
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.results.map((r: { status: string }) => r.status)).toEqual([
      'created',
      'failed',
      'created',
    ]);

    const adult = imported.body.results[0].personId;
    const patched = await app.request('PATCH', `/v1/persons/${adult}`, {
      headers: t.keyHeaders,
      body: { birthDate: minor },
    });
    expect(patched.body.code).toBe('age_below_minimum');
  });

  it('refuses enrolling a minor’s face, and a face whose age is unknown (400 birth_date_required)', async () => {
    const t = await tenantWithPolicy({ minimumAge: 18, belowMinimum: 'deny' });
    const unknown = await app.request('POST', '/v1/persons', {
      headers: t.keyHeaders,
      body: { name: 'No Birth Date', document: 'N-1' },
    });
    const enroll = await app.request('POST', '/v1/public/onboarding/enroll', {
      headers: t.keyHeaders,
      body: { personId: unknown.body.id, frame: 'AAAA' },
    });
    expect(enroll.status).toBe(400);
    expect(enroll.body.code).toBe('birth_date_required');
    const onboard = await app.request('POST', '/v1/onboarding', {
      headers: t.keyHeaders,
      body: { name: 'Young', document: 'Y-9', birthDate: bornYearsAgo(12), frame: 'AAAA' },
    });
    expect(onboard.status).toBe(400);
    expect(onboard.body.code).toBe('age_below_minimum');
  });
});

describe('age_policy require_guardian_consent', () => {
  it('registers a minor, refuses their enrollment without guardianConsent, and records the consent', async () => {
    const t = await tenantWithPolicy({ minimumAge: 16, belowMinimum: 'require_guardian_consent' });
    const minor = await app.request('POST', '/v1/persons', {
      headers: t.keyHeaders,
      body: { name: 'Kid', document: 'K-1', birthDate: bornYearsAgo(10) },
    });
    expect(minor.status, minor.text).toBe(201);
    const refused = await app.request('POST', '/v1/public/onboarding/enroll', {
      headers: t.keyHeaders,
      body: { personId: minor.body.id, frame: 'AAAA' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('guardian_consent_required');

    if (!HAS_MODELS) return console.warn(MODELS_SKIP_REASON);
    const [photo] = await cleanPhotos();
    const enrolled = await app.request('POST', '/v1/public/onboarding/enroll', {
      headers: t.keyHeaders,
      body: {
        personId: minor.body.id,
        frame: base64(photo!.bytes),
        guardianConsent: { relationship: 'parent', given: true },
      },
    });
    expect(enrolled.status, enrolled.text).toBe(200);
    const audit = await app.deps.db.prisma.auditLog.findFirstOrThrow({
      where: { targetId: minor.body.id, action: 'person.enrolled' },
    });
    expect(audit.metadata).toMatchObject({ guardianConsent: 'parent' });
  });
});
