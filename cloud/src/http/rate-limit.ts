// Fixed-window counters shared by every API process: one row per key in `rate_limit_buckets`,
// bumped with a single atomic upsert, so limits hold behind a load balancer (PostgreSQL and PGlite).
import type { Clock } from '../infra/clock.js';
import { Prisma } from '../generated/prisma/client.js';
import type { Database } from '../infra/db/index.js';
import { AppError } from './errors.js';

export interface RateLimitRule {
  /** Most hits allowed inside one window. */
  limit: number;
  windowMs: number;
}

/** A rule applied to one key. */
export interface Limit {
  key: string;
  rule: RateLimitRule;
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
  /**
   * Counts one hit against each of several keys, in one statement (e.g. per client and per tenant),
   * and throws 429 `rate_limited` when any is over its rule (`Retry-After`: the longest wait).
   */
  enforceAll(limits: Limit[], message?: string): Promise<void>;
  /** Reads `key` without counting: `allowed` is false when the limit is already reached. */
  peek(key: string, rule: RateLimitRule): Promise<RateLimitState>;
  /** Forgets `key` (e.g. after a successful login). */
  reset(key: string): Promise<void>;
  /** Deletes buckets whose window has ended (for a periodic job); answers how many. */
  prune(): Promise<number>;
}

interface BucketRow {
  key: string;
  count: number;
  reset_at: Date;
}

export function createRateLimiter(db: Pick<Database, 'prisma' | 'sql'>, clock: Clock): RateLimiter {
  const secondsUntil = (resetAt: Date, now: Date) =>
    Math.max(1, Math.ceil((resetAt.getTime() - now.getTime()) / 1000));
  /** One hit against each key, one statement; the states in the order of `limits`. */
  async function count(limits: Limit[]): Promise<RateLimitState[]> {
    const now = clock.now();
    // Keys in one order, so that two statements on PostgreSQL lock shared rows in the same order.
    const sorted = [...limits].sort((a, b) => (a.key < b.key ? -1 : 1));
    if (new Set(sorted.map((l) => l.key)).size !== sorted.length) {
      throw new Error('rate limiter: the same key twice in one call');
    }
    const values = sorted.map(
      ({ key, rule }) => Prisma.sql`(${key}, 1, ${new Date(now.getTime() + rule.windowMs)})`,
    );
    // A window that has ended restarts at 1 in the same statement: no read-then-write race.
    const rows = await db.sql.query<BucketRow>(Prisma.sql`
      INSERT INTO rate_limit_buckets (key, count, reset_at) VALUES ${Prisma.join(values)}
      ON CONFLICT (key) DO UPDATE SET
        count = CASE WHEN rate_limit_buckets.reset_at <= ${now} THEN 1 ELSE rate_limit_buckets.count + 1 END,
        reset_at = CASE WHEN rate_limit_buckets.reset_at <= ${now} THEN EXCLUDED.reset_at ELSE rate_limit_buckets.reset_at END
      RETURNING key, count, reset_at`);
    const byKey = new Map(rows.map((row) => [row.key, row]));
    return limits.map(({ key, rule }) => {
      const row = byKey.get(key)!;
      const hits = Number(row.count);
      return {
        allowed: hits <= rule.limit,
        count: hits,
        retryAfterSeconds: secondsUntil(new Date(row.reset_at), now),
      };
    });
  }

  const limiter: RateLimiter = {
    async consume(key, rule) {
      return (await count([{ key, rule }]))[0]!;
    },
    async enforce(key, rule, message) {
      await limiter.enforceAll([{ key, rule }], message);
    },
    async enforceAll(limits, message) {
      const over = (await count(limits)).filter((state) => !state.allowed);
      if (over.length > 0) throw rateLimited(Math.max(...over.map((s) => s.retryAfterSeconds)), message);
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
