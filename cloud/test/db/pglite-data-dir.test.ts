import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newId, openDatabase } from '../../src/infra/db/index.js';
import { acquireDataDirLock } from '../../src/infra/db/lock.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'portico-data-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const writeLock = (dir: string, pid: number) =>
  writeFile(
    join(dir, 'portico.lock'),
    JSON.stringify({ pid, host: hostname(), since: '2026-01-01T00:00:00.000Z' }),
  );

describe('PGlite data directory lock', () => {
  it('lets one holder in at a time within a process', async () => {
    const dir = await tempDir();
    const release = await acquireDataDirLock(dir);
    await expect(acquireDataDirLock(dir)).rejects.toThrow(/already open in this process/);
    expect(JSON.parse(await readFile(join(dir, 'portico.lock'), 'utf8'))).toMatchObject({ pid: process.pid });
    await release();
    await (
      await acquireDataDirLock(dir)
    )();
  });

  it('refuses a directory held by another live process', async () => {
    const dir = await tempDir();
    await writeLock(dir, process.ppid);
    await expect(acquireDataDirLock(dir)).rejects.toThrow(
      new RegExp(`in use by process ${process.ppid} .*one process per data directory`),
    );
  });

  it('takes over a lock left by a dead process or an earlier run with our pid', async () => {
    const dir = await tempDir();
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid!;
    await writeLock(dir, deadPid);
    await (
      await acquireDataDirLock(dir)
    )();

    await writeLock(dir, process.pid);
    await (
      await acquireDataDirLock(dir)
    )();
  });

  it('persists to ${dataDir}/pglite and refuses a second opener while open', async () => {
    const dataDir = await tempDir();
    const db = await openDatabase({ dataDir });
    await db.prisma.tenant.create({
      data: { id: newId(), slug: 'persisted', name: 'P', webhookSecretEnc: Buffer.alloc(1) },
    });
    await expect(openDatabase({ dataDir })).rejects.toThrow(/already open in this process/);
    await db.close();

    const reopened = await openDatabase({ dataDir });
    cleanups.push(reopened.close);
    expect(await reopened.prisma.tenant.findUnique({ where: { slug: 'persisted' } })).not.toBeNull();
  }, 180_000);
});
