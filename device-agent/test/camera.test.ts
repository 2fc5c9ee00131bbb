// Which camera the agent uses, and node-webcam driven for real against stand-in `fswebcam` scripts
// (these machines have no camera and no fswebcam): a shot, and "No webcam found" as a clear error.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent } from '../src/agent.js';
import { chooseCamera, onPath, openCamera } from '../src/camera.js';
import { loadAgentConfig } from '../src/config.js';
import { DoorError } from '../src/door.js';

const JPEG = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
  randomBytes(512),
  Buffer.from([0xff, 0xd9]),
]);

/** A directory holding an executable `fswebcam` with this shell body. */
async function fakeFswebcam(body: string) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'portico-fswebcam-'));
  const bin = path.join(dir, 'fswebcam');
  await writeFile(bin, `#!/bin/sh\n${body}\n`);
  await chmod(bin, 0o755);
  return dir;
}

/** What fswebcam prints when /dev/video0 does not exist. */
const MISSING = `echo 'Opening /dev/video0...' >&2; echo 'stat: No such file or directory' >&2`;

describe('camera selection', () => {
  let photo: string;
  let empty: string;
  const originalPath = process.env.PATH;

  beforeAll(async () => {
    empty = await mkdtemp(path.join(os.tmpdir(), 'portico-nopath-'));
    photo = path.join(empty, 'door.jpg');
    await writeFile(photo, JPEG);
  });
  afterAll(() => {
    process.env.PATH = originalPath;
  });

  it('chooses node-webcam when fswebcam is on the PATH, the file source otherwise, and what AGENT_CAMERA forces', () => {
    const set = (camera: 'auto' | 'webcam' | 'file', frameSource?: string) => ({
      camera,
      frameSource,
      webcamDevice: '/dev/video2',
    });
    expect(chooseCamera(set('auto', photo), true)).toEqual({ kind: 'webcam', device: '/dev/video2' });
    expect(chooseCamera(set('auto', photo), false)).toEqual({ kind: 'file', source: photo });
    expect(chooseCamera(set('auto'), false)).toMatchObject({
      kind: 'none',
      why: expect.stringMatching(/fswebcam is not on the PATH/),
    });
    expect(chooseCamera(set('file', photo), true)).toEqual({ kind: 'file', source: photo });
    expect(chooseCamera(set('file'), true)).toMatchObject({
      kind: 'none',
      why: expect.stringMatching(/FRAME_SOURCE/),
    });
    expect(chooseCamera(set('webcam', photo), false)).toMatchObject({
      kind: 'none',
      why: expect.stringMatching(/apt install fswebcam/),
    });
  });

  it('finds fswebcam only as an executable file in a PATH directory', async () => {
    const withBin = await fakeFswebcam('exit 0');
    const notExecutable = await mkdtemp(path.join(os.tmpdir(), 'portico-noexec-'));
    await writeFile(path.join(notExecutable, 'fswebcam'), '#!/bin/sh\n');
    expect(onPath('fswebcam', [empty, withBin].join(path.delimiter))).toBe(true);
    expect(onPath('fswebcam', [empty, notExecutable].join(path.delimiter))).toBe(false);
    expect(onPath('fswebcam', '')).toBe(false);
    expect(onPath('fswebcam', undefined)).toBe(false);
  });

  it('uses the file source in an agent whose PATH has no fswebcam, and says why there is no camera without one', async () => {
    const config = (extra: Record<string, string>) =>
      loadAgentConfig({
        PORTICO_CLOUD_URL: 'http://127.0.0.1:9',
        INTERNAL_SECRET: 'x'.repeat(32),
        DEVICE_TOKEN: 'pdt_test',
        EVENT_TOKENS: 'evt_camera_0123456789',
        AGENT_PORT: '0',
        AGENT_DATA_KEY: randomBytes(32).toString('base64'),
        MAX_BACKOFF_MS: '1000',
        ...extra,
      });
    const withFile = await startAgent(
      config({ AGENT_DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'portico-cam-')), FRAME_SOURCE: photo }),
      { pathVar: empty },
    );
    try {
      expect(withFile.camera).toEqual({ kind: 'file', source: photo });
    } finally {
      await withFile.stop();
    }
    expect(await openCamera({ kind: 'file', source: photo }).frame()).toBe(JPEG.toString('base64'));

    const without = await startAgent(
      config({ AGENT_DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'portico-cam-')) }),
      { pathVar: empty },
    );
    try {
      expect(without.camera.kind).toBe('none');
      const res = await fetch(`${without.url}/events/evt_camera_0123456789/identify-camera`, {
        method: 'POST',
      });
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({
        code: 'no_camera',
        detail: expect.stringMatching(/fswebcam/),
      });
    } finally {
      await without.stop();
    }
  });

  it('takes a shot through node-webcam and fswebcam, leaving no file behind', async () => {
    // fswebcam's last argument is the output file.
    process.env.PATH = [
      await fakeFswebcam(`for out; do :; done; cat '${photo}' > "$out"`),
      originalPath,
    ].join(path.delimiter);
    const before = (await readdir(os.tmpdir())).filter((f) => f.startsWith('portico-shot-'));
    const camera = openCamera({ kind: 'webcam', device: undefined });
    expect(await camera.frame()).toBe(JPEG.toString('base64'));
    expect((await readdir(os.tmpdir())).filter((f) => f.startsWith('portico-shot-'))).toEqual(before);
  });

  it('reports node-webcam’s "No webcam found" as 503 no_camera, whether fswebcam exits 0 or not', async () => {
    for (const exit of [0, 1]) {
      process.env.PATH = [await fakeFswebcam(`${MISSING}; exit ${exit}`), originalPath].join(path.delimiter);
      const error = await openCamera({ kind: 'webcam', device: '/dev/video0' })
        .frame()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DoorError);
      expect(error).toMatchObject({ status: 503, code: 'no_camera' });
      expect((error as Error).message).toMatch(/^No webcam found: fswebcam could not open \/dev\/video0/);
    }
    process.env.PATH = [
      await fakeFswebcam(`echo 'VIDIOC_DQBUF: Input/output error' >&2; exit 1`),
      originalPath,
    ].join(path.delimiter);
    await expect(openCamera({ kind: 'webcam', device: undefined }).frame()).rejects.toMatchObject({
      code: 'camera_failed',
      message: expect.stringMatching(/Input\/output error/),
    });
  });
});
