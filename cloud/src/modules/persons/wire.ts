// Person rows <-> wire shape. Only the fields of the contract's Person; never biometric data.
import type { Person as PersonWire } from '@portico/contract';
import type { Person } from '../../generated/prisma/client.js';

/** `p` read with `withIdentity` (identities/service.ts): its active identity, if any. */
export function toPersonWire(p: Person & { identities: { id: string }[] }): PersonWire {
  return {
    id: p.id,
    identityId: p.identities[0]?.id ?? null,
    name: p.name,
    document: p.document,
    externalId: p.externalId,
    email: p.email,
    phone: p.phone,
    birthDate: p.birthDate ? p.birthDate.toISOString().slice(0, 10) : null,
    enrolled: p.enrolledAt !== null,
    enrolledAt: p.enrolledAt?.toISOString() ?? null,
    anonymised: p.anonymisedAt !== null,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}

/** `YYYY-MM-DD` -> the Date Prisma stores in a `date` column (UTC midnight). */
export const birthDateOf = (value: string | null | undefined): Date | null | undefined =>
  value === undefined ? undefined : value === null ? null : new Date(`${value}T00:00:00.000Z`);

/** The columns of a new person row from its wire fields (create, import, onboarding). */
export function newPersonRow(
  tenantId: string,
  input: {
    name: string;
    document: string;
    externalId?: string | null | undefined;
    email?: string | null | undefined;
    phone?: string | null | undefined;
    birthDate?: string | null | undefined;
  },
  now: Date,
) {
  return {
    tenantId,
    name: input.name,
    document: input.document,
    externalId: input.externalId ?? null,
    email: input.email ?? null,
    phone: input.phone ?? null,
    birthDate: birthDateOf(input.birthDate) ?? null,
    createdAt: now,
  };
}
