import { randomBytes, randomInt } from 'node:crypto';

let lastMs = 0;
let counter = 0;

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, a 12-bit counter, then 62 random bits. Ids sort by
 * creation time, and within one process ids made in the same millisecond sort in the order they were
 * made (the counter, RFC 9562 section 6.2 method 1), so primary-key indexes stay append-mostly and
 * lists ordered by id are ordered by creation.
 */
export function newId(): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    // Start low in the range so that many ids can follow in the same millisecond.
    counter = randomInt(0, 0x800);
  } else if (++counter > 0xfff) {
    // 4096 ids in one millisecond (or a clock that stepped back): borrow the next millisecond.
    lastMs += 1;
    counter = 0;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | (counter >> 8); // version 7, counter high bits
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f); // variant 10
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
