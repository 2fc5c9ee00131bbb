// `Idempotency-Key` on POST routes: the first answer to a key is stored for 24 h (per caller) and a
// retry with the same key and body gets it back instead of doing the work again, so a client may resend
// a POST after a dropped connection or a time-out. The same key with another body is refused (409
// `idempotency_key_reused`); a retry while the first request still runs gets 409 `idempotency_key_in_use`.
import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { Clock } from '../infra/clock.js';
import { isUniqueViolation, type Database } from '../infra/db/index.js';
import { newId } from '../infra/db/ids.js';
import type { Actor } from './actor.js';
import { AppError } from './errors.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** How long an answer is kept for replay. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A first request that has not answered after this long is taken to have died with its process. */
export const IDEMPOTENCY_LOCK_MS = 2 * 60 * 1000;
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;
/** The answer's headers a replay repeats. */
const REPLAYED_HEADERS = ['content-type', 'location'];

/**
 * Answers not kept: 5xx (the work may not have happened: a retry runs it again), and 401/403/408/429
 * (nothing was done, and the same request can succeed later).
 */
const keeps = (status: number) => status < 500 && ![401, 403, 408, 429].includes(status);

/** Whose keys these are: one credential within one tenant (a sandbox is a tenant of its own). */
function scopeOf(actor: Actor): string {
  switch (actor.kind) {
    case 'apiKey':
      return `apiKey:${actor.tenantId}:${actor.keyId}`;
    case 'adminSession':
      return `adminSession:${actor.tenantId}:${actor.userId}`;
    case 'device':
      return `device:${actor.tenantId}:${actor.deviceId}`;
    case 'portal':
      return `portal:${actor.accountId}`;
    case 'public':
      // A replay needs the same key and the same body: nothing that the caller does not already hold.
      return 'public';
  }
}

function requestHash(req: Request): string {
  return createHash('sha256')
    .update(`${req.method} ${req.originalUrl}\n${JSON.stringify(req.body ?? null)}`)
    .digest('hex');
}

export function idempotency(deps: { db: Database; clock: Clock }): RequestHandler {
  const prisma = deps.db.prisma;

  /** Claims the key for this request: true when it runs, or the stored row to answer with. */
  async function claim(scope: string, key: string, hash: string) {
    for (let tries = 0; tries < 3; tries++) {
      const now = deps.clock.now();
      const existing = await prisma.idempotencyKey.findUnique({ where: { scope_key: { scope, key } } });
      if (!existing) {
        await prisma.idempotencyKey.deleteMany({ where: { scope, expiresAt: { lt: now } } });
        try {
          await prisma.idempotencyKey.create({
            data: {
              id: newId(),
              scope,
              key,
              requestHash: hash,
              state: 'in_progress',
              lockedAt: now,
              createdAt: now,
              expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
            },
          });
          return { run: true as const };
        } catch (error) {
          if (isUniqueViolation(error)) continue; // another request took it first: read it again
          throw error;
        }
      }
      if (existing.expiresAt <= now) {
        await prisma.idempotencyKey.deleteMany({ where: { id: existing.id } });
        continue;
      }
      if (existing.requestHash !== hash) {
        throw new AppError(
          409,
          'idempotency_key_reused',
          'This Idempotency-Key was used with another request (method, path or body): use a new key for a new request',
        );
      }
      if (existing.state === 'done') return { run: false as const, row: existing };
      if (now.getTime() - existing.lockedAt.getTime() < IDEMPOTENCY_LOCK_MS) {
        throw new AppError(
          409,
          'idempotency_key_in_use',
          'A request with this Idempotency-Key is still running',
          {
            headers: { 'Retry-After': '1' },
          },
        );
      }
      // The first request never answered (its process died): this one takes over.
      const taken = await prisma.idempotencyKey.updateMany({
        where: { id: existing.id, state: 'in_progress', lockedAt: existing.lockedAt },
        data: { lockedAt: now },
      });
      if (taken.count === 1) return { run: true as const };
    }
    throw new AppError(
      409,
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is still running',
      {
        headers: { 'Retry-After': '1' },
      },
    );
  }

  /** Keeps the answer (or lets the key go) before the answer leaves, so a retry finds it stored. */
  function captureAnswer(res: Response, scope: string, key: string): void {
    const chunks: Buffer[] = [];
    const collect = (chunk: unknown, encoding?: unknown) => {
      if (typeof chunk === 'string') chunks.push(Buffer.from(chunk, (encoding as BufferEncoding) ?? 'utf8'));
      else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      collect(chunk, typeof rest[0] === 'string' ? rest[0] : undefined);
      return write(chunk, ...rest);
    }) as Response['write'];
    res.end = ((...args: unknown[]) => {
      if (args[0] !== undefined && typeof args[0] !== 'function') {
        collect(args[0], typeof args[1] === 'string' ? args[1] : undefined);
      }
      const status = res.statusCode;
      const stored = keeps(status)
        ? prisma.idempotencyKey.updateMany({
            where: { scope, key },
            data: {
              state: 'done',
              responseStatus: status,
              responseHeaders: Object.fromEntries(
                REPLAYED_HEADERS.flatMap((h) => {
                  const v = res.getHeader(h);
                  return v === undefined ? [] : [[h, String(v)]];
                }),
              ),
              responseBody: Buffer.concat(chunks).toString('utf8'),
            },
          })
        : prisma.idempotencyKey.deleteMany({ where: { scope, key } });
      // Even when the caller has gone (a dropped connection), the answer is kept for its retry.
      void stored.catch(() => undefined).finally(() => end(...args));
      return res;
    }) as Response['end'];
  }

  return async (req, res, next) => {
    const key = req.get(IDEMPOTENCY_HEADER);
    if (key === undefined) return next();
    if (!KEY_FORMAT.test(key)) {
      throw new AppError(400, 'validation_failed', 'Idempotency-Key: 1 to 255 visible ASCII characters', {
        errors: [{ path: 'headers.idempotency-key', message: '1 to 255 visible ASCII characters' }],
      });
    }
    const scope = scopeOf((res.locals.actor as Actor | undefined) ?? { kind: 'public' });
    const claimed = await claim(scope, key, requestHash(req));
    if (!claimed.run) {
      const { row } = claimed;
      for (const [h, v] of Object.entries((row.responseHeaders ?? {}) as Record<string, string>)) {
        res.setHeader(h, v);
      }
      res.setHeader('Idempotent-Replayed', 'true');
      res.status(row.responseStatus ?? 200).end(row.responseBody ?? undefined);
      return;
    }
    captureAnswer(res, scope, key);
    next();
  };
}
