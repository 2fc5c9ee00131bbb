/**
 * Face quality in [0, 1]: a weighted geometric mean of five factors, so one bad factor (blur, dark,
 * tiny, turned away) pulls the whole score down instead of being averaged away by the good ones.
 */
import type { HeadPose, QualityFactors } from './types.js';

export const QUALITY_WEIGHTS: Readonly<QualityFactors> = {
  detector: 0.15,
  size: 0.2,
  sharpness: 0.25,
  exposure: 0.2,
  pose: 0.2,
};

const clamp01 = (x: number): number => (x < 0 ? 0 : x > 1 ? 1 : x);
const ramp = (x: number, lo: number, hi: number): number => clamp01((x - lo) / (hi - lo));

export interface QualityInputs {
  /** Luma (0..255) of the 112x112 aligned face, row-major. */
  readonly alignedLuma: Float32Array;
  readonly detectorScore: number;
  /** Distance between the eye centres in original image pixels. */
  readonly interocular: number;
  readonly pose: HeadPose;
}

/** 90th-percentile face luma at or below which exposure is 0, and from which the gate is open. */
const DARK_HIGHLIGHTS = 55;
const LIT_HIGHLIGHTS = 110;

const SIDE = 112;
// Inner face region of the aligned crop (brows to chin, cheek to cheek): background excluded.
const X0 = 24;
const X1 = 88;
const Y0 = 36;
const Y1 = 104;

/**
 * Sharpness: mean squared Laplacian over the inner face divided by its intensity variance, so a
 * dark or low-contrast face is not mistaken for a blurred one (exposure has its own factor).
 */
function sharpnessOf(luma: Float32Array): {
  sharpness: number;
  mean: number;
  clipped: number;
  highlights: number;
} {
  const histogram = new Uint32Array(256);
  let sum = 0;
  let sumSq = 0;
  let lap = 0;
  let clipped = 0;
  let count = 0;
  for (let y = Y0; y < Y1; y++) {
    for (let x = X0; x < X1; x++) {
      const i = y * SIDE + x;
      const p = luma[i]!;
      const l = 4 * p - luma[i - 1]! - luma[i + 1]! - luma[i - SIDE]! - luma[i + SIDE]!;
      lap += l * l;
      sum += p;
      sumSq += p * p;
      if (p < 8 || p > 247) clipped++;
      histogram[p <= 0 ? 0 : p >= 255 ? 255 : p | 0]!++;
      count++;
    }
  }
  const mean = sum / count;
  const variance = Math.max(sumSq / count - mean * mean, 1);
  // 90th percentile of luma: what the brightest tenth of the face (skin highlights, eye whites) reaches.
  let highlights = 255;
  for (let above = 0; highlights > 0; highlights--) {
    above += histogram[highlights]!;
    if (above >= count * 0.1) break;
  }
  return { sharpness: lap / count / variance, mean, clipped: clipped / count, highlights };
}

export function qualityFactors(inputs: QualityInputs): QualityFactors {
  const { sharpness, mean, clipped, highlights } = sharpnessOf(inputs.alignedLuma);
  // Exposure: full marks for a mean face luma in 80..180, falling to 0 at 15 and 245, minus clipping.
  const level = mean < 80 ? ramp(mean, 15, 80) : 1 - ramp(mean, 180, 245);
  // Darkness gate: an underexposed face has no bright tenth either (a dark-skinned, well-lit face
  // keeps its highlights). On ../shared/faces and the registry photos, 90th percentiles are
  // >= 94 for every clean face and <= 46 for the same photos darkened to 20 % (<= 34 at 15 %).
  const dark = ramp(highlights, DARK_HIGHLIGHTS, LIT_HIGHLIGHTS);
  const exposure = clamp01(Math.min(level, dark) * (1 - 2 * clipped));
  const yaw = Math.abs(inputs.pose.yaw);
  const pitch = Math.abs(inputs.pose.pitch);
  const roll = Math.abs(inputs.pose.roll);
  // Frontal within ~15 degrees scores 1; 60 degrees of yaw (profile-ish) scores 0.
  const pose = (1 - ramp(yaw, 15, 60)) * (1 - ramp(pitch, 15, 50)) * (1 - ramp(roll, 20, 60));
  return {
    detector: ramp(inputs.detectorScore, 0.5, 0.95),
    size: ramp(inputs.interocular, 10, 40),
    sharpness: ramp(sharpness, 0.05, 0.35),
    exposure,
    pose,
  };
}

export function combineQuality(factors: QualityFactors): number {
  let logSum = 0;
  for (const key of Object.keys(QUALITY_WEIGHTS) as Array<keyof QualityFactors>) {
    logSum += QUALITY_WEIGHTS[key] * Math.log(Math.max(factors[key], 1e-6));
  }
  const q = Math.exp(logSum);
  return q < 1e-4 ? 0 : Math.round(q * 1e4) / 1e4;
}
