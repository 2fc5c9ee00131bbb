// Identities: the check-in handle of a person (QR tokens hang off it). Every path that creates a
// person creates its identity in the same transaction; revoked with their tokens on anonymisation.
import type { Prisma } from '../../generated/prisma/client.js';
import { newId, type Tx } from '../../infra/db/index.js';

/** Prisma `include` of a person's active identity: the `identityId` of person responses. */
export const withIdentity = {
  identities: {
    where: { status: 'active' },
    select: { id: true },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: 1,
  },
} as const satisfies Prisma.PersonInclude;

/** Identity rows for persons created in bulk (`createMany`), one per person. */
export function identityRows(tenantId: string, personIds: string[], now: Date) {
  return personIds.map((personId) => ({
    id: newId(),
    tenantId,
    personId,
    status: 'active',
    createdAt: now,
  }));
}

export async function createIdentity(
  tx: Pick<Tx, 'identity'>,
  input: { tenantId: string; personId: string; now: Date },
): Promise<{ id: string }> {
  return tx.identity.create({
    data: {
      id: newId(),
      tenantId: input.tenantId,
      personId: input.personId,
      status: 'active',
      createdAt: input.now,
    },
    select: { id: true },
  });
}

/** Revokes every identity of the person and deletes their check-in tokens (QR and link). */
export async function revokeIdentities(
  tx: Pick<Tx, 'identity' | 'checkinToken'>,
  input: { tenantId: string; personId: string },
): Promise<number> {
  const identities = await tx.identity.findMany({
    where: { tenantId: input.tenantId, personId: input.personId },
    select: { id: true },
  });
  const ids = identities.map((i) => i.id);
  if (ids.length === 0) return 0;
  await tx.checkinToken.deleteMany({ where: { identityId: { in: ids } } });
  await tx.identity.updateMany({ where: { id: { in: ids } }, data: { status: 'revoked' } });
  return ids.length;
}
