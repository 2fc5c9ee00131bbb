// `pnpm agent rotate-key`: the folder re-sealed in place under a new key (queue, names, templates,
// credentials), the old key refused afterwards, and a rotation cut short finished by running it again.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMBEDDING_MODEL_ID, embeddingToBuffer } from '@portico/face-engine';
import type { Replica as Page } from '@portico/contract';
import { describe, expect, it } from 'vitest';
import { checkKey, dataKeyOf, NEXT_KEY_FILE, StartError, writePrivateFile } from '../src/data-dir.js';
import { openDeviceState, writeDeviceState } from '../src/device-state.js';
import { openData } from '../src/open-data.js';
import { rotateKey } from '../src/rotate-key.js';
import { createSealer } from '../src/sealed.js';
import type { QueuedItem } from '../src/sync-item.js';

const TOKEN = 'tok';
const link = { cloudUrl: 'http://127.0.0.1:9', internalSecret: 'x'.repeat(24), deviceToken: 'pdt_x' };
const vector = new Float32Array(512).map((_, i) => Math.sin(i));
const page: Page = {
  event: { id: 'e', name: 'Gala', status: 'open', checkinMethods: [], capacity: null, geofence: null },
  policy: {
    tenantId: 't',
    modelId: EMBEDDING_MODEL_ID,
    matchThreshold: 0.57,
    requireLiveness: false,
    livenessThreshold: 0.5,
    syncCheckinImages: false,
  } as Page['policy'],
  items: ['a', 'b'].map((id) => ({
    guestId: id,
    name: `Guest ${id}`,
    status: 'confirmed',
    checkedInAt: null,
    personId: `p-${id}`,
    qrHash: `hash-${id}`,
    template: { modelId: EMBEDDING_MODEL_ID, embedding: embeddingToBuffer(vector).toString('base64') },
  })),
  removed: [],
  revokedPersons: [],
  nextCursor: null,
  checkpoint: '1.1',
} as unknown as Page;

/** A folder as an agent leaves it: a replica with templates, two queued decisions, a last sync. */
async function folder(dataKey?: Buffer) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'portico-rotate-'));
  const config = { dataDir, dataKey, link, eventTokens: [TOKEN] };
  const data = await openData(config);
  await data.replica.apply(TOKEN, page, true, 1000);
  for (const n of [1, 2]) {
    await data.queue.add({ clientId: `c-${n}`, eventToken: TOKEN, guestId: 'a' } as unknown as QueuedItem, n);
  }
  data.device.update({ lastSyncAt: 1234 });
  await data.db.close();
  data.release();
  return config;
}

/** Everything the agent reads at start, with the folder's key now. */
async function reopened(config: Awaited<ReturnType<typeof folder>>) {
  const data = await openData(config);
  try {
    const replica = data.replica.get(TOKEN)!;
    return {
      names: [...replica.guests.values()].map((g) => g.name).sort(),
      templates: replica.index.size,
      score: replica.index.search(vector, 1)[0]?.score,
      queued: (await data.queue.oldest(10)).map((i) => i.clientId),
      lastSyncAt: data.device.get().lastSyncAt,
    };
  } finally {
    await data.db.close();
    data.release();
  }
}

const expected = {
  names: ['Guest a', 'Guest b'],
  templates: 2,
  score: expect.closeTo(1, 3),
  queued: ['c-1', 'c-2'],
  lastSyncAt: 1234,
};

describe('rotate-key', () => {
  it('re-seals the folder in place under a new data.key; the old key no longer opens it', async () => {
    const config = await folder();
    const oldKey = await readFile(path.join(config.dataDir, 'data.key'), 'utf8');
    const rotated = await rotateKey(config);
    expect(rotated).toEqual({ records: 6, newKey: null });
    const newKey = await readFile(path.join(config.dataDir, 'data.key'), 'utf8');
    expect(newKey).not.toBe(oldKey);
    expect(checkKey(config.dataDir, createSealer(Buffer.from(oldKey, 'base64')))).toBe('wrong');
    expect(await reopened(config)).toEqual(expected);
    // Every record moved: the old key opens none of them.
    const old = { ...config, dataKey: Buffer.from(oldKey, 'base64') };
    await expect(openData(old)).rejects.toThrow(/does not open the data/);
  });

  it('with AGENT_DATA_KEY, answers the new key for the operator and leaves no key in the folder', async () => {
    const key = randomBytes(32);
    const config = await folder(key);
    const rotated = await rotateKey(config);
    expect(rotated.newKey).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    await expect(openData(config)).rejects.toThrow(/AGENT_DATA_KEY does not open the data/);
    expect(await reopened({ ...config, dataKey: Buffer.from(rotated.newKey!, 'base64') })).toEqual(expected);
    expect(() => dataKeyOf(config.dataDir, undefined, { create: false })).toThrow(StartError);
  });

  it('cut short, keeps the agent from starting and is finished by running it again', async () => {
    const config = await folder();
    // As a rotation killed after its first steps: the next key written, the credentials re-sealed.
    const next = randomBytes(32);
    writePrivateFile(path.join(config.dataDir, NEXT_KEY_FILE), next.toString('base64'));
    const { sealer } = dataKeyOf(config.dataDir, undefined);
    const state = openDeviceState(config.dataDir, sealer).get();
    writeDeviceState(config.dataDir, createSealer(next), state);
    await expect(openData(config)).rejects.toThrow(
      /key rotation .* was interrupted: run `pnpm agent rotate-key` again/,
    );

    await rotateKey(config);
    expect(await readFile(path.join(config.dataDir, 'data.key'), 'utf8')).toBe(next.toString('base64'));
    expect(await reopened(config)).toEqual(expected);
  });

  it('refuses while an agent runs on the folder', async () => {
    const config = await folder();
    const agent = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'),
      env: {
        ...process.env,
        AGENT_DATA_DIR: config.dataDir,
        PORTICO_CLOUD_URL: link.cloudUrl,
        INTERNAL_SECRET: link.internalSecret,
        DEVICE_TOKEN: link.deviceToken,
        EVENT_TOKENS: TOKEN,
        AGENT_FACE: 'off',
        AGENT_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) =>
      agent.stdout.on('data', (d: Buffer) => d.includes('listening') && resolve()),
    );
    await expect(rotateKey(config)).rejects.toThrow(
      new RegExp(`in use by process ${agent.pid} .*stop it before rotating the key`),
    );
    await new Promise((resolve) => agent.once('exit', resolve).kill('SIGTERM'));
    // Stopped, it gave the folder back.
    await expect(rotateKey(config)).resolves.toMatchObject({ records: 6 });
  });
});
