// Provisioning by code: an admin makes a short single-use code (shown in the console), and a new
// device exchanges it, without any credentials, for its own token, the platform's internal secret and
// its events. Only the code's SHA-256 is stored; unknown, used and expired codes get one answer.
import { randomInt } from 'node:crypto';
import { PAIRING_CODE_ALPHABET, PAIRING_CODE_TTL_MS, type PairingCode, type Paired } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { AppError } from '../../http/errors.js';
import {
  createRateLimiter,
  rateLimited,
  type RateLimiter,
  type RateLimitRule,
} from '../../http/rate-limit.js';
import type { RequestMeta } from '../../http/request-context.js';
import { hashToken } from '../../infra/crypto.js';
import { isUniqueViolation, newId } from '../../infra/db/index.js';
import { auditActorOf, recordAudit } from '../audit/record.js';
import { assignableEvents, deviceWire, insertDevice } from './service.js';

const CODE_LENGTH = 8;

/** Per client address: failed exchanges (guessing), and every exchange (a flood). */
export const PAIR_LIMITS = {
  failedPerIp: { limit: 10, windowMs: 15 * 60_000 },
  perIp: { limit: 60, windowMs: 15 * 60_000 },
} satisfies Record<string, RateLimitRule>;

const invalidCode = () =>
  new AppError(400, 'invalid_pairing_code', 'Unknown, used or expired pairing code: make a new one');

/** A fresh code, XXXX-XXXX. */
function newCode(): string {
  const chars = Array.from(
    { length: CODE_LENGTH },
    () => PAIRING_CODE_ALPHABET[randomInt(PAIRING_CODE_ALPHABET.length)],
  );
  return `${chars.slice(0, 4).join('')}-${chars.slice(4).join('')}`;
}

/** The code as stored (its 8 characters, upper case), or null when it cannot be a code at all. */
export function canonicalCode(typed: string): string | null {
  const plain = typed.replace(/[\s-]/g, '').toUpperCase();
  if (plain.length !== CODE_LENGTH) return null;
  return [...plain].every((c) => PAIRING_CODE_ALPHABET.includes(c)) ? plain : null;
}

/** The first value of `current,previous`: the one a newly paired device should hold. */
export const currentInternalSecret = (configured: string) => configured.split(',')[0]!.trim();

export function createPairingService(
  deps: Pick<AppDeps, 'db' | 'clock' | 'secrets' | 'config'>,
  limiter: RateLimiter = createRateLimiter(deps.db, deps.clock),
) {
  const { prisma } = deps.db;
  return {
    async createCode(
      actor: ActorOf<'adminSession'>,
      input: { name: string; eventIds?: string[] | undefined },
      meta: RequestMeta,
    ): Promise<PairingCode> {
      const eventIds = await assignableEvents(prisma, actor.tenantId, input.eventIds ?? []);
      const now = deps.clock.now();
      const expiresAt = new Date(now.getTime() + PAIRING_CODE_TTL_MS);
      // A clash with a live code is about one in 10^11 per live code; a new code is drawn then.
      for (let attempt = 0; ; attempt++) {
        const code = newCode();
        try {
          await prisma.$transaction(async (tx) => {
            // Spent codes of this tenant go: only live ones need to stay unique.
            await tx.pairingCode.deleteMany({ where: { tenantId: actor.tenantId, expiresAt: { lt: now } } });
            const id = newId();
            await tx.pairingCode.create({
              data: {
                id,
                tenantId: actor.tenantId,
                codeHash: hashToken(canonicalCode(code)!),
                name: input.name,
                eventIds,
                createdBy: actor.userId,
                expiresAt,
                createdAt: now,
              },
            });
            await recordAudit(tx, {
              tenantId: actor.tenantId,
              ...auditActorOf(actor),
              action: 'device.pairing_code_created',
              targetType: 'pairing_code',
              targetId: id,
              metadata: { name: input.name, eventIds, expiresAt: expiresAt.toISOString() },
              requestId: meta.requestId,
              ip: meta.ip,
            });
          });
          return {
            code,
            expiresAt: expiresAt.toISOString(),
            expiresIn: PAIRING_CODE_TTL_MS / 1000,
            name: input.name,
            eventIds,
          };
        } catch (err) {
          if (!isUniqueViolation(err) || attempt >= 3) throw err;
        }
      }
    },

    /**
     * Exchanges a code for a new device. The code is marked used by a conditional update in the same
     * transaction that makes the device: of two exchanges of one code, exactly one finds it unused.
     */
    async pair(typed: string, meta: RequestMeta): Promise<Paired> {
      const failedKey = `pair:failed-ip:${meta.ip}`;
      const blocked = await limiter.peek(failedKey, PAIR_LIMITS.failedPerIp);
      if (!blocked.allowed)
        throw rateLimited(blocked.retryAfterSeconds, 'Too many wrong pairing codes; try again later');
      await limiter.enforce(
        `pair:ip:${meta.ip}`,
        PAIR_LIMITS.perIp,
        'Too many pairing attempts from this address',
      );

      const canonical = canonicalCode(typed);
      const now = deps.clock.now();
      const paired = canonical
        ? await prisma.$transaction(async (tx) => {
            const codeHash = hashToken(canonical);
            const claimed = await tx.pairingCode.updateMany({
              where: { codeHash, usedAt: null, expiresAt: { gt: now }, tenant: { status: 'active' } },
              data: { usedAt: now },
            });
            if (claimed.count !== 1) return null;
            const code = await tx.pairingCode.findUniqueOrThrow({ where: { codeHash } });
            // Events deleted since the code was made are left out, not refused: the admin chose them.
            const eventIds = (
              await tx.event.findMany({
                where: { id: { in: code.eventIds }, tenantId: code.tenantId, deletedAt: null },
                select: { id: true },
              })
            ).map((e) => e.id);
            const { row: device, token } = await insertDevice(tx, {
              tenantId: code.tenantId,
              name: code.name,
              createdAt: now,
              eventIds,
            });
            await tx.pairingCode.update({ where: { id: code.id }, data: { deviceId: device.id } });
            await recordAudit(tx, {
              tenantId: code.tenantId,
              actorType: 'public',
              actorId: null,
              action: 'device.paired',
              targetType: 'device',
              targetId: device.id,
              metadata: { name: code.name, pairingCodeId: code.id, eventIds },
              requestId: meta.requestId,
              ip: meta.ip,
            });
            return { device: deviceWire(device, now), deviceToken: token };
          })
        : null;
      if (!paired) {
        await limiter.consume(failedKey, PAIR_LIMITS.failedPerIp);
        throw invalidCode();
      }
      return {
        ...paired,
        internalSecret: currentInternalSecret(deps.secrets.internalSecret),
        cloudUrl: deps.config.publicUrl,
      };
    },
  };
}
