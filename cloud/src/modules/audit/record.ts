// The audit trail: one row per security-relevant action. Callers pass identifiers and outcomes only;
// never secrets, tokens, frames or embeddings.
import type { AuditAction, AuditActorType } from '@portico/contract';
import type { Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../../http/actor.js';
import { newId, type Tx } from '../../infra/db/index.js';
import { insertRow, jsonb } from '../../infra/db/statements.js';

export interface AuditEntry {
  tenantId: string | null;
  actorType: AuditActorType;
  actorId?: string | null;
  action: AuditAction;
  targetType?: string;
  targetId?: string;
  metadata?: Prisma.InputJsonObject;
  ip?: string | null;
  requestId?: string | null;
}

/** What an audit row takes from the context of a request. */
export type AuditContext = Pick<AuditEntry, 'actorType' | 'ip' | 'requestId'> & {
  tenantId: string;
  actorId: string;
};

/** Audit rows about one kind of target, written for the caller of a request. */
export function targetAudit(targetType: string) {
  return (
    tx: Pick<Tx, '$executeRaw'>,
    ctx: AuditContext,
    action: AuditAction,
    targetId: string,
    metadata: Prisma.InputJsonObject = {},
  ) =>
    recordAudit(tx, {
      tenantId: ctx.tenantId,
      actorType: ctx.actorType,
      actorId: ctx.actorId,
      action,
      targetType,
      targetId,
      metadata,
      ip: ctx.ip,
      requestId: ctx.requestId,
    });
}

/** Write inside the caller's transaction so the audit row commits with the change it records. */
export async function recordAudit(tx: Pick<Tx, '$executeRaw'>, entry: AuditEntry): Promise<void> {
  await tx.$executeRaw(auditInsert(entry));
}

/** The audit row as an insert, for a statement that writes it with the change it records. */
export function auditInsert(entry: AuditEntry): Prisma.Sql {
  return insertRow('audit_logs', {
    id: newId(),
    tenant_id: entry.tenantId,
    actor_type: entry.actorType,
    actor_id: entry.actorId ?? null,
    action: entry.action,
    target_type: entry.targetType ?? null,
    target_id: entry.targetId ?? null,
    metadata: jsonb(entry.metadata ?? {}),
    ip: entry.ip ?? null,
    request_id: entry.requestId ?? null,
  });
}

/** The actor columns of an audit row: the key of an integrator, the user of a session, the portal account, the device. */
export function auditActorOf(actor: Actor): { actorType: AuditEntry['actorType']; actorId: string | null } {
  switch (actor.kind) {
    case 'apiKey':
      return { actorType: 'apiKey', actorId: actor.keyId };
    case 'adminSession':
      return { actorType: 'adminSession', actorId: actor.userId };
    case 'portal':
      return { actorType: 'portal', actorId: actor.accountId };
    case 'device':
      return { actorType: 'device', actorId: actor.deviceId };
    default:
      return { actorType: actor.kind, actorId: null };
  }
}
