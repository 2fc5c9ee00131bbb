// The audit trail: one row per security-relevant action. Callers pass identifiers and outcomes only;
// never secrets, tokens, frames or embeddings.
import type { Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../../http/actor.js';
import { newId, type Tx } from '../../infra/db/index.js';

export interface AuditEntry {
  tenantId: string | null;
  actorType: 'apiKey' | 'adminSession' | 'portal' | 'device' | 'public' | 'system' | 'operator';
  actorId?: string | null;
  action: string;
  targetType?: string;
  targetId?: string;
  metadata?: Prisma.InputJsonObject;
  ip?: string | null;
  requestId?: string | null;
}

/** Write inside the caller's transaction so the audit row commits with the change it records. */
export async function recordAudit(tx: Pick<Tx, 'auditLog'>, entry: AuditEntry): Promise<void> {
  await tx.auditLog.create({
    data: {
      id: newId(),
      tenantId: entry.tenantId,
      actorType: entry.actorType,
      actorId: entry.actorId ?? null,
      action: entry.action,
      targetType: entry.targetType ?? null,
      targetId: entry.targetId ?? null,
      metadata: entry.metadata ?? {},
      ip: entry.ip ?? null,
      requestId: entry.requestId ?? null,
    },
  });
}

/** The actor columns of an audit row: the key of an integrator, the user of a session, the portal account. */
export function auditActorOf(actor: Actor): { actorType: AuditEntry['actorType']; actorId: string | null } {
  switch (actor.kind) {
    case 'apiKey':
      return { actorType: 'apiKey', actorId: actor.keyId };
    case 'adminSession':
      return { actorType: 'adminSession', actorId: actor.userId };
    case 'portal':
      return { actorType: 'portal', actorId: actor.accountId };
    default:
      return { actorType: actor.kind, actorId: null };
  }
}
