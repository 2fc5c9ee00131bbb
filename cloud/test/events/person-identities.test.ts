// Every person has an identity whatever path created it, so an integrator can get a QR token for it.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import { defaultMigrationsDir } from '../../src/infra/db/migrate.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { integratorOf, registerInvited } from '../persons/support.js';

describe('identities of persons', () => {
  let t: TestApp;
  let org: Awaited<ReturnType<typeof integratorOf>>;
  beforeAll(async () => {
    t = await createTestApp();
    org = await integratorOf(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const identitiesOf = (personId: string) =>
    t.deps.db.prisma.identity.findMany({ where: { personId, status: 'active' } });

  it('issues a QR token for a person created with POST /v1/persons and checks them in with it', async () => {
    const created = await t.request('POST', '/v1/persons', {
      headers: org.keyHeaders,
      body: { name: 'Rita Lobo', document: 'ID-1001' },
    });
    expect(created.status).toBe(201);
    expect(created.body.identityId).toEqual(expect.any(String));
    const [identity] = await identitiesOf(created.body.id);
    expect(identity?.id).toBe(created.body.identityId);

    const qr = await t.request('GET', `/v1/checkin/identities/${created.body.identityId}/qr-token`, {
      headers: org.keyHeaders,
    });
    expect(qr.status).toBe(201);
    const scan = await t.request('GET', `/v1/public/checkin/qr/${qr.body.token}`);
    expect(scan.status).toBe(200);
    expect(scan.body).toMatchObject({ outcome: 'success', person: { id: created.body.id } });
  });

  it('gives persons made by upsert, import and public registration one identity each', async () => {
    const upserted = await t.request('POST', '/v1/persons/upsert', {
      headers: org.keyHeaders,
      body: { externalId: 'hr-77', name: 'Caio Prado', document: 'ID-77' },
    });
    expect(upserted.status).toBe(201);
    expect(upserted.body.person.identityId).toEqual(expect.any(String));
    const again = await t.request('POST', '/v1/persons/upsert', {
      headers: org.keyHeaders,
      body: { externalId: 'hr-77', name: 'Caio Prado Jr', document: 'ID-77' },
    });
    expect(again.status).toBe(200);
    expect(again.body.person.identityId).toBe(upserted.body.person.identityId);
    expect(await identitiesOf(upserted.body.person.id)).toHaveLength(1);

    const imported = await t.request('POST', '/v1/persons/import', {
      headers: org.keyHeaders,
      body: {
        rows: [
          { name: 'Import One', document: 'IMP-1' },
          { name: 'Import Two', document: 'IMP-2', externalId: 'imp-2' },
          { name: '' },
        ],
      },
    });
    expect(imported.status).toBe(200);
    expect(imported.body).toMatchObject({ created: 2, failed: 1 });
    for (const row of imported.body.results.filter((r: { personId?: string }) => r.personId)) {
      const person = await t.request('GET', `/v1/persons/${row.personId}`, { headers: org.keyHeaders });
      expect(person.body.identityId).toEqual(expect.any(String));
      expect(await identitiesOf(row.personId)).toHaveLength(1);
    }

    const registered = await registerInvited(t, org, {
      name: 'Self Service',
      document: 'SELF-1',
      email: 'self@example.com',
    });
    expect(registered.status).toBe(201);
    expect(await identitiesOf(registered.body.personId)).toHaveLength(1);

    const list = await t.request('GET', '/v1/persons?limit=200', { headers: org.keyHeaders });
    expect(list.body.items.length).toBeGreaterThanOrEqual(5);
    for (const p of list.body.items) expect(p.identityId).toEqual(expect.any(String));
  });

  it('answers identityId null once the person is anonymised', async () => {
    const created = await t.request('POST', '/v1/persons', {
      headers: org.keyHeaders,
      body: { name: 'Gone Soon', document: 'ID-GONE' },
    });
    expect(
      (await t.request('DELETE', `/v1/persons/${created.body.id}/data`, { headers: org.keyHeaders })).status,
    ).toBe(204);
    const read = await t.request('GET', `/v1/persons/${created.body.id}`, { headers: org.keyHeaders });
    expect(read.body.identityId).toBeNull();
  });

  it('gives persons stored before identities existed one identity through the migration backfill', async () => {
    const personId = newId();
    await t.deps.db.prisma.person.create({
      data: { id: personId, tenantId: org.tenantId, name: 'Old Row', document: 'OLD-1' },
    });
    const dir = (await readdir(defaultMigrationsDir)).find((d) => d.endsWith('_events_guests_identities'))!;
    const sql = await readFile(path.join(defaultMigrationsDir, dir, 'migration.sql'), 'utf8');
    const backfill = sql.slice(sql.indexOf('INSERT INTO "identities"'));
    await t.deps.db.prisma.$executeRawUnsafe(backfill);
    await t.deps.db.prisma.$executeRawUnsafe(backfill);
    expect(await identitiesOf(personId)).toHaveLength(1);
    const read = await t.request('GET', `/v1/persons/${personId}`, { headers: org.keyHeaders });
    expect(read.body.identityId).toBe((await identitiesOf(personId))[0]!.id);
  });
});
