// The caller's own tenant and its settings. Only overrides are stored (Tenant.settings); reads merge
// them over TENANT_SETTINGS_DEFAULTS (settings.ts), so a new default reaches every tenant that did not override it.
import type { TenantSettings, TenantSettingsPatch, Tenant as TenantWire } from '@portico/contract';
import type { Prisma, Tenant } from '../../generated/prisma/client.js';
import type { Actor } from '../../http/actor.js';
import { AppError, invalidFields, notFound } from '../../http/errors.js';
import type { Database } from '../../infra/db/index.js';
import { recordAudit, type AuditEntry } from '../audit/record.js';
import { tenantSettingsOf } from './settings.js';
import { checkWebhookUrl } from './webhook-url.js';
import type { AuditAction } from '@portico/contract';

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

/**
 * The active tenant a public path's slug names, with its effective settings (one read): the live
 * tenant; for a caller of that tenant's sandbox (a `pk_test_` key, a sandbox's device), the sandbox, so
 * the same paths serve both. Without a sandbox credential a slug reaches the live tenant only.
 */
export async function tenantBySlug(db: Db, slug: string, callerTenantId?: string) {
  const rows = await db.prisma.tenant.findMany({
    where: {
      OR: [
        { slug, sandboxOfId: null },
        ...(callerTenantId ? [{ id: callerTenantId, sandboxOf: { is: { slug } } }] : []),
      ],
    },
    select: { id: true, status: true, settings: true, faceModelId: true, sandboxOfId: true },
  });
  const tenant = rows.find((t) => t.sandboxOfId !== null) ?? rows[0];
  if (!tenant || tenant.status !== 'active') throw notFound('Tenant');
  return { id: tenant.id, settings: tenantSettingsOf(tenant.settings), faceModelId: tenant.faceModelId };
}

/**
 * The tenant a public path's slug names for its caller: for an API key, its own tenant as read with the
 * key (no second read; any other slug is 404); for other callers `tenantBySlug`, a credential's sandbox
 * included.
 */
export async function tenantForCaller(db: Db, slug: string, actor: Actor) {
  if (actor.kind === 'apiKey') {
    if (actor.tenant.publicSlug !== slug) throw notFound('Tenant');
    return { id: actor.tenantId, settings: actor.tenant.settings, faceModelId: actor.tenant.faceModelId };
  }
  return tenantBySlug(db, slug, 'tenantId' in actor ? actor.tenantId : undefined);
}

export interface TenantContext {
  /** `tenantId` is the tenant acted on (a sandbox for a sandbox call), `liveTenantId` the credential's. */
  actor: { tenantId: string; liveTenantId: string; userId?: string; kind: AuditEntry['actorType'] };
  ip: string | null;
  requestId: string | null;
}

export function createTenantService(deps: { db: Db; allowPrivateWebhookUrls: boolean }) {
  const { prisma } = deps.db;

  /**
   * The tenant a path's id names for the caller: its own. A sandbox caller naming its live tenant gets
   * its sandbox (the same paths serve both). Another tenant's id is 404, exactly like an id that does
   * not exist.
   */
  function ownId(ctx: TenantContext, id: string): string {
    if (id !== ctx.actor.tenantId && id !== ctx.actor.liveTenantId) throw notFound('Tenant');
    return ctx.actor.tenantId;
  }

  async function ownTenant(ctx: TenantContext, id: string) {
    const tenant = await prisma.tenant.findUnique({ where: { id: ownId(ctx, id) }, include: LIVE_SLUG });
    if (!tenant) throw notFound('Tenant');
    return tenant;
  }

  const audit = (ctx: TenantContext, action: AuditAction, metadata: Prisma.InputJsonObject) => ({
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
      const tenantId = ownId(ctx, id);
      return prisma.$transaction(async (tx) => {
        const updated = await tx.tenant.update({
          where: { id: tenantId },
          data: { ...(patch.name ? { name: patch.name } : {}) },
          include: LIVE_SLUG,
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
      const tenantId = ownId(ctx, id);
      // Requiring MFA of admins is turned on by someone who has it: else their own next call would be
      // held at the MFA setup (modules/auth), which is never what they meant.
      if (patch.requireMfaForAdmins === true && ctx.actor.kind === 'adminSession' && ctx.actor.userId) {
        const me = await prisma.user.findUnique({
          where: { id: ctx.actor.userId },
          select: { mfaEnabled: true },
        });
        if (!me?.mfaEnabled) {
          throw new AppError(
            409,
            'conflict',
            'Turn on your own MFA before requiring it of owners and admins',
          );
        }
      }
      return prisma.$transaction(async (tx) => {
        // Read inside the transaction, locked, so two concurrent patches of different fields both land.
        const rows = await tx.$queryRaw<{ settings: Prisma.JsonValue }[]>`
          SELECT settings FROM tenants WHERE id = ${tenantId} FOR UPDATE`;
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
        // The refuse line may not pass the accept line (equal: no step-up). Checked when either moves, so
        // a later change of the defaults never blocks an unrelated patch.
        const lines = patch.stepUpThreshold !== undefined || patch.matchThreshold !== undefined;
        if (lines && effective.stepUpThreshold > effective.matchThreshold) {
          throw invalidFields([
            {
              path: patch.stepUpThreshold !== undefined ? 'body.stepUpThreshold' : 'body.matchThreshold',
              message: `stepUpThreshold (${effective.stepUpThreshold}) must be at most matchThreshold (${effective.matchThreshold})`,
            },
          ]);
        }
        await tx.tenant.update({
          where: { id: tenantId },
          data: { settings: next as Prisma.InputJsonObject },
        });
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

/** A sandbox answers its live tenant's slug: the one its public paths take. */
const LIVE_SLUG = { sandboxOf: { select: { slug: true } } } as const;

export function toTenantWire(t: Tenant & { sandboxOf: { slug: string } | null }): TenantWire {
  return {
    id: t.id,
    slug: t.sandboxOf?.slug ?? t.slug,
    name: t.name,
    status: t.status as TenantWire['status'],
    environment: t.sandboxOfId ? 'sandbox' : 'live',
    sandboxOf: t.sandboxOfId,
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}
