// One process per PGlite data directory. PGlite has no lock of its own and two processes on the
// same files corrupt them, so the owner writes `${dir}/portico.lock` holding its pid. To reach the
// embedded database while the server runs, go through its API (or stop it), never the files.
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

/** Directories this process holds, to tell "reopened in this process" from a stale lock. */
const heldHere = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Another live process holds the embedded database's directory (an operator's mistake, not a bug). */
export class DataDirLockedError extends Error {}

/** Takes the lock on `dir` or throws; resolves to the function that releases it. */
export async function acquireDataDirLock(dir: string): Promise<() => Promise<void>> {
  const key = resolve(dir);
  const file = join(key, 'portico.lock');
  if (heldHere.has(key)) {
    throw new Error(`The embedded database in ${key} is already open in this process; close it first.`);
  }
  // Written aside and hard-linked into place: the lock file appears atomically and complete.
  const pending = `${file}.${process.pid}.${Date.now()}`;
  await writeFile(
    pending,
    JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }),
  );
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await link(pending, file);
        heldHere.add(key);
        return async () => {
          heldHere.delete(key);
          await rm(file, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const owner = await readOwner(file);
      // Our own pid in a lock we do not hold is a leftover of an earlier run that had the same
      // pid (typical for pid 1 in a restarted container); a dead pid is a crashed owner.
      const stale = !owner || (owner.host === hostname() && (owner.pid === process.pid || !alive(owner.pid)));
      if (!stale) {
        throw new DataDirLockedError(
          `The embedded database in ${key} is in use by process ${owner.pid} on ${owner.host} (since ` +
            `${owner.since}). PGlite allows one process per data directory: stop that process or reach ` +
            `the database through it. If it is not running, delete ${file}.`,
        );
      }
      await rm(file, { force: true });
    }
  } finally {
    await rm(pending, { force: true });
  }
  throw new Error(`Could not take the lock ${file}: another process keeps creating it.`);
}

async function readOwner(file: string): Promise<{ pid: number; host: string; since: string } | undefined> {
  try {
    const owner = JSON.parse(await readFile(file, 'utf8')) as {
      pid?: unknown;
      host?: unknown;
      since?: unknown;
    };
    if (typeof owner.pid !== 'number' || typeof owner.host !== 'string') return undefined;
    return { pid: owner.pid, host: owner.host, since: String(owner.since) };
  } catch {
    return undefined;
  }
}
