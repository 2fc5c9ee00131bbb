// The caller's own tenant and its settings. Only overrides are stored (Tenant.settings); reads merge
// them over TENANT_SETTINGS_DEFAULTS (settings.ts), so a new default reaches every tenant that did not override it.
import type { TenantSettings, TenantSettingsPatch, Tenant as TenantWire } from '@portico/contract';
import type { Prisma, Tenant } from '../../generated/prisma/client.js';
import { invalidFields, notFound } from '../../http/errors.js';
import type { Database } from '../../infra/db/index.js';
import { recordAudit, type AuditEntry } from '../audit/record.js';
import { tenantSettingsOf } from './settings.js';
import { checkWebhookUrl } from './webhook-url.js';

type Db = Pick<Database, 'prisma'>;

/** The effective settings of a tenant (defaults merged in). For every module that needs a threshold. */
export async function getTenantSettings(
  db: { prisma: Pick<Db['prisma'], 'tenant'> },
  tenantId: string,
): Promise<TenantSettings> {
  const tenant = await db.prisma.tenant.findUnique({ where: { id: tenantId }, select: { settings: true } });
  if (!tenant) throw notFound('Tenant');
  return tenantSettingsOf(tenant.settings);
}

/** The active tenant of a public path, with its effective settings (one read). */
export async function tenantBySlug(db: Db, slug: string) {
  const tenant = await db.prisma.tenant.findUnique({
    where: { slug },
    select: { id: true, status: true, settings: true, faceModelId: true },
  });
  if (!tenant || tenant.status !== 'active') throw notFound('Tenant');
  return { id: tenant.id, settings: tenantSettingsOf(tenant.settings), faceModelId: tenant.faceModelId };
}

export interface TenantContext {
  actor: { tenantId: string; userId?: string; kind: AuditEntry['actorType'] };
  ip: string | null;
  requestId: string | null;
}

export function createTenantService(deps: { db: Db; allowPrivateWebhookUrls: boolean }) {
  const { prisma } = deps.db;

  /** Another tenant's id is 404, exactly like an id that does not exist. */
  function ownId(ctx: TenantContext, id: string): void {
    if (id !== ctx.actor.tenantId) throw notFound('Tenant');
  }

  async function ownTenant(ctx: TenantContext, id: string): Promise<Tenant> {
    ownId(ctx, id);
    const tenant = await prisma.tenant.findUnique({ where: { id } });
    if (!tenant) throw notFound('Tenant');
    return tenant;
  }

  const audit = (ctx: TenantContext, action: string, metadata: Prisma.InputJsonObject) => ({
    tenantId: ctx.actor.tenantId,
    actorType: ctx.actor.kind,
    actorId: ctx.actor.userId ?? null,
    action,
    targetType: 'tenant',
    targetId: ctx.actor.tenantId,
    metadata,
    ip: ctx.ip,
    requestId: ctx.requestId,
  });

  return {
    async get(ctx: TenantContext, id: string): Promise<TenantWire> {
      return toTenantWire(await ownTenant(ctx, id));
    },

    async update(ctx: TenantContext, id: string, patch: { name?: string | undefined }): Promise<TenantWire> {
      ownId(ctx, id);
      return prisma.$transaction(async (tx) => {
        const updated = await tx.tenant.update({
          where: { id },
          data: { ...(patch.name ? { name: patch.name } : {}) },
        });
        await recordAudit(tx, audit(ctx, 'tenant.updated', { fields: Object.keys(patch) }));
        return toTenantWire(updated);
      });
    },

    async getSettings(ctx: TenantContext, id: string): Promise<TenantSettings> {
      return tenantSettingsOf((await ownTenant(ctx, id)).settings);
    },

    async updateSettings(
      ctx: TenantContext,
      id: string,
      patch: TenantSettingsPatch,
    ): Promise<TenantSettings> {
      if (typeof patch.webhookUrl === 'string') {
        const check = checkWebhookUrl(patch.webhookUrl, { allowPrivate: deps.allowPrivateWebhookUrls });
        if (!check.ok) throw invalidFields([{ path: 'body.webhookUrl', message: check.reason }]);
      }
      ownId(ctx, id);
      return prisma.$transaction(async (tx) => {
        // Read inside the transaction, locked, so two concurrent patches of different fields both land.
        const rows = await tx.$queryRaw<{ settings: Prisma.JsonValue }[]>`
          SELECT settings FROM tenants WHERE id = ${id} FOR UPDATE`;
        if (!rows[0]) throw notFound('Tenant');
        const stored = (rows[0].settings ?? {}) as Record<string, unknown>;
        const next: Record<string, unknown> = { ...stored };
        for (const [key, value] of Object.entries(patch)) {
          if (value === undefined) continue;
          next[key] =
            key === 'age_policy'
              ? { ...((stored.age_policy as object | undefined) ?? {}), ...(value as object) }
              : value;
        }
        const effective = tenantSettingsOf(next as Prisma.JsonValue);
        await tx.tenant.update({ where: { id }, data: { settings: next as Prisma.InputJsonObject } });
        // Changed field names and their new values: settings hold no secrets.
        await recordAudit(
          tx,
          audit(ctx, 'tenant.settings.updated', { changed: patch as unknown as Prisma.InputJsonObject }),
        );
        return effective;
      });
    },
  };
}

export function toTenantWire(t: Tenant): TenantWire {
  return {
    id: t.id,
    slug: t.slug,
    name: t.name,
    status: t.status as TenantWire['status'],
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}
