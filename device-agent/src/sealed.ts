// Data at rest on the device (face templates, queued check-ins): AES-256-GCM under the key from the
// environment, with what the data is bound as associated data so a sealed value cannot be moved.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
export const TAG_BYTES = 16;

export interface Sealer {
  /** iv | tag | ciphertext, in base64 (a document field). */
  seal(plain: Buffer, context: string): string;
  open(sealed: string, context: string): Buffer;
  /** iv | tag | ciphertext (a file record). */
  sealBytes(plain: Buffer, context: string): Buffer;
  openBytes(sealed: Buffer, context: string): Buffer;
  /** A long plaintext sealed piece by piece (a snapshot file): the iv first, the tag once it is all sealed. */
  sealing(context: string): { iv: Buffer; update(plain: Buffer): Buffer; final(): Buffer };
  /**
   * The opening of a piece-by-piece seal: `update` gives plaintext before the tag is checked, so the
   * caller keeps nothing of it unless `final` returns (it throws when anything was altered).
   */
  opening(context: string, iv: Buffer, tag: Buffer): { update(sealed: Buffer): Buffer; final(): void };
}

export function createSealer(key: Buffer): Sealer {
  if (key.length !== 32) throw new Error('the data key must be 32 bytes');
  const sealing = (context: string) => {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(context));
    return {
      iv,
      update: (plain: Buffer) => cipher.update(plain),
      final: () => {
        cipher.final();
        return cipher.getAuthTag();
      },
    };
  };
  const opening = (context: string, iv: Buffer, tag: Buffer) => {
    const decipher = createDecipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(context));
    decipher.setAuthTag(tag);
    return {
      update: (sealed: Buffer) => decipher.update(sealed),
      final: () => void decipher.final(),
    };
  };
  const sealBytes = (plain: Buffer, context: string) => {
    const s = sealing(context);
    const body = s.update(plain);
    return Buffer.concat([s.iv, s.final(), body]);
  };
  const openBytes = (raw: Buffer, context: string) => {
    const o = opening(context, raw.subarray(0, IV_BYTES), raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const plain = o.update(raw.subarray(IV_BYTES + TAG_BYTES));
    o.final();
    return plain;
  };
  return {
    seal: (plain, context) => sealBytes(plain, context).toString('base64'),
    open: (sealed, context) => openBytes(Buffer.from(sealed, 'base64'), context),
    sealBytes,
    openBytes,
    sealing,
    opening,
  };
}
