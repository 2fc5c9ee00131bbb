// Live check-ins of a tenant as server-sent events. Every check-in (online, QR, manual, link, synced
// offline) emits a `checkin.*` event through the outbox, which any API process publishes on the bus;
// each process subscribes to its streaming tenants' topics, so a stream sees check-ins recorded by any
// process. The bus message names the check-in; the item is read back from the database (tenant-scoped).
import type { Request, Response } from 'express';
import { decodeJwt } from 'jose';
import type { AdminCheckin } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { liveAdminSession } from '../auth/verifier.js';
import type { AdminCheckins } from './checkins.js';

/** A comment line this often keeps proxies and the browser from closing an idle stream. */
export const KEEP_ALIVE_MS = 15_000;
/** Check-ins sent again on a resume (`Last-Event-ID`) at most. */
export const RESUME_MAX = 200;
/** Ids remembered to drop a message the bus delivers twice (QoS 1 is at-least-once). */
const SEEN_MAX = 1_000;
/** Longest delay a Node timer takes. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** A `Last-Event-ID` this stream can have sent (a check-in id); anything else starts afresh. */
const EVENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Seconds-since-epoch expiry of the (already verified) access token that opened the stream. */
function tokenExpiry(req: Request): number | undefined {
  const token = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
  try {
    return token ? decodeJwt(token).exp : undefined;
  } catch {
    return undefined;
  }
}

export function createCheckinStream(
  deps: Pick<AppDeps, 'bus' | 'logger' | 'db' | 'clock' | 'sessionEnds'>,
  checkins: AdminCheckins,
) {
  /** The login session is still live (a logout or a detected theft ends it). */
  const sessionLive = async (actor: ActorOf<'adminSession'>) =>
    (await liveAdminSession(deps.db.prisma, actor, deps.clock.now())) !== null;

  return async function stream(actor: ActorOf<'adminSession'>, req: Request, res: Response): Promise<void> {
    const { tenantId } = actor;
    let closed = false;
    const seen = new Set<string>();
    // A resume: the client has the check-in it names, even if the bus delivers it now (its outbox row
    // may be published after the stream opened).
    const lastEventId = req.get('last-event-id');
    const resumed = lastEventId && EVENT_ID.test(lastEventId) ? lastEventId : undefined;
    if (resumed) seen.add(resumed);
    let queue: Promise<void> = Promise.resolve();

    // Not after the end: the server ends open streams when it stops (server.ts).
    const write = (chunk: string) => {
      if (!closed && !res.writableEnded) res.write(chunk);
    };
    const send = (items: AdminCheckin[]) => {
      for (const item of items) {
        if (seen.has(item.id)) continue;
        seen.add(item.id);
        if (seen.size > SEEN_MAX) seen.delete(seen.values().next().value!);
        write(`id: ${item.id}\nevent: checkin\ndata: ${JSON.stringify(item)}\n\n`);
      }
    };
    // One at a time, in the order the bus delivered them.
    const enqueue = (load: () => Promise<AdminCheckin[]>) => {
      queue = queue
        .then(async () => {
          if (!closed) send(await load());
        })
        .catch((err: unknown) =>
          deps.logger.warn({ err, tenantId }, 'check-in stream: could not send an item'),
        );
    };

    const unsubscribe = await deps.bus.subscribeTenant(tenantId, (message) => {
      if (message.tenantId !== tenantId || !message.event.startsWith('checkin.')) return;
      const id = (message.data as { checkInId?: unknown } | null)?.checkInId;
      if (typeof id === 'string') enqueue(() => checkins.byIds(tenantId, [id]));
    });
    res.status(200);
    res.setHeader('content-type', 'text/event-stream; charset=utf-8');
    res.setHeader('cache-control', 'no-store');
    res.setHeader('x-accel-buffering', 'no');
    res.flushHeaders();
    write('retry: 3000\n: connected\n\n');
    if (resumed) enqueue(() => checkins.receivedAfter(tenantId, resumed, RESUME_MAX));
    // The stream lasts as long as the credentials that opened it: it ends when the access token
    // expires (the client reconnects with a fresh one) or when the session has ended: at once when it
    // ended in this process, else found at the next keep-alive.
    const end = () => {
      if (!closed && !res.writableEnded) res.end();
    };
    const checkSession = async (): Promise<boolean> => {
      // A read that fails keeps the stream open: the next keep-alive checks again.
      const live = await sessionLive(actor).catch(() => true);
      if (!live) end();
      return live;
    };
    const keepAlive = setInterval(() => {
      void checkSession().then((live) => live && write(': keep-alive\n\n'));
    }, KEEP_ALIVE_MS);
    const unwatch = deps.sessionEnds.subscribe((userId) => {
      if (userId === actor.userId) void checkSession();
    });
    const exp = tokenExpiry(req);
    const expiry =
      exp === undefined
        ? undefined
        : setTimeout(end, Math.min(MAX_TIMER_MS, Math.max(0, exp * 1000 - deps.clock.now().getTime())));
    res.on('close', () => {
      closed = true;
      clearInterval(keepAlive);
      unwatch();
      clearTimeout(expiry);
      unsubscribe().catch(() => undefined);
    });
  };
}
