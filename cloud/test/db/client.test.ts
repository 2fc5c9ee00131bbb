import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, type Database, type Tx } from '../../src/infra/db/index.js';
import { createTestDatabase, testBackend } from '../support/database.js';

let db: Database;
// The first call of a process builds the migrated PGlite snapshot (initdb in WASM): slow on a busy runner.
beforeAll(async () => {
  const started = Date.now();
  db = await createTestDatabase();
  console.log(`createTestDatabase (${testBackend}): ${Date.now() - started} ms`);
}, 180_000);
afterAll(() => db?.close());

async function tenant(tx: Tx = db.prisma) {
  return tx.tenant.create({
    data: { id: newId(), slug: `t-${newId()}`, name: 'Acme', webhookSecretEnc: Buffer.from([1, 2, 3]) },
  });
}

describe(`generated client on ${testBackend}`, () => {
  it('opens the expected backend and answers ping', async () => {
    expect(db.kind).toBe(testBackend);
    await db.ping();
  });

  it('round-trips a tenant and a person with every column kind', async () => {
    const t = await tenant();
    const person = await db.prisma.person.create({
      data: {
        id: newId(),
        tenantId: t.id,
        externalId: 'crm-1',
        name: 'Ana Souza',
        document: '123.456.789-00',
        birthDate: new Date('1990-05-06T00:00:00.000Z'),
      },
    });
    const read = await db.prisma.person.findUniqueOrThrow({
      where: { id: person.id },
      include: { tenant: true },
    });
    expect(read).toMatchObject({
      name: 'Ana Souza',
      document: '123.456.789-00',
      externalId: 'crm-1',
      anonymisedAt: null,
    });
    expect(read.birthDate?.toISOString()).toBe('1990-05-06T00:00:00.000Z');
    expect(read.createdAt).toBeInstanceOf(Date);
    expect(Buffer.from(read.tenant.webhookSecretEnc)).toEqual(Buffer.from([1, 2, 3]));
    expect(read.tenant.settings).toEqual({});

    const user = await db.prisma.user.create({
      data: {
        id: newId(),
        tenantId: t.id,
        email: `${newId()}@example.com`,
        passwordHash: 'x',
        role: 'owner',
        mfaLastStep: 58_000_000_123n,
      },
    });
    expect((await db.prisma.user.findUniqueOrThrow({ where: { id: user.id } })).mfaLastStep).toBe(
      58_000_000_123n,
    );

    const event = await db.prisma.event.create({
      data: {
        id: newId(),
        tenantId: t.id,
        name: 'Launch',
        publicToken: newId(),
        checkinMethods: ['facial', 'qr'],
        branding: { color: '#123456' },
      },
    });
    expect(await db.prisma.event.findUniqueOrThrow({ where: { id: event.id } })).toMatchObject({
      checkinMethods: ['facial', 'qr'],
      branding: { color: '#123456' },
      status: 'draft',
    });
  });

  it('enforces unique keys per tenant', async () => {
    const t = await tenant();
    const data = { tenantId: t.id, externalId: 'dup', name: 'A', document: '1' };
    await db.prisma.person.create({ data: { id: newId(), ...data } });
    await expect(db.prisma.person.create({ data: { id: newId(), ...data } })).rejects.toMatchObject({
      code: 'P2002',
    });
    // The same external id in another tenant is fine.
    const other = await tenant();
    await db.prisma.person.create({ data: { id: newId(), ...data, tenantId: other.id } });
  });

  it('commits and rolls back interactive transactions', async () => {
    const t = await tenant();
    await db.prisma.$transaction(async (tx) => {
      await tx.person.create({ data: { id: newId(), tenantId: t.id, name: 'In', document: '1' } });
    });
    await expect(
      db.prisma.$transaction(async (tx) => {
        await tx.person.create({ data: { id: newId(), tenantId: t.id, name: 'Out', document: '2' } });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    const names = (await db.prisma.person.findMany({ where: { tenantId: t.id } })).map((p) => p.name);
    expect(names).toEqual(['In']);
  });

  it('keeps check-in history when a person is deleted, and a tenant delete removes everything', async () => {
    const t = await tenant();
    const person = await db.prisma.person.create({
      data: { id: newId(), tenantId: t.id, name: 'P', document: '1' },
    });
    await db.prisma.faceTemplate.create({
      data: {
        id: newId(),
        tenantId: t.id,
        personId: person.id,
        modelId: 'fr_feature@1',
        embeddingEnc: Buffer.alloc(16),
        quality: 0.9,
      },
    });
    const checkIn = await db.prisma.checkIn.create({
      data: {
        id: newId(),
        tenantId: t.id,
        personId: person.id,
        method: 'facial',
        outcome: 'success',
        occurredAt: new Date(),
      },
    });

    await db.prisma.person.delete({ where: { id: person.id } });
    expect(await db.prisma.faceTemplate.count({ where: { tenantId: t.id } })).toBe(0);
    expect(await db.prisma.checkIn.findUniqueOrThrow({ where: { id: checkIn.id } })).toMatchObject({
      personId: null,
    });

    await db.prisma.tenant.delete({ where: { id: t.id } });
    expect(await db.prisma.checkIn.count({ where: { tenantId: t.id } })).toBe(0);
  });

  it('claims work with FOR UPDATE SKIP LOCKED', async () => {
    const kind = `test-${newId()}`;
    await db.prisma.job.createMany({ data: [1, 2, 3].map(() => ({ id: newId(), kind })) });
    const claimed = await db.prisma.$queryRaw<{ id: string }[]>`
      UPDATE jobs SET status = 'running', locked_until = now() + interval '1 minute', attempts = attempts + 1
       WHERE id IN (SELECT id FROM jobs WHERE kind = ${kind} AND status = 'pending' AND run_at <= now()
                    ORDER BY run_at LIMIT 2 FOR UPDATE SKIP LOCKED)
      RETURNING id`;
    expect(claimed).toHaveLength(2);
    expect(await db.prisma.job.count({ where: { kind, status: 'pending' } })).toBe(1);
  });
});

describe('newId', () => {
  it('makes UUIDv7 strings that sort by creation time, also within one millisecond', () => {
    const before = Date.now();
    const ids = Array.from({ length: 5000 }, () => newId());
    const after = Date.now();
    for (const id of ids.slice(0, 3))
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    const ms = parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after + 2);
  });
});
