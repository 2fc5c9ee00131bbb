// Applications and their API keys, always within the admin's own tenant (another tenant's id is 404).
import { Id, z, type ApiKey as ApiKeyWire, type ApiKeyWithSecret, type ApiScope } from '@portico/contract';
import type { Prisma } from '../../generated/prisma/client.js';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { AppError, notFound } from '../../http/errors.js';
import type { Clock } from '../../infra/clock.js';
import { newId, type Database, type Tx } from '../../infra/db/index.js';
import { recordAudit } from '../audit/record.js';
import { issueApiKey, scopesOf, toApiKeyWire, toApplicationWire, type Environment } from './keys.js';
import type { AuditAction } from '@portico/contract';

export interface AdminContext {
  tenantId: string;
  userId: string;
  ip: string | null;
  requestId: string | null;
}

// Applications are listed by id (UUIDv7: creation order).
const ApplicationCursor = z.tuple([Id]);

export function createApplicationService(deps: { db: Pick<Database, 'prisma'>; clock: Clock }) {
  const { prisma } = deps.db;

  const audit = (
    tx: Tx,
    ctx: AdminContext,
    action: AuditAction,
    targetType: string,
    targetId: string,
    metadata: Prisma.InputJsonObject = {},
  ) =>
    recordAudit(tx, {
      tenantId: ctx.tenantId,
      actorType: 'adminSession',
      actorId: ctx.userId,
      action,
      targetType,
      targetId,
      metadata,
      ip: ctx.ip,
      requestId: ctx.requestId,
    });

  async function findApp(tx: Pick<Tx, 'application'>, ctx: AdminContext, id: string) {
    const app = await tx.application.findFirst({ where: { id, tenantId: ctx.tenantId, deletedAt: null } });
    if (!app) throw notFound('Application');
    return app;
  }

  const withSecret = (
    issued: Awaited<ReturnType<typeof issueApiKey>>,
    environment: string,
  ): ApiKeyWithSecret => ({
    ...toApiKeyWire(issued.row, environment),
    key: issued.key,
  });

  return {
    async list(ctx: AdminContext, page: { limit: number; cursor?: string | undefined }) {
      const after = page.cursor ? decodeCursor(page.cursor, ApplicationCursor)[0] : undefined;
      const rows = await prisma.application.findMany({
        where: {
          tenantId: ctx.tenantId,
          deletedAt: null,
          ...(after ? { id: { gt: after } } : {}),
        },
        orderBy: { id: 'asc' },
        take: page.limit + 1,
      });
      const items = rows.slice(0, page.limit).map(toApplicationWire);
      return {
        items,
        nextCursor: rows.length > page.limit ? encodeCursor([items[items.length - 1]!.id]) : null,
      };
    },

    async create(
      ctx: AdminContext,
      input: { name: string; environment: Environment; scopes?: ApiScope[] | undefined },
    ) {
      return prisma.$transaction(async (tx) => {
        const app = await tx.application.create({
          data: { id: newId(), tenantId: ctx.tenantId, name: input.name, environment: input.environment },
        });
        const issued = await issueApiKey(tx, app, input.scopes);
        await audit(tx, ctx, 'application.created', 'application', app.id, {
          name: app.name,
          environment: app.environment,
        });
        await audit(tx, ctx, 'api_key.created', 'api_key', issued.row.id, {
          applicationId: app.id,
          prefix: issued.row.prefix,
          scopes: issued.row.scopes,
        });
        return { application: toApplicationWire(app), apiKey: withSecret(issued, app.environment) };
      });
    },

    /** Soft delete: the row stays for the audit trail, every key of it is revoked now. */
    async remove(ctx: AdminContext, id: string): Promise<void> {
      const now = deps.clock.now();
      await prisma.$transaction(async (tx) => {
        const app = await findApp(tx, ctx, id);
        await tx.application.update({ where: { id: app.id }, data: { deletedAt: now } });
        const revoked = await tx.apiKey.updateMany({
          where: { applicationId: app.id, status: 'active' },
          data: { status: 'revoked', revokedAt: now },
        });
        await audit(tx, ctx, 'application.deleted', 'application', app.id, { revokedKeys: revoked.count });
      });
    },

    async listKeys(ctx: AdminContext, id: string): Promise<{ items: ApiKeyWire[] }> {
      const app = await findApp(prisma, ctx, id);
      const rows = await prisma.apiKey.findMany({ where: { applicationId: app.id }, orderBy: { id: 'asc' } });
      return { items: rows.map((r) => toApiKeyWire(r, app.environment)) };
    },

    async createKey(ctx: AdminContext, id: string, scopes?: ApiScope[]): Promise<ApiKeyWithSecret> {
      return prisma.$transaction(async (tx) => {
        const app = await findApp(tx, ctx, id);
        const issued = await issueApiKey(tx, app, scopes);
        await audit(tx, ctx, 'api_key.created', 'api_key', issued.row.id, {
          applicationId: app.id,
          prefix: issued.row.prefix,
          scopes: issued.row.scopes,
        });
        return withSecret(issued, app.environment);
      });
    },

    /** The old key stops working in the same transaction that issues the new one. */
    async rotateKey(ctx: AdminContext, id: string, keyId: string): Promise<ApiKeyWithSecret> {
      const now = deps.clock.now();
      return prisma.$transaction(async (tx) => {
        const app = await findApp(tx, ctx, id);
        const retired = await tx.apiKey.updateManyAndReturn({
          where: { id: keyId, applicationId: app.id, tenantId: ctx.tenantId, status: 'active' },
          data: { status: 'rotated', revokedAt: now },
        });
        if (retired.length === 0) {
          const exists = await tx.apiKey.findFirst({ where: { id: keyId, applicationId: app.id } });
          if (!exists) throw notFound('API key');
          throw new AppError(
            409,
            'conflict',
            `The key is ${exists.status}; only an active key can be rotated`,
          );
        }
        // The replacement does what the old key did, no more.
        const issued = await issueApiKey(tx, app, scopesOf(retired[0]!), keyId);
        await audit(tx, ctx, 'api_key.rotated', 'api_key', keyId, {
          applicationId: app.id,
          newKeyId: issued.row.id,
        });
        return withSecret(issued, app.environment);
      });
    },

    /** Idempotent: revoking a key that is no longer active changes nothing. */
    async revokeKey(ctx: AdminContext, id: string, keyId: string): Promise<void> {
      const now = deps.clock.now();
      await prisma.$transaction(async (tx) => {
        const app = await findApp(tx, ctx, id);
        const key = await tx.apiKey.findFirst({
          where: { id: keyId, applicationId: app.id, tenantId: ctx.tenantId },
        });
        if (!key) throw notFound('API key');
        if (key.status !== 'active') return;
        await tx.apiKey.update({ where: { id: key.id }, data: { status: 'revoked', revokedAt: now } });
        await audit(tx, ctx, 'api_key.revoked', 'api_key', key.id, { applicationId: app.id });
      });
    },
  };
}
