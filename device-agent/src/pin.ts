// The staff PIN at rest: only a salted scrypt hash, `scrypt:<salt>:<hash>` (base64url), in the agent's
// environment (`STAFF_PIN_HASH`, made by `pnpm --filter @portico/device-agent hash-pin`).
import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';

const SCRYPT = { N: 16384, r: 8, p: 1 };
const KEY_BYTES = 32;
export const PIN_PATTERN = /^\d{4,12}$/;

/** `scrypt:<salt>:<hash>` (base64url): what `STAFF_PIN_HASH` holds (`pnpm --filter @portico/device-agent hash-pin`). */
export function hashPin(pin: string, salt: Buffer = randomBytes(16)): string {
  if (!PIN_PATTERN.test(pin)) throw new Error('a staff PIN is 4 to 12 digits');
  const hash = scryptSync(pin, salt, KEY_BYTES, SCRYPT);
  return `scrypt:${salt.toString('base64url')}:${hash.toString('base64url')}`;
}

export function isPinHash(value: string): boolean {
  return /^scrypt:[\w-]{16,}:[\w-]{40,}$/.test(value);
}

export function pinMatches(pin: string, stored: string): boolean {
  const [, salt, hash] = stored.split(':');
  const want = Buffer.from(hash!, 'base64url');
  const got = scryptSync(pin, Buffer.from(salt!, 'base64url'), want.length, SCRYPT);
  return timingSafeEqual(got, want);
}
