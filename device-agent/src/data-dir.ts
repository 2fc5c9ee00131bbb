// The agent's data folder and the key that seals it. The folder is private to the agent's user (0700)
// and, without AGENT_DATA_KEY, holds the key itself (`data.key`, 0600, made once on the first start
// and reused): a restart then needs nothing from whoever started it. A key-check record sealed under
// the key tells at start whether the key opens the data, before anything is read or written; a key
// that does not stops the agent with a StartError, nothing changed or deleted.
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { createSealer, type Sealer } from './sealed.js';

export const KEY_FILE = 'data.key';
/** The key a rotation re-seals the folder under, until it is done (rotate-key.ts). */
export const NEXT_KEY_FILE = 'data.key.next';
const LOCK_FILE = 'agent.pid';
const CHECK_FILE = 'key-check';
const CHECK_CONTEXT = 'agent-key-check';
const CHECK_PLAIN = Buffer.from('portico agent data');

/** Where the data key came from. */
export type KeySource = 'AGENT_DATA_KEY' | typeof KEY_FILE;

/** Why the agent will not start, said to whoever started it (a message, not a stack trace). */
export class StartError extends Error {
  override name = 'StartError';
}

/** What opens the sealed data of a folder. */
export interface DataKey {
  key: Buffer;
  source: KeySource;
  sealer: Sealer;
}

/** Creates the folder (0700) if needed and makes an existing one private again. */
export function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

export function writeAll(fd: number, buf: Buffer): void {
  let at = 0;
  while (at < buf.length) at += writeSync(fd, buf, at, buf.length - at);
}

function syncDir(dir: string) {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a whole file under a temporary name (0600), flushes it to the disk and renames it into place:
 * after a crash the file is the old one or the new one, never half written.
 */
export function replaceFile(file: string, write: (fd: number) => void): void {
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    write(fd);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  syncDir(path.dirname(file));
}

export const writePrivateFile = (file: string, content: string | Buffer): void =>
  replaceFile(file, (fd) => writeAll(fd, Buffer.from(content)));

export function parseKey(base64: string, what: string): Buffer {
  const key = Buffer.from(base64.trim(), 'base64');
  if (key.length !== 32) throw new StartError(`${what} must be 32 bytes in base64`);
  return key;
}

/**
 * The key of `dir`: AGENT_DATA_KEY when given, else `dir/data.key`, made now when the folder has
 * none (`create: false` for commands that must not make one, e.g. doctor).
 */
export function dataKeyOf(dir: string, fromEnv: Buffer | undefined, options = { create: true }): DataKey {
  const file = path.join(dir, KEY_FILE);
  let key = fromEnv;
  let source: KeySource = 'AGENT_DATA_KEY';
  if (!key) {
    source = KEY_FILE;
    if (existsSync(file)) key = parseKey(readFileSync(file, 'utf8'), file);
    else if (!options.create)
      throw new StartError(`no key: AGENT_DATA_KEY is not set and ${file} does not exist`);
    else {
      key = randomBytes(32);
      // `wx`: two agents started at once on one folder cannot both make a key.
      writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    }
    chmodSync(file, 0o600);
  }
  return { key, source, sealer: createSealer(key) };
}

/** How a wrong key is explained: which key, which folder, what to do. Nothing is changed. */
export function wrongKeyMessage(dir: string, source: KeySource): string {
  const which =
    source === 'AGENT_DATA_KEY'
      ? 'AGENT_DATA_KEY does not open'
      : `the key in ${path.join(dir, KEY_FILE)} (AGENT_DATA_KEY is not set) does not open`;
  return (
    `${which} the data in ${dir}: it was sealed under another key. Nothing was changed or deleted. ` +
    `Start the agent with the key the data was sealed with (AGENT_DATA_KEY as before, or unset it to use ` +
    `${KEY_FILE} in that folder), or see "Data folder, key and recovery" in device-agent/README.md.`
  );
}

/** Whether the folder's key-check record opens under the key: `absent` on a folder that never had one. */
export function checkKey(dir: string, sealer: Sealer): 'ok' | 'wrong' | 'absent' {
  const file = path.join(dir, CHECK_FILE);
  if (!existsSync(file)) return 'absent';
  try {
    return sealer.openBytes(readFileSync(file), CHECK_CONTEXT).equals(CHECK_PLAIN) ? 'ok' : 'wrong';
  } catch {
    return 'wrong';
  }
}

/** Writes the key-check record, once the data has been read under the key. */
export function writeKeyCheck(dir: string, sealer: Sealer): void {
  writePrivateFile(path.join(dir, CHECK_FILE), sealer.sealBytes(CHECK_PLAIN, CHECK_CONTEXT));
}

/** AES-GCM's refusal of a record sealed under another key (or altered). */
export function isWrongKey(error: unknown): boolean {
  return error instanceof Error && /unable to authenticate data/.test(error.message);
}

/**
 * Takes the folder for this process (`agent.pid`): one agent, or one rotation, at a time. A lock whose
 * process is gone (a crash, a SIGKILL) is taken over. Returns the release.
 */
export function lockDir(dir: string, what: string): () => void {
  const file = path.join(dir, LOCK_FILE);
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { mode: 0o600, flag: 'wx' });
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const pid = Number(readFileSync(file, 'utf8'));
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
      throw new StartError(
        `${dir} is in use by process ${pid} (an agent or a key rotation): stop it before ${what}`,
      );
    }
    rmSync(file, { force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A rotation cut short leaves its key behind: the agent does not start on a half re-sealed folder. */
export function unfinishedRotation(dir: string): StartError | null {
  return existsSync(path.join(dir, NEXT_KEY_FILE))
    ? new StartError(
        `a key rotation of ${dir} was interrupted: run \`pnpm agent rotate-key\` again to finish it ` +
          '(with the same AGENT_DATA_KEY, if it was set)',
      )
    : null;
}
