// Fixed-window counters shared by every API process: one row per key in `rate_limit_buckets`,
// bumped with a single atomic upsert, so limits hold behind a load balancer (PostgreSQL and PGlite).
import type { Clock } from '../infra/clock.js';
import type { Database } from '../infra/db/index.js';
import { AppError } from './errors.js';

export interface RateLimitRule {
  /** Most hits allowed inside one window. */
  limit: number;
  windowMs: number;
}

export interface RateLimitState {
  /** False once the hits of the current window exceed the limit. */
  allowed: boolean;
  count: number;
  /** Seconds until the window resets (0 when nothing is counted). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Counts one hit against `key` and says whether it is within the rule. */
  consume(key: string, rule: RateLimitRule): Promise<RateLimitState>;
  /** Counts one hit and throws 429 `rate_limited` (with `Retry-After`) when it is over the rule. */
  enforce(key: string, rule: RateLimitRule, message?: string): Promise<void>;
  /** Reads `key` without counting: `allowed` is false when the limit is already reached. */
  peek(key: string, rule: RateLimitRule): Promise<RateLimitState>;
  /** Forgets `key` (e.g. after a successful login). */
  reset(key: string): Promise<void>;
  /** Deletes buckets whose window has ended (for a periodic job); answers how many. */
  prune(): Promise<number>;
}

interface BucketRow {
  count: number;
  reset_at: Date;
}

export function createRateLimiter(db: Pick<Database, 'prisma'>, clock: Clock): RateLimiter {
  const secondsUntil = (resetAt: Date, now: Date) =>
    Math.max(1, Math.ceil((resetAt.getTime() - now.getTime()) / 1000));
  const limiter: RateLimiter = {
    async consume(key, rule) {
      const now = clock.now();
      const fresh = new Date(now.getTime() + rule.windowMs);
      // A window that has ended restarts at 1 in the same statement: no read-then-write race.
      const rows = await db.prisma.$queryRaw<BucketRow[]>`
        INSERT INTO rate_limit_buckets (key, count, reset_at) VALUES (${key}, 1, ${fresh})
        ON CONFLICT (key) DO UPDATE SET
          count = CASE WHEN rate_limit_buckets.reset_at <= ${now} THEN 1 ELSE rate_limit_buckets.count + 1 END,
          reset_at = CASE WHEN rate_limit_buckets.reset_at <= ${now} THEN ${fresh} ELSE rate_limit_buckets.reset_at END
        RETURNING count, reset_at`;
      const row = rows[0]!;
      const count = Number(row.count);
      return {
        allowed: count <= rule.limit,
        count,
        retryAfterSeconds: secondsUntil(new Date(row.reset_at), now),
      };
    },
    async enforce(key, rule, message) {
      const state = await limiter.consume(key, rule);
      if (!state.allowed) throw rateLimited(state.retryAfterSeconds, message);
    },
    async peek(key, rule) {
      const now = clock.now();
      const bucket = await db.prisma.rateLimitBucket.findUnique({ where: { key } });
      if (!bucket || bucket.resetAt <= now) return { allowed: true, count: 0, retryAfterSeconds: 0 };
      return {
        allowed: bucket.count < rule.limit,
        count: bucket.count,
        retryAfterSeconds: secondsUntil(bucket.resetAt, now),
      };
    },
    async reset(key) {
      await db.prisma.rateLimitBucket.deleteMany({ where: { key } });
    },
    async prune() {
      return (await db.prisma.rateLimitBucket.deleteMany({ where: { resetAt: { lte: clock.now() } } })).count;
    },
  };
  return limiter;
}

/** The one way to refuse a caller over a limit: 429 `rate_limited` with `Retry-After`. */
export function rateLimited(
  retryAfterSeconds: number,
  message = 'Too many attempts; try again later',
  code: 'rate_limited' | 'account_locked' = 'rate_limited',
): AppError {
  return new AppError(429, code, message, {
    headers: { 'Retry-After': String(retryAfterSeconds) },
    extra: { retryAfterSeconds },
  });
}
