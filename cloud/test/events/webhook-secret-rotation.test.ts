// Rotating a tenant's webhook secret with an overlap window: `pnpm portico tenant rotate-webhook-secret`.
import { spawn } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/infra/db/index.js';
import { emitEvent } from '../../src/modules/outbox/emit.js';
import { provisionTenant } from '../../src/modules/tenants/provision.js';
import { parseOverlap, rotateWebhookSecret } from '../../src/modules/webhooks/secret-rotation.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createScratchPostgresDatabase, testDatabaseUrl } from '../support/database.js';
import { TestClock } from '../support/identity.js';
import {
  startWebhookReceiver,
  type ReceivedWebhook,
  type WebhookReceiver,
} from '../support/webhook-receiver.js';

/** What the README tells a receiver to do: accept when any signature in the header matches its secret. */
function verifies(hit: ReceivedWebhook, secret: string): boolean {
  const expected = Buffer.from(createHmac('sha256', secret).update(hit.rawBody).digest('hex'));
  return String(hit.headers['x-service-signature'] ?? '')
    .split(',')
    .some((sig) => {
      const given = Buffer.from(sig.trim());
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

async function emitAndReceive(t: TestApp, receiver: WebhookReceiver, tenantId: string) {
  const before = receiver.received.length;
  await t.deps.db.prisma.$transaction((tx) =>
    emitEvent(tx, {
      tenantId,
      name: 'person.deleted',
      data: { personId: 'p-1', reason: 'deleted' },
      at: t.deps.clock.now(),
    }),
  );
  t.deps.outbox.notify();
  // Generous: the first delivery of a process just started on a loaded machine can take seconds.
  return (await receiver.waitFor(before + 1, 15_000))[before]!;
}

describe('webhook secret rotation', () => {
  const clock = new TestClock();
  let t: TestApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    t = await createTestApp({ clock });
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  async function tenant(slug: string) {
    const created = await provisionTenant(t.deps, { slug, name: slug, adminEmail: `${slug}@example.test` });
    await t.deps.db.prisma.tenant.update({
      where: { id: created.tenantId },
      data: { settings: { webhookUrl: receiver.url } },
    });
    return created;
  }

  it('signs with both secrets during the overlap, new first, and with the new one only after it', async () => {
    const { tenantId, webhookSecret: old } = await tenant('rotate-overlap');
    const rotated = await rotateWebhookSecret(t.deps, {
      slug: 'rotate-overlap',
      overlapMs: parseOverlap('24h'),
    });
    expect(rotated.webhookSecret).toMatch(/^whsec_/);
    expect(rotated.webhookSecret).not.toBe(old);
    expect(rotated.previousSecretValidUntil).toBe(
      new Date(clock.now().getTime() + 24 * 3_600_000).toISOString(),
    );

    const during = await emitAndReceive(t, receiver, tenantId);
    const [first, second] = String(during.headers['x-service-signature']).split(',');
    expect(first).toBe(createHmac('sha256', rotated.webhookSecret).update(during.rawBody).digest('hex'));
    expect(second).toBe(createHmac('sha256', old).update(during.rawBody).digest('hex'));
    expect(verifies(during, old)).toBe(true);
    expect(verifies(during, rotated.webhookSecret)).toBe(true);
    expect(verifies(during, 'whsec_other')).toBe(false);

    clock.advance(24 * 3_600_000 - 1);
    expect(verifies(await emitAndReceive(t, receiver, tenantId), old)).toBe(true);
    clock.advance(1);
    const after = await emitAndReceive(t, receiver, tenantId);
    expect(after.headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(verifies(after, rotated.webhookSecret)).toBe(true);
    expect(verifies(after, old)).toBe(false);
  });

  it('keeps the secrets encrypted at rest and audits the rotation', async () => {
    const { tenantId, webhookSecret: old } = await tenant('rotate-at-rest');
    const rotated = await rotateWebhookSecret(t.deps, { slug: 'rotate-at-rest', overlapMs: 60_000 });
    const row = await t.deps.db.prisma.tenant.findUniqueOrThrow({ where: { id: tenantId } });
    for (const stored of [row.webhookSecretEnc, row.webhookSecretPrevEnc!]) {
      const bytes = Buffer.from(stored);
      expect(bytes.includes(Buffer.from(old))).toBe(false);
      expect(bytes.includes(Buffer.from(rotated.webhookSecret))).toBe(false);
    }
    const audit = await t.deps.db.prisma.auditLog.findFirstOrThrow({
      where: { tenantId, action: 'tenant.webhook_secret.rotated' },
    });
    expect(audit).toMatchObject({ actorType: 'operator', targetId: tenantId });
    expect(JSON.stringify(audit.metadata)).not.toContain('whsec_');
  });

  it('with --overlap 0 the old secret stops signing at once', async () => {
    const { tenantId, webhookSecret: old } = await tenant('rotate-now');
    const rotated = await rotateWebhookSecret(t.deps, { slug: 'rotate-now', overlapMs: parseOverlap('0') });
    expect(rotated.previousSecretValidUntil).toBeNull();
    const hit = await emitAndReceive(t, receiver, tenantId);
    expect(verifies(hit, rotated.webhookSecret)).toBe(true);
    expect(verifies(hit, old)).toBe(false);
  });

  it('reads overlaps such as 90m, 24h, 7d and refuses others', () => {
    expect(parseOverlap('90m')).toBe(90 * 60_000);
    expect(parseOverlap('7d')).toBe(7 * 24 * 3_600_000);
    for (const bad of ['', '24', '-1h', '1w', '31d', '1.5h'])
      expect(() => parseOverlap(bad), bad).toThrow(/--overlap/);
  });
});

describe('pnpm portico tenant rotate-webhook-secret', () => {
  const cloudDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const key = Buffer.alloc(32, 7).toString('base64');

  function cli(args: string[], env: Record<string, string>) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: cloudDir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_ENCRYPTION_KEY: key, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    return new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
      child.on('exit', (code) => resolve({ code, out, err })),
    );
  }

  it('rotates with an overlap and prints the new secret once; deliveries then carry both signatures', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'portico-rotate-'));
    const scratch = testDatabaseUrl ? await createScratchPostgresDatabase() : undefined;
    const env = { DATA_DIR: dataDir, ...(scratch ? { DATABASE_URL: scratch.url } : {}) };
    try {
      const created = await cli(
        ['tenant', 'create', '--slug', 'acme', '--name', 'Acme', '--admin-email', 'ops@acme.test', '--json'],
        env,
      );
      expect(created.code, created.err).toBe(0);
      const old = JSON.parse(created.out).webhookSecret as string;

      const unknown = await cli(['tenant', 'rotate-webhook-secret', '--slug', 'nobody'], env);
      expect(unknown.code).toBe(2);
      expect(unknown.err).toContain('No tenant with slug "nobody"');
      const badOverlap = await cli(
        ['tenant', 'rotate-webhook-secret', '--slug', 'acme', '--overlap', 'soon'],
        env,
      );
      expect(badOverlap.code).toBe(2);
      expect(badOverlap.err).toMatch(/^portico: --overlap/);

      const startedAt = Date.now();
      const rotated = await cli(
        ['tenant', 'rotate-webhook-secret', '--slug', 'acme', '--overlap', '2h', '--json'],
        env,
      );
      expect(rotated.code, rotated.err).toBe(0);
      const r = JSON.parse(rotated.out);
      expect(Object.keys(r).sort()).toEqual([
        'previousSecretValidUntil',
        'slug',
        'tenantId',
        'webhookSecret',
      ]);
      expect(r.webhookSecret).toMatch(/^whsec_/);
      expect(r.webhookSecret).not.toBe(old);
      const until = Date.parse(r.previousSecretValidUntil);
      expect(until).toBeGreaterThanOrEqual(startedAt + 2 * 3_600_000);
      expect(until).toBeLessThan(Date.now() + 2 * 3_600_000);

      // The server on the same data signs with both.
      const db = await openDatabase(scratch ? { databaseUrl: scratch.url } : { dataDir });
      const receiver = await startWebhookReceiver();
      const t = await createTestApp({ database: db, env: { DATA_ENCRYPTION_KEY: key } });
      try {
        await db.prisma.tenant.update({
          where: { id: r.tenantId },
          data: { settings: { webhookUrl: receiver.url } },
        });
        const hit = await emitAndReceive(t, receiver, r.tenantId);
        expect(verifies(hit, r.webhookSecret)).toBe(true);
        expect(verifies(hit, old)).toBe(true);
      } finally {
        await receiver.close();
        await t.close();
        await db.close();
      }
    } finally {
      await scratch?.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
