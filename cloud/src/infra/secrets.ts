// Service secrets: from the environment when given, else generated once into DATA_DIR/secrets.json
// (mode 0600) so a restart keeps sessions valid and encrypted data readable.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';

export interface Secrets {
  /** HMAC key for session and portal JWTs (HS256, algorithm pinned on verify). */
  jwtKey: Uint8Array;
  /** AES-256-GCM key for biometric data and other secrets at rest. */
  dataKey: Buffer;
  /** Shared secret edge devices send as `x-internal-secret`. */
  internalSecret: string;
  /** Password of the service's own connection to the message bus (username `config.mqtt.username`). */
  busPassword: string;
}

interface StoredSecrets {
  jwtSecret: string;
  dataEncryptionKey: string;
  internalSecret: string;
  /** Added after the others: a secrets.json written before the bus had credentials gains it. */
  busPassword?: string;
}

export async function loadSecrets(config: Pick<Config, 'dataDir' | 'secrets'>): Promise<Secrets> {
  const file = path.join(config.dataDir, 'secrets.json');
  let stored = await readOrCreate(file);
  if (!stored.busPassword && !config.secrets.busPassword) stored = await addBusPassword(file, stored);
  const jwtSecret = config.secrets.jwtSecret ?? stored.jwtSecret;
  const dataKey = Buffer.from(config.secrets.dataEncryptionKey ?? stored.dataEncryptionKey, 'base64');
  if (dataKey.length !== 32)
    throw new Error(`DATA_ENCRYPTION_KEY must be 32 bytes (base64); got ${dataKey.length}`);
  return {
    jwtKey: new TextEncoder().encode(jwtSecret),
    dataKey,
    internalSecret: config.secrets.internalSecret ?? stored.internalSecret,
    busPassword: config.secrets.busPassword ?? stored.busPassword!,
  };
}

/** Writes a bus password into an older secrets.json, keeping its other keys (written whole, then renamed). */
async function addBusPassword(file: string, stored: StoredSecrets): Promise<StoredSecrets> {
  const updated = { ...stored, busPassword: randomBytes(32).toString('base64url') };
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, JSON.stringify(updated, null, 2), { mode: 0o600 });
  await rename(temporary, file);
  return updated;
}

async function readOrCreate(file: string): Promise<StoredSecrets> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as StoredSecrets;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const fresh: StoredSecrets = {
    jwtSecret: randomBytes(48).toString('base64url'),
    dataEncryptionKey: randomBytes(32).toString('base64'),
    internalSecret: randomBytes(32).toString('base64url'),
    busPassword: randomBytes(32).toString('base64url'),
  };
  await mkdir(path.dirname(file), { recursive: true });
  // 'wx' fails if another process created it meanwhile: then read theirs, never overwrite keys.
  try {
    await writeFile(file, JSON.stringify(fresh, null, 2), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return JSON.parse(await readFile(file, 'utf8'));
    throw err;
  }
  await chmod(file, 0o600);
  return fresh;
}
