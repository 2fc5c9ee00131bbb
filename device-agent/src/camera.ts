// Frames for units without a browser camera: a still image or a folder of images (tests, demos,
// a unit fed by another process), read in name order, one after the other.
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';

const IMAGE = /\.(jpe?g|png)$/i;

export function createFrameSource(source: string) {
  let next = 0;
  return {
    /** The next frame, base64. */
    async frame(): Promise<string> {
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

export type FrameSource = ReturnType<typeof createFrameSource>;
