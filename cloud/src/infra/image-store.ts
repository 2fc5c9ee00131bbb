// Biometric images at rest: one AES-256-GCM encrypted file per image under
// `DATA_DIR/images/<tenantId>/<imageId>.bin` (mode 0600), bound to its tenant and id as AAD. The
// BiometricImage row (sha256, size, content type) is the caller's job, in its own transaction.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Cipher } from './crypto.js';

export interface StoredImage {
  /** Relative to DATA_DIR: `images/<tenantId>/<imageId>.bin`. */
  storageKey: string;
  sha256: string;
  byteSize: number;
}

export interface ImageStore {
  save(tenantId: string, imageId: string, bytes: Buffer): Promise<StoredImage>;
  /** The decrypted bytes of a stored image (a face model switch re-embeds enrollment photos). */
  read(tenantId: string, imageId: string, storageKey: string): Promise<Buffer>;
  /** Deletes the file; a file already gone is fine (erasure is idempotent). */
  erase(storageKey: string): Promise<void>;
  /** Absolute path of a storage key (tests check the disk with it). */
  pathOf(storageKey: string): string;
}

const SAFE = /^[A-Za-z0-9_-]+$/;

export function createImageStore(deps: { dataDir: string; cipher: Cipher }): ImageStore {
  const root = path.resolve(deps.dataDir);
  const context = (tenantId: string, imageId: string) => `biometric-image:${tenantId}:${imageId}`;
  const pathOf = (storageKey: string) => {
    const full = path.resolve(root, storageKey);
    if (!full.startsWith(root + path.sep)) throw new Error('storage key outside the data directory');
    return full;
  };
  return {
    async save(tenantId, imageId, bytes) {
      if (!SAFE.test(tenantId) || !SAFE.test(imageId)) throw new Error('unsafe image path segment');
      const storageKey = path.posix.join('images', tenantId, `${imageId}.bin`);
      const file = pathOf(storageKey);
      await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
      await writeFile(file, deps.cipher.encrypt(bytes, context(tenantId, imageId)), {
        mode: 0o600,
        flag: 'wx',
      });
      return { storageKey, sha256: createHash('sha256').update(bytes).digest('hex'), byteSize: bytes.length };
    },
    async read(tenantId, imageId, storageKey) {
      return deps.cipher.decrypt(await readFile(pathOf(storageKey)), context(tenantId, imageId));
    },
    async erase(storageKey) {
      await rm(pathOf(storageKey), { force: true });
    },
    pathOf,
  };
}
