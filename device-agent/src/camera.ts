// Where identify-camera's frames come from. A headless unit with a camera uses node-webcam, which runs
// Debian's `fswebcam` for each shot; tests, demos and units fed by another process use a still image or
// a folder of images (FRAME_SOURCE), read in name order, one after the other.
import { accessSync, constants } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import NodeWebcam, { type WebcamOptions } from 'node-webcam';
import { DoorError } from './door.js';

const IMAGE = /\.(jpe?g|png)$/i;

export interface FrameSource {
  /** The next frame, base64 JPEG or PNG. */
  frame(): Promise<string>;
}

export type CameraChoice =
  | { kind: 'webcam'; device: string | undefined }
  | { kind: 'file'; source: string }
  | { kind: 'none'; why: string };

/** Whether `bin` is an executable file in one of the PATH's directories. */
export function onPath(bin: string, pathVar: string | undefined): boolean {
  return (pathVar ?? '').split(path.delimiter).some((dir) => {
    if (!dir) return false;
    try {
      accessSync(path.join(dir, bin), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * The camera for the settings. `auto`: node-webcam when `fswebcam` is on the PATH, otherwise the
 * FRAME_SOURCE file or folder; `webcam` and `file` force one (a demo from photos on a unit that has a
 * camera, or a unit whose fswebcam lives elsewhere on the PATH of another user).
 */
export function chooseCamera(
  settings: {
    camera: 'auto' | 'webcam' | 'file';
    frameSource: string | undefined;
    webcamDevice: string | undefined;
  },
  hasFswebcam: boolean,
): CameraChoice {
  const webcam: CameraChoice = { kind: 'webcam', device: settings.webcamDevice };
  const file: CameraChoice = settings.frameSource
    ? { kind: 'file', source: settings.frameSource }
    : { kind: 'none', why: 'No camera: fswebcam is not on the PATH and FRAME_SOURCE is not set' };
  if (settings.camera === 'webcam') {
    return hasFswebcam
      ? webcam
      : { kind: 'none', why: 'AGENT_CAMERA=webcam, but fswebcam is not on the PATH (apt install fswebcam)' };
  }
  if (settings.camera === 'file') {
    return settings.frameSource
      ? file
      : { kind: 'none', why: 'AGENT_CAMERA=file, but FRAME_SOURCE is not set' };
  }
  return hasFswebcam ? webcam : file;
}

export function createFrameSource(source: string): FrameSource {
  let next = 0;
  return {
    async frame() {
      const files = (await stat(source)).isDirectory()
        ? (await readdir(source))
            .filter((f) => IMAGE.test(f))
            .sort()
            .map((f) => path.join(source, f))
        : [source];
      if (files.length === 0) throw new Error(`no JPEG or PNG image in ${source}`);
      const file = files[next++ % files.length]!;
      return (await readFile(file)).toString('base64');
    },
  };
}

/** What fswebcam says when the device is missing (node-webcam's own test, plus its non-zero exit). */
const NO_DEVICE = /no webcam found|no.*such.*(file|device)/i;

/**
 * Shots through node-webcam (fswebcam), JPEG at 1280x720. Each shot goes to a private temporary file
 * (node-webcam's in-memory mode reads the image from fswebcam's stderr as text) that is deleted as soon
 * as it is read.
 */
export function createWebcamSource(
  device: string | undefined,
  create: (options: WebcamOptions) => ReturnType<typeof NodeWebcam.create> = (o) => NodeWebcam.create(o),
): FrameSource {
  const webcam = create({
    width: 1280,
    height: 720,
    quality: 90,
    output: 'jpeg',
    device: device ?? false,
    callbackReturn: 'buffer',
    verbose: false,
    // The first frames of many USB cameras are dark while exposure settles.
    skip: 2,
  });
  return {
    async frame() {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'portico-shot-'));
      try {
        const image = await new Promise<Buffer>((resolve, reject) =>
          webcam.capture(path.join(dir, 'shot.jpg'), (error, data) =>
            error ? reject(error) : resolve(data),
          ),
        );
        return image.toString('base64');
      } catch (error) {
        const message = (error as Error).message;
        if (NO_DEVICE.test(message)) {
          throw new DoorError(
            503,
            'no_camera',
            `No webcam found: fswebcam could not open ${device ?? 'the default device (/dev/video0)'} ` +
              '(set AGENT_WEBCAM_DEVICE, or AGENT_CAMERA=file with FRAME_SOURCE)',
          );
        }
        throw new DoorError(
          503,
          'camera_failed',
          `The webcam did not give a frame: ${message.slice(0, 300)}`,
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

/** The chosen camera as a frame source; without one, each frame is refused with the reason. */
export function openCamera(choice: CameraChoice): FrameSource {
  if (choice.kind === 'webcam') return createWebcamSource(choice.device);
  if (choice.kind === 'file') return createFrameSource(choice.source);
  return {
    frame: () => Promise.reject(new DoorError(503, 'no_camera', choice.why)),
  };
}
