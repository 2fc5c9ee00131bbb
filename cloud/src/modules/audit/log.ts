// The tenant's audit trail as the console's audit page reads it: newest first, filtered, paged, each
// entry with its actor in words (the user's name and e-mail, the key's application, the device's name).
import {
  Id,
  Timestamp,
  z,
  type AdminAuditActor,
  type AdminAuditEntry,
  type AdminAuditQuery,
  type AuditActorType,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { AuditLog, Prisma } from '../../generated/prisma/client.js';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { likeLiteral } from '../../infra/db/like.js';

const AuditCursor = z.tuple([Timestamp, Id]);

type Db = AppDeps['db']['prisma'];

/** `prefix…lastFour`, the way the console shows a key everywhere. */
const keyLabel = (k: { prefix: string; lastFour: string }) => `${k.prefix}…${k.lastFour}`;

/**
 * The ids of the tenant's users, devices and API keys whose name, e-mail, key or application name holds
 * `text` (case-insensitive): what the `actor` filter matches.
 */
async function actorIdsMatching(prisma: Db, tenantId: string, text: string): Promise<string[]> {
  const contains = { contains: likeLiteral(text), mode: 'insensitive' } as const;
  const [users, devices, keys] = await Promise.all([
    prisma.user.findMany({
      where: { tenantId, OR: [{ name: contains }, { email: contains }] },
      select: { id: true },
    }),
    prisma.device.findMany({ where: { tenantId, name: contains }, select: { id: true } }),
    prisma.apiKey.findMany({
      where: { tenantId, OR: [{ prefix: contains }, { application: { name: contains } }] },
      select: { id: true },
    }),
  ]);
  return [...users, ...devices, ...keys].map((r) => r.id);
}

/**
 * The actors of a page in words: one query per kind of actor on the page (at most three, whatever the
 * page's size), each bounded to the tenant. An actor since deleted keeps its id and no name.
 */
async function actorsOf(
  prisma: Db,
  tenantId: string,
  rows: AuditLog[],
): Promise<(r: AuditLog) => AdminAuditActor> {
  const idsOf = (type: AuditActorType) => [
    ...new Set(rows.filter((r) => r.actorType === type && r.actorId).map((r) => r.actorId!)),
  ];
  // A sign-in attempt is recorded as `public` with the user it was for: named too, when that user exists.
  const users = [...idsOf('adminSession'), ...idsOf('public')];
  const devices = idsOf('device');
  const keys = idsOf('apiKey');
  const [userRows, deviceRows, keyRows] = await Promise.all([
    users.length
      ? prisma.user.findMany({
          where: { tenantId, id: { in: users } },
          select: { id: true, name: true, email: true },
        })
      : [],
    devices.length
      ? prisma.device.findMany({ where: { tenantId, id: { in: devices } }, select: { id: true, name: true } })
      : [],
    keys.length
      ? prisma.apiKey.findMany({
          where: { tenantId, id: { in: keys } },
          select: { id: true, prefix: true, lastFour: true, application: { select: { name: true } } },
        })
      : [],
  ]);
  const byId = new Map<string, { name: string | null; email: string | null; key: string | null }>();
  for (const u of userRows) byId.set(u.id, { name: u.name, email: u.email, key: null });
  for (const d of deviceRows) byId.set(d.id, { name: d.name, email: null, key: null });
  for (const k of keyRows) byId.set(k.id, { name: k.application.name, email: null, key: keyLabel(k) });
  // Portal accounts, the public and the system are said by their type: a portal account is a person
  // who may belong to other tenants too, so its name and e-mail are not shown here.
  const named = new Set<string>(['adminSession', 'device', 'apiKey']);
  return (r) => {
    const found =
      (named.has(r.actorType) || r.actorType === 'public') && r.actorId ? byId.get(r.actorId) : undefined;
    return {
      type: r.actorType as AuditActorType,
      id: r.actorId,
      name: found?.name ?? null,
      email: found?.email ?? null,
      key: found?.key ?? null,
      removed: named.has(r.actorType) && r.actorId !== null && !found,
    };
  };
}

export function createAuditLogReader(deps: Pick<AppDeps, 'db'>) {
  const { prisma } = deps.db;
  return async function auditLog(tenantId: string, query: AdminAuditQuery) {
    const and: Prisma.AuditLogWhereInput[] = [{ tenantId }];
    if (query.action) {
      and.push({
        action: query.action.endsWith('.') ? { startsWith: likeLiteral(query.action) } : query.action,
      });
    }
    if (query.actorType) and.push({ actorType: query.actorType });
    if (query.actorId) and.push({ actorId: query.actorId });
    if (query.actor) and.push({ actorId: { in: await actorIdsMatching(prisma, tenantId, query.actor) } });
    if (query.targetType) and.push({ targetType: query.targetType });
    if (query.targetId) and.push({ targetId: query.targetId });
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
    const actorOf = await actorsOf(prisma, tenantId, items);
    const last = items[items.length - 1];
    return {
      items: items.map((r): AdminAuditEntry => ({
        id: r.id,
        at: r.createdAt.toISOString(),
        actorType: r.actorType,
        actorId: r.actorId,
        actor: actorOf(r),
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
