// A tenant's sandbox (contract 9): a tenant of its own, linked to its live tenant (Tenant.sandboxOfId).
// The authentication middleware turns a `pk_test_` key, or an admin session sending
// `x-portico-environment: sandbox`, into an actor of the sandbox, so every module is isolated by the
// tenant scoping it already has. Made on first use with a copy of the live tenant's settings (not its
// data) and a webhook secret of its own; a reset erases its data and keeps its id, settings and secret.
import type { Sandbox, SandboxReset } from '@portico/contract';
import type { Prisma } from '../../generated/prisma/client.js';
import { notFound } from '../../http/errors.js';
import type { RequestMeta } from '../../http/request-context.js';
import type { Clock } from '../../infra/clock.js';
import { randomToken, type Cipher } from '../../infra/crypto.js';
import { newId, type Database } from '../../infra/db/index.js';
import type { ImageStore } from '../../infra/image-store.js';
import type { FaceGallery } from '../faces/gallery.js';
import { recordAudit } from '../audit/record.js';
import { webhookSecretContext } from '../tenants/provision.js';

/** A sandbox's slug in the table: live slugs cannot hold a dot, so it never collides with one. */
const sandboxSlug = (liveSlug: string) => `${liveSlug}.sandbox`;

export interface SandboxCaller {
  liveTenantId: string;
  kind: 'adminSession';
  userId: string;
}

export function createSandboxService(deps: {
  db: Database;
  cipher: Cipher;
  clock: Clock;
  images: ImageStore;
  gallery: FaceGallery;
}) {
  const { prisma } = deps.db;

  /** The sandbox tenant of a live tenant, made on first use (concurrent first uses make one). */
  async function tenantIdOf(liveTenantId: string): Promise<string> {
    const existing = await prisma.tenant.findUnique({
      where: { sandboxOfId: liveTenantId },
      select: { id: true },
    });
    if (existing) return existing.id;
    const live = await prisma.tenant.findUnique({ where: { id: liveTenantId } });
    if (!live || live.sandboxOfId) throw notFound('Tenant');
    const id = newId();
    // ON CONFLICT DO NOTHING: of two first uses racing, one row is written and both read it back.
    await prisma.tenant.createMany({
      data: [
        {
          id,
          slug: sandboxSlug(live.slug),
          name: `${live.name} (sandbox)`,
          settings: live.settings as Prisma.InputJsonValue,
          webhookSecretEnc: deps.cipher.encryptString(randomToken('whsec_'), webhookSecretContext(id)),
          sandboxOfId: live.id,
        },
      ],
      skipDuplicates: true,
    });
    const made = await prisma.tenant.findUniqueOrThrow({
      where: { sandboxOfId: liveTenantId },
      select: { id: true },
    });
    return made.id;
  }

  return {
    tenantIdOf,

    /** The sandbox with its webhook secret in clear: each reading is audited in the live tenant. */
    async describe(caller: SandboxCaller, meta: RequestMeta): Promise<Sandbox> {
      const { liveTenantId } = caller;
      const id = await tenantIdOf(liveTenantId);
      const row = await prisma.tenant.findUniqueOrThrow({ where: { id } });
      await recordAudit(prisma, {
        tenantId: liveTenantId,
        actorType: caller.kind,
        actorId: caller.userId,
        action: 'sandbox.webhook_secret.read',
        targetType: 'tenant',
        targetId: id,
        ip: meta.ip,
        requestId: meta.requestId,
      });
      return {
        tenantId: row.id,
        liveTenantId,
        createdAt: row.createdAt.toISOString(),
        webhookSecret: deps.cipher.decryptString(row.webhookSecretEnc, webhookSecretContext(row.id)),
      };
    },

    /**
     * Erases everything of the sandbox (persons, templates, images, events, guests, check-ins, devices,
     * tokens, outbox and deliveries, audit): the tenant row is deleted, so every table's cascade does it,
     * and written again in the same transaction with the same id, settings and webhook secret.
     */
    async reset(caller: SandboxCaller, meta: RequestMeta): Promise<SandboxReset> {
      const id = await tenantIdOf(caller.liveTenantId);
      const now = deps.clock.now();
      const { erased, storageKeys } = await prisma.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${id} FOR UPDATE`;
        const row = await tx.tenant.findUniqueOrThrow({ where: { id } });
        const where = { tenantId: id };
        const images = await tx.biometricImage.findMany({
          where: { tenantId: id, erasedAt: null },
          select: { storageKey: true },
        });
        const counts = {
          persons: await tx.person.count({ where }),
          events: await tx.event.count({ where }),
          guests: await tx.guest.count({ where: { tenantId: id, deletedAt: null } }),
          checkIns: await tx.checkIn.count({ where }),
          images: images.length,
          devices: await tx.device.count({ where }),
        };
        await tx.tenant.delete({ where: { id } });
        await tx.tenant.create({
          data: {
            id,
            slug: row.slug,
            name: row.name,
            status: row.status,
            settings: row.settings as Prisma.InputJsonValue,
            webhookSecretEnc: row.webhookSecretEnc,
            webhookSecretPrevEnc: row.webhookSecretPrevEnc,
            webhookSecretPrevUntil: row.webhookSecretPrevUntil,
            sandboxOfId: row.sandboxOfId,
            createdAt: row.createdAt,
          },
        });
        await recordAudit(tx, {
          tenantId: caller.liveTenantId,
          actorType: caller.kind,
          actorId: caller.userId,
          action: 'sandbox.reset',
          targetType: 'tenant',
          targetId: id,
          metadata: counts,
          ip: meta.ip,
          requestId: meta.requestId,
        });
        return { erased: counts, storageKeys: images.map((i) => i.storageKey) };
      });
      // The rows are gone: now their files (erasure is idempotent; a failure leaves only ciphertext).
      for (const key of storageKeys) await deps.images.erase(key).catch(() => undefined);
      deps.gallery.invalidate(id);
      return { tenantId: id, resetAt: now.toISOString(), erased };
    },
  };
}

export type SandboxService = ReturnType<typeof createSandboxService>;
