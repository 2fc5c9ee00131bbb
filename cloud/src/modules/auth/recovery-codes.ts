// MFA recovery codes: ten single-use codes per user for a lost authenticator. Each is 16 characters of
// a 31-letter alphabet (about 79 bits, so a SHA-256 is enough at rest, like API keys); a new set
// replaces the old one, and turning MFA off deletes them.
import { randomInt } from 'node:crypto';
import { RECOVERY_CODE_COUNT } from '@portico/contract';
import { hashToken, safeEqual } from '../../infra/crypto.js';
import { newId, type Tx } from '../../infra/db/index.js';

/** No 0/o, 1/i/l: a code read from paper is typed without guessing. */
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const LENGTH = 16;

/** `k7mq-2xzp-9rtc-h4wd`. */
function newCode(): string {
  const chars = Array.from({ length: LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]!);
  return chars.join('').replace(/(.{4})(?!$)/g, '$1-');
}

/** What is hashed: lower case, without dashes or spaces, so `K7MQ 2XZP…` and `k7mq-2xzp…` are one code. */
const normalise = (code: string) => code.toLowerCase().replace(/[\s-]/g, '');

/** A new set of codes for `user`, replacing any earlier set; answers the codes in clear, to show once. */
export async function issueRecoveryCodes(
  tx: Pick<Tx, 'mfaRecoveryCode'>,
  user: { id: string; tenantId: string },
  now: Date,
): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newCode);
  await tx.mfaRecoveryCode.deleteMany({ where: { userId: user.id } });
  await tx.mfaRecoveryCode.createMany({
    data: codes.map((code) => ({
      id: newId(),
      tenantId: user.tenantId,
      userId: user.id,
      codeHash: hashToken(normalise(code)),
      createdAt: now,
    })),
  });
  return codes;
}

/**
 * Spends `code` if it is one of the user's unused codes: every unused hash is compared (in constant
 * time each), then the match is claimed by a conditional write, so two racing uses spend it once.
 * Answers the codes left, or null when the code is not (or no longer) one of them.
 */
export async function spendRecoveryCode(
  db: Pick<Tx, 'mfaRecoveryCode'>,
  userId: string,
  code: string,
  now: Date,
): Promise<number | null> {
  const given = hashToken(normalise(code));
  const unused = await db.mfaRecoveryCode.findMany({ where: { userId, usedAt: null } });
  let match: string | undefined;
  for (const row of unused) if (safeEqual(row.codeHash, given)) match = row.id;
  if (!match) return null;
  const claimed = await db.mfaRecoveryCode.updateMany({
    where: { id: match, usedAt: null },
    data: { usedAt: now },
  });
  if (claimed.count !== 1) return null;
  return unused.length - 1;
}

/** How many unused codes the user holds, and when the set was made (null: none). */
export async function recoveryCodesState(db: Pick<Tx, 'mfaRecoveryCode'>, userId: string) {
  const rows = await db.mfaRecoveryCode.findMany({
    where: { userId },
    select: { usedAt: true, createdAt: true },
  });
  return {
    remaining: rows.filter((r) => !r.usedAt).length,
    generatedAt: rows[0]?.createdAt.toISOString() ?? null,
  };
}
