// Password hashing: argon2id with OWASP's recommended parameters (19 MiB, 2 passes, 1 lane).
import { randomBytes } from 'node:crypto';
import { hash, verify, type Options } from '@node-rs/argon2';

// `Algorithm` is an ambient const enum (unusable under verbatimModuleSyntax): 2 is Argon2id.
const ARGON2ID = 2 as Options['algorithm'];
const OPTIONS: Options = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** A strong password for generated accounts: 24 URL-safe characters (144 bits). */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
