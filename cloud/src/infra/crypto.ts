// Encryption at rest and token primitives. Biometric templates and images, MFA secrets and webhook
// secrets go through `Cipher`; bearer tokens are stored only as SHA-256 hashes.
import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface Cipher {
  /** AES-256-GCM; output = version(1) | iv(12) | tag(16) | ciphertext. `context` is bound as AAD. */
  encrypt(plain: Buffer | Uint8Array, context?: string): Buffer<ArrayBuffer>;
  decrypt(sealed: Buffer | Uint8Array, context?: string): Buffer<ArrayBuffer>;
  encryptString(plain: string, context?: string): Buffer<ArrayBuffer>;
  decryptString(sealed: Buffer | Uint8Array, context?: string): string;
}

export function createCipher(key: Buffer): Cipher {
  if (key.length !== 32) throw new Error('data encryption key must be 32 bytes');
  const encrypt: Cipher['encrypt'] = (plain, context = '') => {
    const iv = randomBytes(IV_BYTES);
    const c = createCipheriv('aes-256-gcm', key, iv);
    c.setAAD(Buffer.from(context));
    const body = Buffer.concat([c.update(plain), c.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, c.getAuthTag(), body]);
  };
  const decrypt: Cipher['decrypt'] = (sealed, context = '') => {
    // A view, not a copy (a gallery snapshot's chunk is megabytes).
    const buf = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    if (buf[0] !== VERSION || buf.length < 1 + IV_BYTES + TAG_BYTES)
      throw new Error('unknown ciphertext format');
    const iv = buf.subarray(1, 1 + IV_BYTES);
    const tag = buf.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const d = createDecipheriv('aes-256-gcm', key, iv);
    d.setAAD(Buffer.from(context));
    d.setAuthTag(tag);
    const body = d.update(buf.subarray(1 + IV_BYTES + TAG_BYTES));
    const rest = d.final();
    return rest.length === 0 ? body : Buffer.concat([body, rest]);
  };
  return {
    encrypt,
    decrypt,
    encryptString: (plain, context) => encrypt(Buffer.from(plain, 'utf8'), context),
    decryptString: (sealed, context) => decrypt(sealed, context).toString('utf8'),
  };
}

/** A URL-safe random token with a readable prefix, e.g. `rt_…`. */
export function randomToken(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Constant-time string comparison: both sides are hashed first so neither content nor length leaks. */
export function safeEqual(a: string, b: string): boolean {
  const ah = createHash('sha256').update(a).digest();
  const bh = createHash('sha256').update(b).digest();
  return timingSafeEqual(ah, bh);
}
