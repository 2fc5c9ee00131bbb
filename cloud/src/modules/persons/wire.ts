// Person rows <-> wire shape. Only the fields of the contract's Person; never biometric data.
import type { Person as PersonWire } from '@portico/contract';
import type { Person } from '../../generated/prisma/client.js';

export function toPersonWire(p: Person): PersonWire {
  return {
    id: p.id,
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
