// Liveness nonces: `<id>.<expiresAtSeconds>.<hmac>`. The HMAC makes forgeries fail without a database
// read; the row makes each nonce single-use across every API process.
import { createHmac } from 'node:crypto';
import type { ChallengeAction } from '@portico/checkin-policy';
import type { Clock } from '../../infra/clock.js';
import { safeEqual } from '../../infra/crypto.js';
import { newId, type Database } from '../../infra/db/index.js';
import { AppError } from '../../http/errors.js';

export const NONCE_TTL_MS = 120_000;

/** What the nonce asks: `passive` (one frame), or an active action judged over several frames. */
export type NonceChallenge = 'passive' | ChallengeAction;

export interface NonceService {
  issue(tenantId: string, challenge?: NonceChallenge): Promise<{ nonce: string; expiresAt: Date }>;
  /**
   * Marks the nonce used and answers what it asked; throws 400 `invalid_nonce` when it is forged,
   * expired, another tenant's or used.
   */
  consume(tenantId: string, nonce: string): Promise<NonceChallenge>;
}

export function createNonceService(deps: { db: Database; clock: Clock; key: Uint8Array }): NonceService {
  const sign = (payload: string) =>
    createHmac('sha256', deps.key).update(`liveness-nonce:${payload}`).digest('base64url');
  const invalid = (why: string) =>
    new AppError(400, 'invalid_nonce', `Liveness nonce ${why}; request a new challenge`);

  return {
    async issue(tenantId, challenge = 'passive') {
      const id = newId();
      const expiresAt = new Date(deps.clock.now().getTime() + NONCE_TTL_MS);
      await deps.db.prisma.livenessNonce.create({ data: { id, tenantId, challenge, expiresAt } });
      const payload = `${id}.${Math.floor(expiresAt.getTime() / 1000)}`;
      return { nonce: `${payload}.${sign(`${tenantId}.${payload}`)}`, expiresAt };
    },
    async consume(tenantId, nonce) {
      const [id, exp, mac] = nonce.split('.');
      if (!id || !exp || !mac || !safeEqual(mac, sign(`${tenantId}.${id}.${exp}`)))
        throw invalid('is not valid');
      const now = deps.clock.now();
      if (Number(exp) * 1000 <= now.getTime()) throw invalid('has expired');
      // Spent and read in one statement: no row back means unknown, another tenant's, used or expired.
      const [row] = await deps.db.prisma.$queryRaw<{ challenge: string }[]>`
        UPDATE liveness_nonces SET used_at = ${now}
         WHERE id = ${id} AND tenant_id = ${tenantId} AND used_at IS NULL AND expires_at > ${now}
        RETURNING challenge`;
      if (!row) throw invalid('was already used');
      return row.challenge as NonceChallenge;
    },
  };
}
