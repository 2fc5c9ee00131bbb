// The tenant's audit trail as the console's audit page reads it: newest first, filtered, paged.
import { Id, Timestamp, z, type AdminAuditQuery } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { likeLiteral } from '../../infra/db/like.js';

const AuditCursor = z.tuple([Timestamp, Id]);

export function createAuditLogReader(deps: Pick<AppDeps, 'db'>) {
  const { prisma } = deps.db;
  return async function auditLog(tenantId: string, query: AdminAuditQuery) {
    const and: Prisma.AuditLogWhereInput[] = [{ tenantId }];
    if (query.action) {
      and.push({
        action: query.action.endsWith('.') ? { startsWith: likeLiteral(query.action) } : query.action,
      });
    }
    if (query.actorId) and.push({ actorId: query.actorId });
    if (query.from) and.push({ createdAt: { gte: new Date(query.from) } });
    if (query.to) and.push({ createdAt: { lt: new Date(query.to) } });
    if (query.cursor) {
      const [at, id] = decodeCursor(query.cursor, AuditCursor);
      const createdAt = new Date(at);
      and.push({ OR: [{ createdAt: { lt: createdAt } }, { createdAt, id: { lt: id } }] });
    }
    const rows = await prisma.auditLog.findMany({
      where: { AND: and },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: query.limit + 1,
    });
    const items = rows.slice(0, query.limit);
    const last = items[items.length - 1];
    return {
      items: items.map((r) => ({
        id: r.id,
        at: r.createdAt.toISOString(),
        actorType: r.actorType,
        actorId: r.actorId,
        action: r.action,
        targetType: r.targetType,
        targetId: r.targetId,
        metadata: (r.metadata ?? {}) as Record<string, unknown>,
        ip: r.ip,
        requestId: r.requestId,
      })),
      nextCursor:
        rows.length > query.limit && last ? encodeCursor([last.createdAt.toISOString(), last.id]) : null,
    };
  };
}
