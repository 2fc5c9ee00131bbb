import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { decodeFrame, DEFAULT_LIMITS } from '../src/index.js';
import { codeOf } from './fixtures.js';

async function jpeg(width: number, height: number, orientation?: number): Promise<Buffer> {
  const image = sharp({
    create: { width, height, channels: 3, background: { r: 200, g: 120, b: 40 } },
  }).jpeg();
  return orientation ? image.withMetadata({ orientation }).toBuffer() : image.toBuffer();
}

describe('decodeFrame', () => {
  it('accepts base64 with and without a data: prefix, and raw bytes', async () => {
    const bytes = await jpeg(64, 48);
    const b64 = bytes.toString('base64');
    for (const frame of [b64, `data:image/jpeg;base64,${b64}`, bytes]) {
      const decoded = await decodeFrame(frame);
      expect([decoded.width, decoded.height, decoded.format]).toEqual([64, 48, 'jpeg']);
      expect(decoded.rgb.length).toBe(64 * 48 * 3);
    }
  });

  it('decodes PNG, including greyscale, to RGB', async () => {
    const png = await sharp({ create: { width: 20, height: 10, channels: 3, background: '#808080' } })
      .greyscale()
      .png()
      .toBuffer();
    const decoded = await decodeFrame(png);
    expect(decoded.format).toBe('png');
    expect(decoded.rgb.length).toBe(20 * 10 * 3);
  });

  it('applies EXIF orientation (6 = rotated 90 degrees: width and height swap)', async () => {
    const decoded = await decodeFrame(await jpeg(80, 40, 6));
    expect([decoded.width, decoded.height]).toEqual([40, 80]);
    expect([decoded.rgbWidth, decoded.rgbHeight]).toEqual([40, 80]);
  });

  it('refuses text that is not base64 with invalid_base64', async () => {
    expect(await codeOf(decodeFrame('not base64 at all!'))).toBe('invalid_base64');
    expect(await codeOf(decodeFrame('abc'))).toBe('invalid_base64');
    expect(await codeOf(decodeFrame(''))).toBe('invalid_base64');
    expect(await codeOf(decodeFrame('data:image/png;base64,@@@@'))).toBe('invalid_base64');
  });

  it('refuses anything but JPEG or PNG magic bytes with unsupported_image', async () => {
    const gif = Buffer.from('GIF89a' + '\0'.repeat(32));
    expect(await codeOf(decodeFrame(gif))).toBe('unsupported_image');
    expect(await codeOf(decodeFrame(gif.toString('base64')))).toBe('unsupported_image');
    const webp = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } })
      .webp()
      .toBuffer();
    expect(await codeOf(decodeFrame(webp))).toBe('unsupported_image');
  });

  it('refuses a JPEG that cannot be decoded with unsupported_image', async () => {
    const truncated = (await jpeg(64, 64)).subarray(0, 40);
    expect(await codeOf(decodeFrame(truncated))).toBe('unsupported_image');
  });

  it('refuses frames over the byte limit with image_too_large, before decoding base64', async () => {
    const bytes = await jpeg(64, 64);
    const limits = { maxBytes: bytes.length - 1, maxPixels: DEFAULT_LIMITS.maxPixels };
    expect(await codeOf(decodeFrame(bytes, limits))).toBe('image_too_large');
    expect(await codeOf(decodeFrame(bytes.toString('base64'), limits))).toBe('image_too_large');
  });

  it('refuses images over the pixel limit with image_too_large', async () => {
    const bytes = await jpeg(200, 100);
    expect(await codeOf(decodeFrame(bytes, { maxBytes: DEFAULT_LIMITS.maxBytes, maxPixels: 19_999 }))).toBe(
      'image_too_large',
    );
    expect((await decodeFrame(bytes, { maxBytes: DEFAULT_LIMITS.maxBytes, maxPixels: 20_000 })).width).toBe(
      200,
    );
  });

  it('documents its default limits: 8 MiB and 25 megapixels', () => {
    expect(DEFAULT_LIMITS).toEqual({ maxBytes: 8 * 1024 * 1024, maxPixels: 25_000_000 });
  });
});
