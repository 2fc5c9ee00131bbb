// Liveness nonces: `<id>.<expiresAtSeconds>.<challenge>.<hmac>`, the HMAC over the tenant, id, expiry
// and challenge. Issuing one writes nothing: a challenge costs no database statement, and callers
// cannot fill a table by asking for challenges. Forgeries and another tenant's nonces fail the HMAC,
// expired ones their time, and the row written when a nonce is used (its id the primary key) makes
// each nonce single-use across every API process.
import { createHmac } from 'node:crypto';
import type { ChallengeAction } from '@portico/checkin-policy';
import type { Clock } from '../../infra/clock.js';
import { safeEqual } from '../../infra/crypto.js';
import { Prisma } from '../../generated/prisma/client.js';
import { newId, type Database } from '../../infra/db/index.js';
import { AppError } from '../../http/errors.js';

export const NONCE_TTL_MS = 120_000;

/** What the nonce asks: `passive` (one frame), or an active action judged over several frames. */
export type NonceChallenge = 'passive' | ChallengeAction;

/** The active challenges a caller without credentials may be asked for. */
export const CHALLENGE_ACTIONS: readonly ChallengeAction[] = ['blink', 'turn_head'];
const CHALLENGES: readonly NonceChallenge[] = ['passive', ...CHALLENGE_ACTIONS];

export interface NonceService {
  issue(tenantId: string, challenge?: NonceChallenge): { nonce: string; expiresAt: Date };
  /**
   * Marks the nonce used and answers what it asked; throws 400 `invalid_nonce` when it is forged,
   * expired, another tenant's or used.
   */
  consume(tenantId: string, nonce: string): Promise<NonceChallenge>;
}

export function createNonceService(deps: { db: Database; clock: Clock; key: Uint8Array }): NonceService {
  const sign = (tenantId: string, payload: string) =>
    createHmac('sha256', deps.key).update(`liveness-nonce:${tenantId}.${payload}`).digest('base64url');
  const invalid = (why: string) =>
    new AppError(400, 'invalid_nonce', `Liveness nonce ${why}; request a new challenge`);

  return {
    issue(tenantId, challenge = 'passive') {
      const expiresAt = new Date(deps.clock.now().getTime() + NONCE_TTL_MS);
      const payload = `${newId()}.${Math.floor(expiresAt.getTime() / 1000)}.${challenge}`;
      return { nonce: `${payload}.${sign(tenantId, payload)}`, expiresAt };
    },
    async consume(tenantId, nonce) {
      const [id, exp, challenge, mac, ...rest] = nonce.split('.');
      if (!id || !exp || !challenge || !mac || rest.length > 0) throw invalid('is not valid');
      if (!safeEqual(mac, sign(tenantId, `${id}.${exp}.${challenge}`))) throw invalid('is not valid');
      const asked = CHALLENGES.find((c) => c === challenge);
      if (!asked) throw invalid('is not valid');
      const now = deps.clock.now();
      const expiresAt = new Date(Number(exp) * 1000);
      if (!(expiresAt > now)) throw invalid('has expired');
      // Spent in one statement: the row exists already when the nonce was used before.
      const spent = await deps.db.sql.query<{ id: string }>(Prisma.sql`
        INSERT INTO liveness_nonces (id, tenant_id, challenge, expires_at, used_at, created_at)
        VALUES (${id}, ${tenantId}, ${asked}, ${expiresAt}, ${now}, ${now})
        ON CONFLICT (id) DO NOTHING
        RETURNING id`);
      if (spent.length === 0) throw invalid('was already used');
      return asked;
    },
  };
}
