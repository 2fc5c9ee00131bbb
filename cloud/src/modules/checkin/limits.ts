// Rate limits of the check-in routes, sized for a venue: a door rush comes from one address (the venue's
// Wi-Fi, a kiosk network behind one NAT), so a guest's link or code is limited per token and per event,
// a credential per credential, and only callers without one per address. Counters are the shared ones of
// http/rate-limit.ts. The numbers are documented in docs/integrators/limits.md.
import { API_KEY_CHECKINS_MAX } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { Actor } from '../../http/actor.js';
import { createRateLimiter, rateLimited, type Limit, type RateLimitRule } from '../../http/rate-limit.js';

const MINUTE = 60_000;

export const CHECKIN_LIMITS = {
  /**
   * A caller without credentials, per address and route (a kiosk in a browser makes one call per person).
   * Kept for identify, its challenge and step-up: anonymous face calls are the costly, probing kind.
   */
  perAddress: { limit: 120, windowMs: MINUTE },
  /** A device or a signed-in staff member, per device or user and route: the old per-address number. */
  perDeviceOrUser: { limit: 120, windowMs: MINUTE },
  /** Identify (and step-up) per tenant, across every caller of it: a share of the face engine. */
  perTenant: { limit: API_KEY_CHECKINS_MAX, windowMs: MINUTE },
  /**
   * One link or QR code: a tap, a double tap, the page's own retries, a scanner reading the same code
   * twice. More is someone hammering a token they hold, which gains nothing: a guest is checked in
   * once, and a QR repeat answers the earlier admission.
   */
  perToken: { limit: 10, windowMs: MINUTE },
  /**
   * Link and QR check-ins of one event (or, without an event, of one tenant's QR codes): a door rush.
   * A staffed lane admits a person every few seconds, so even dozens of lanes and every guest tapping
   * their own link stay far below 50 a second; the ceiling bounds what one event's tokens can cost.
   */
  perEvent: { limit: 3_000, windowMs: MINUTE },
  /**
   * Tokens that resolve to nothing (unknown, removed, revoked, malformed), per address (or credential),
   * across link and QR: what guessing looks like. Generous, because a venue's Wi-Fi carries the odd stale
   * link; once used up, every token lookup from there waits, valid ones too, or an answer would still
   * tell a valid guess from an invalid one.
   */
  unknownTokens: { limit: 60, windowMs: MINUTE },
} satisfies Record<string, RateLimitRule>;

type Deps = Pick<AppDeps, 'db' | 'clock'>;

/** Who a limit counts against: the credential when there is one, else the client address. */
export function callerKey(actor: Actor, ip: string): string {
  switch (actor.kind) {
    case 'apiKey':
      return `key:${actor.keyId}`;
    case 'device':
      return `device:${actor.deviceId}`;
    case 'adminSession':
      return `user:${actor.userId}`;
    case 'portal':
      return `portal:${actor.accountId}`;
    case 'public':
      return `ip:${ip}`;
  }
}

export function createCheckinLimits(deps: Deps) {
  const limiter = createRateLimiter(deps.db, deps.clock);
  const missKey = (actor: Actor, ip: string) => `checkin:unknown-token:${callerKey(actor, ip)}`;

  /** The caller's own limit on `route`: per key (the tenant's setting), per device or user, or per address. */
  function callerLimit(route: string, actor: Actor, ip: string): Limit {
    const key = `checkin:${route}:${callerKey(actor, ip)}`;
    if (actor.kind === 'apiKey') {
      return { key, rule: { limit: actor.tenant.settings.apiKeyCheckinsPerMinute, windowMs: MINUTE } };
    }
    if (actor.kind === 'public') return { key, rule: CHECKIN_LIMITS.perAddress };
    return { key, rule: CHECKIN_LIMITS.perDeviceOrUser };
  }

  return {
    /** Counts one call of the caller on `route` (and `also`, e.g. the tenant's), in one statement. */
    async caller(route: string, actor: Actor, ip: string, ...also: Limit[]): Promise<void> {
      await limiter.enforceAll([callerLimit(route, actor, ip), ...also]);
    },

    /**
     * Looks a token up with guessing kept honest: a caller that has used up its unknown tokens waits
     * before any lookup; a token that resolves to nothing is counted against it. `find` answers null
     * for a token that is unknown to the caller (the caller then answers 404).
     */
    async lookup<T>(actor: Actor, ip: string, find: () => Promise<T | null>): Promise<T | null> {
      const key = missKey(actor, ip);
      const before = await limiter.peek(key, CHECKIN_LIMITS.unknownTokens);
      if (!before.allowed) throw rateLimited(before.retryAfterSeconds);
      const found = await find();
      if (found !== null) return found;
      const after = await limiter.consume(key, CHECKIN_LIMITS.unknownTokens);
      if (!after.allowed) throw rateLimited(after.retryAfterSeconds);
      return null;
    },

    /**
     * One check-in by a known token: counted per token (`tokenId`, the row's id: raw tokens are never
     * stored as counter keys) and per event (`eventId`, or the tenant's codes without one).
     */
    async token(
      route: 'link' | 'qr',
      tokenId: string,
      scope: { eventId: string } | { tenantId: string },
    ): Promise<void> {
      await limiter.enforceAll([
        { key: `checkin:${route}:token:${tokenId}`, rule: CHECKIN_LIMITS.perToken },
        {
          key: 'eventId' in scope ? `checkin:event:${scope.eventId}` : `checkin:event:none:${scope.tenantId}`,
          rule: CHECKIN_LIMITS.perEvent,
        },
      ]);
    },
  };
}

export type CheckinLimits = ReturnType<typeof createCheckinLimits>;
