/**
 * Turns a caller's `frame` (base64, optionally a data: URL, or raw bytes) into RGB pixels, refusing
 * anything that is not a JPEG or PNG by its magic bytes, and anything over the configured limits
 * before the expensive decode happens.
 */
import sharp, { type Metadata } from 'sharp';
import { FaceEngineError } from './errors.js';

export interface DecodeLimits {
  /** Largest encoded image, in bytes after base64 decoding. */
  readonly maxBytes: number;
  /** Largest image in pixels (width x height, before any resizing). */
  readonly maxPixels: number;
}

export const DEFAULT_LIMITS: DecodeLimits = { maxBytes: 8 * 1024 * 1024, maxPixels: 25_000_000 };

/**
 * Longest side analysed. Larger photos are downscaled once at decode: the detector runs at 320x240
 * and the embedder at 112x112, so extra resolution only costs time and memory.
 */
export const MAX_WORKING_SIDE = 1920;

export interface DecodedFrame {
  /** Size of the image as the caller sees it (after EXIF orientation, before downscaling). */
  readonly width: number;
  readonly height: number;
  readonly format: 'jpeg' | 'png';
  /** Working raster: interleaved RGB. `scale` maps working pixels back to image pixels. */
  readonly rgb: Uint8Array;
  readonly rgbWidth: number;
  readonly rgbHeight: number;
  readonly scale: number;
}

const DATA_URL = /^data:([a-z0-9.+/-]*)?(;[a-z0-9=.+-]*)*;base64,/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decodes base64 text to bytes, strictly: Node's decoder silently skips garbage, so check first. */
export function bytesFromBase64(frame: string, maxBytes: number): Buffer {
  const body = frame.trim().replace(DATA_URL, '').replace(/\s+/g, '');
  if (body.length === 0 || body.length % 4 !== 0 || !BASE64.test(body)) {
    throw new FaceEngineError('invalid_base64', 'frame is not valid base64 (standard alphabet, padded)');
  }
  // Reject on the text length so an oversized upload is never materialised as bytes.
  const decodedLength = (body.length / 4) * 3 - (body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0);
  if (decodedLength > maxBytes) throw tooLarge(`${decodedLength} bytes`, `${maxBytes} bytes`);
  return Buffer.from(body, 'base64');
}

export function sniffFormat(bytes: Uint8Array): 'jpeg' | 'png' | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (bytes.length >= 8 && png.every((b, i) => bytes[i] === b)) return 'png';
  return undefined;
}

function tooLarge(actual: string, limit: string): FaceEngineError {
  return new FaceEngineError('image_too_large', `image is too large: ${actual} (limit ${limit})`);
}

export async function decodeFrame(
  frame: string | Uint8Array,
  limits: DecodeLimits = DEFAULT_LIMITS,
): Promise<DecodedFrame> {
  const bytes = typeof frame === 'string' ? bytesFromBase64(frame, limits.maxBytes) : frame;
  if (bytes.length > limits.maxBytes) throw tooLarge(`${bytes.length} bytes`, `${limits.maxBytes} bytes`);
  const format = sniffFormat(bytes);
  if (!format) throw new FaceEngineError('unsupported_image', 'frame is neither a JPEG nor a PNG');

  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch {
    throw new FaceEngineError('unsupported_image', `frame has ${format} magic bytes but cannot be decoded`);
  }
  const rawWidth = meta.width ?? 0;
  const rawHeight = meta.height ?? 0;
  if (rawWidth * rawHeight > limits.maxPixels) {
    throw tooLarge(`${rawWidth}x${rawHeight} pixels`, `${limits.maxPixels} pixels`);
  }
  // EXIF orientations 5-8 swap width and height.
  const swapped = (meta.orientation ?? 1) >= 5;
  const width = swapped ? rawHeight : rawWidth;
  const height = swapped ? rawWidth : rawHeight;
  try {
    const { data, info } = await sharp(bytes, { limitInputPixels: limits.maxPixels, failOn: 'error' })
      .rotate()
      .resize({ width: MAX_WORKING_SIDE, height: MAX_WORKING_SIDE, fit: 'inside', withoutEnlargement: true })
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new Error(`unexpected ${info.channels} channels`);
    return {
      width,
      height,
      format,
      rgb: new Uint8Array(data.buffer, data.byteOffset, data.length),
      rgbWidth: info.width,
      rgbHeight: info.height,
      scale: width / info.width,
    };
  } catch {
    throw new FaceEngineError('unsupported_image', `frame has ${format} magic bytes but cannot be decoded`);
  }
}
