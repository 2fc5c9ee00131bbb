import { TENANT_SETTINGS_DEFAULTS } from '@portico/contract';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Analyzer } from '../src/analyzer.js';
import { DEFAULT_LIMITS } from '../src/decode.js';
import { loadVerifiedModels } from '../src/models/model-store.js';
import { resolveModelDir } from '../src/models/model-dir.js';
import { HAS_LABELLED, LABELLED_DIR, LABELLED_SKIP_REASON, registryPhotos } from './fixtures.js';

// Quality is a property of the chain, not of the pool: run the analyzer in-process for speed.
let analyzer: Analyzer;
let photos: Map<string, Buffer>;

beforeAll(async () => {
  analyzer = await Analyzer.create(await loadVerifiedModels(resolveModelDir()), { limits: DEFAULT_LIMITS });
  photos = await registryPhotos();
}, 60_000);

afterAll(async () => {
  await analyzer?.release();
});

const degradations: Record<string, (image: Sharp, width: number) => Sharp> = {
  blurred: (image) => image.blur(3),
  darkened: (image) => image.linear(0.2, 0),
  shrunk: (image, width) => image.resize(Math.round(width / 4)),
};

/** Quality of a clean image and of each degradation of it; a lost detection counts as quality 0. */
async function qualities(clean: Buffer): Promise<Record<string, number>> {
  const { width } = await sharp(clean).metadata();
  const out: Record<string, number> = { clean: (await analyzer.analyze(clean)).quality };
  for (const [name, degrade] of Object.entries(degradations)) {
    const bytes = await degrade(sharp(clean), width!).png().toBuffer();
    out[name] = await analyzer.analyze(bytes).then(
      (r) => r.quality,
      () => 0,
    );
  }
  return out;
}

async function primaryCrop(photo: Buffer): Promise<Buffer> {
  const { face, image } = await analyzer.analyze(photo);
  const m = 0.5;
  const left = Math.max(0, Math.round(face.box.x - face.box.width * m));
  const top = Math.max(0, Math.round(face.box.y - face.box.height * m));
  const width = Math.min(image.width - left, Math.round(face.box.width * (1 + 2 * m)));
  const height = Math.min(image.height - top, Math.round(face.box.height * (1 + 2 * m)));
  return sharp(photo).extract({ left, top, width, height }).png().toBuffer();
}

/** Clean quality and the quality (0 when no face is found) at 20 % and 15 % brightness. */
async function darkness(clean: Buffer): Promise<{ clean: number; dark20: number; dark15: number }> {
  const at = async (k: number): Promise<number> =>
    analyzer.analyze(await sharp(clean).linear(k, 0).png().toBuffer()).then(
      (r) => r.quality,
      () => 0,
    );
  return { clean: (await analyzer.analyze(clean)).quality, dark20: await at(0.2), dark15: await at(0.15) };
}

/** The tenants' default minimum quality (cloud). */
const DEFAULT_LEVEL = TENANT_SETTINGS_DEFAULTS.biometricQualityLevel;

describe('quality on registry photos', () => {
  it('scores a clean face clearly above the same face blurred, darkened or shrunk', async () => {
    for (const name of ['sample3.jpg', 'sample5.jpg', 'sample6.jpg']) {
      const q = await qualities(await primaryCrop(photos.get(name)!));
      for (const degraded of Object.keys(degradations)) {
        expect(
          q.clean! - q[degraded]!,
          `${name}: clean ${q.clean} vs ${degraded} ${q[degraded]}`,
        ).toBeGreaterThan(0.15);
      }
    }
  }, 30_000);

  it('keeps clean registry faces above the default level 0.5 and drops them below it at 15-20 % brightness', async () => {
    for (const name of ['sample3.jpg', 'sample5.jpg', 'sample6.jpg']) {
      const q = await darkness(await primaryCrop(photos.get(name)!));
      expect(q.clean, `${name} clean`).toBeGreaterThan(DEFAULT_LEVEL);
      expect(q.dark20, `${name} at 20 %`).toBeLessThan(DEFAULT_LEVEL);
      expect(q.dark15, `${name} at 15 %`).toBeLessThan(DEFAULT_LEVEL);
    }
  }, 30_000);

  it('scores a face turned away (sample2, yaw about 70 degrees) below 0.2 and below every frontal primary', async () => {
    const turned = await analyzer.analyze(photos.get('sample2.jpg')!);
    expect(Math.abs(turned.pose.yaw)).toBeGreaterThan(45);
    expect(turned.qualityFactors.pose).toBeLessThan(0.2);
    expect(turned.quality).toBeLessThan(0.2);
    for (const name of ['sample3.jpg', 'sample6.jpg']) {
      expect((await analyzer.analyze(photos.get(name)!)).quality).toBeGreaterThan(turned.quality + 0.3);
    }
  });
});

describe.skipIf(!HAS_LABELLED)(
  `quality on ../shared/faces${HAS_LABELLED ? '' : ` (${LABELLED_SKIP_REASON})`}`,
  () => {
    it('keeps the first photo of every john and bbt person above 0.5 and drops it below 0.5 at 15-20 % brightness', async () => {
      for (const set of ['johns', 'bbt']) {
        const root = path.join(LABELLED_DIR, set);
        for (const person of readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory())) {
          const first = readdirSync(path.join(root, person.name)).sort()[0]!;
          const q = await darkness(readFileSync(path.join(root, person.name, first)));
          const label = `${set}/${person.name}/${first}: clean ${q.clean}, 20 % ${q.dark20}, 15 % ${q.dark15}`;
          expect(q.clean, label).toBeGreaterThan(DEFAULT_LEVEL);
          expect(q.dark20, label).toBeLessThan(DEFAULT_LEVEL);
          expect(q.dark15, label).toBeLessThan(DEFAULT_LEVEL);
        }
      }
    }, 60_000);

    it('orders clean above blurred, darkened and shrunk for the first photo of every john', async () => {
      const johns = path.join(LABELLED_DIR, 'johns');
      for (const person of readdirSync(johns).sort()) {
        const first = readdirSync(path.join(johns, person)).sort()[0]!;
        const q = await qualities(readFileSync(path.join(johns, person, first)));
        for (const degraded of Object.keys(degradations)) {
          expect(
            q.clean! - q[degraded]!,
            `${person}: clean ${q.clean} vs ${degraded} ${q[degraded]}`,
          ).toBeGreaterThan(0.15);
        }
      }
    }, 30_000);
  },
);
