// Enrollment tokens: single use, expiring, stored only as a SHA-256 hash. Issued by public
// registration and by "send enrollment link"; consumed by a successful enrollment.
import type { EnrollmentToken } from '../../generated/prisma/client.js';
import { AppError } from '../../http/errors.js';
import { hashToken, randomToken } from '../../infra/crypto.js';
import { newId, type Tx } from '../../infra/db/index.js';

export const ENROLLMENT_TOKEN_TTL_MS = 72 * 60 * 60 * 1000;

export type TokenPurpose = 'self_registration' | 'enrollment_link';

export async function issueEnrollmentToken(
  tx: Pick<Tx, 'enrollmentToken'>,
  input: { tenantId: string; personId: string; purpose: TokenPurpose; now: Date },
): Promise<{ token: string; expiresAt: Date }> {
  const token = randomToken('et_');
  const expiresAt = new Date(input.now.getTime() + ENROLLMENT_TOKEN_TTL_MS);
  await tx.enrollmentToken.create({
    data: {
      id: newId(),
      tenantId: input.tenantId,
      personId: input.personId,
      tokenHash: hashToken(token),
      purpose: input.purpose,
      expiresAt,
      createdAt: input.now,
    },
  });
  return { token, expiresAt };
}

/**
 * The live token row, or the reason it cannot be used: unknown -> 404 `not_found`, used -> 400
 * `invalid_token`, expired -> 400 `token_expired`.
 */
export async function usableToken(
  db: Pick<Tx, 'enrollmentToken'>,
  token: string,
  now: Date,
): Promise<EnrollmentToken> {
  const row = await db.enrollmentToken.findUnique({ where: { tokenHash: hashToken(token) } });
  if (!row) throw new AppError(404, 'not_found', 'Unknown enrollment token');
  if (row.usedAt) throw new AppError(400, 'invalid_token', 'This enrollment token was already used');
  if (row.expiresAt <= now) throw new AppError(400, 'token_expired', 'This enrollment token has expired');
  return row;
}

/** Marks the token used in the enrollment's transaction; a concurrent use makes this fail. */
export async function consumeToken(tx: Pick<Tx, 'enrollmentToken'>, id: string, now: Date): Promise<void> {
  const used = await tx.enrollmentToken.updateMany({ where: { id, usedAt: null }, data: { usedAt: now } });
  if (used.count !== 1) throw new AppError(400, 'invalid_token', 'This enrollment token was already used');
}
