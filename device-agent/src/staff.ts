// The staff fallback at the door: a PIN set on the device (only its scrypt hash, `STAFF_PIN_HASH`) opens
// a short staff session in which the kiosk searches the replica's guests by name and checks one in by
// hand. Wrong PINs are counted on the device (every client is the kiosk on this machine): after
// `maxAttempts` in a row the PIN is refused for `lockoutMs`, doubled at each lock-out that follows
// without a right PIN in between (at most a day). A session ends after `sessionMs` without use.
import { createHash, randomBytes } from 'node:crypto';
import { DoorError } from './door.js';
import { PIN_PATTERN, pinMatches } from './pin.js';
import type { EventReplica, ReplicaGuest } from './replica.js';

/** Lower case without accents, so "joao" finds "João" and "CONCEICAO" finds "Conceição". */
export function foldText(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

const MAX_LOCKOUT_MS = 24 * 3600 * 1000;

const tokenKey = (token: string) => createHash('sha256').update(token).digest('hex');

export function createStaff(options: {
  pinHash: string | undefined;
  maxAttempts: number;
  lockoutMs: number;
  sessionMs: number;
  now: () => number;
}) {
  const { now } = options;
  let failures = 0;
  let lockouts = 0;
  let lockedUntil = 0;
  /** sha256(token) -> last use. */
  const sessions = new Map<string, number>();
  /** Folded words of each held guest's name (a guest object is replaced when the replica changes it). */
  const words = new WeakMap<ReplicaGuest, string[]>();

  const wordsOf = (guest: ReplicaGuest) => {
    let w = words.get(guest);
    if (!w)
      words.set(
        guest,
        (w = foldText(guest.name)
          .split(/[\s'’.-]+/)
          .filter(Boolean)),
      );
    return w;
  };

  /**
   * Throws unless `pin` is the staff PIN, counting wrong PINs towards the lock-out: the one check of
   * a PIN, for a session as for a staff confirmation at a step-up.
   */
  function verify(pin: string): void {
    if (!options.pinHash) {
      throw new DoorError(503, 'staff_pin_not_set', 'No staff PIN is set on this device (STAFF_PIN_HASH)');
    }
    const wait = lockedUntil - now();
    if (wait > 0) {
      const s = Math.ceil(wait / 1000);
      throw new DoorError(429, 'staff_locked', `Too many wrong PINs: try again in ${s} s`, s);
    }
    if (!PIN_PATTERN.test(pin) || !pinMatches(pin, options.pinHash)) {
      failures++;
      if (failures >= options.maxAttempts) {
        const lockMs = Math.min(MAX_LOCKOUT_MS, options.lockoutMs * 2 ** lockouts);
        lockouts++;
        failures = 0;
        lockedUntil = now() + lockMs;
        const s = Math.ceil(lockMs / 1000);
        throw new DoorError(429, 'staff_locked', `Too many wrong PINs: try again in ${s} s`, s);
      }
      throw new DoorError(
        401,
        'wrong_pin',
        `Wrong PIN: ${options.maxAttempts - failures} attempt(s) left before a lock-out`,
      );
    }
    failures = 0;
    lockouts = 0;
  }

  return {
    verify,

    /** Opens a session with the PIN. */
    open(pin: string): { token: string; idleTimeoutS: number } {
      verify(pin);
      const token = randomBytes(32).toString('base64url');
      sessions.set(tokenKey(token), now());
      return { token, idleTimeoutS: Math.round(options.sessionMs / 1000) };
    },

    /** Throws unless `token` is a session used within the idle timeout; each use extends it. */
    check(token: string | undefined) {
      for (const [key, used] of sessions) if (now() - used > options.sessionMs) sessions.delete(key);
      const key = token ? tokenKey(token) : '';
      if (!sessions.has(key)) {
        throw new DoorError(
          401,
          'staff_session_required',
          'Open a staff session with the PIN (POST /staff/session) and send its token as x-staff-session',
        );
      }
      sessions.set(key, now());
    },

    close(token: string | undefined) {
      if (token) sessions.delete(tokenKey(token));
    },

    /**
     * Guests on the replica whose name has a word starting with each word of `query` (accents and
     * case ignored), by name. The replica holds names only: no e-mail is kept on the device.
     */
    search(replica: EventReplica, query: string, limit: number) {
      const wanted = foldText(query)
        .split(/[\s'’.-]+/)
        .filter(Boolean);
      const found: ReplicaGuest[] = [];
      for (const guest of replica.guests.values()) {
        const have = wordsOf(guest);
        if (wanted.every((w) => have.some((h) => h.startsWith(w)))) found.push(guest);
      }
      found.sort((a, b) => a.name.localeCompare(b.name));
      return found.slice(0, limit).map((g) => ({ guestId: g.guestId, name: g.name, checkedIn: g.checkedIn }));
    },
  };
}

export type Staff = ReturnType<typeof createStaff>;
