import { describe, expect, it } from 'vitest';
import { FACE_LINE_DEFAULTS } from '@portico/checkin-policy';
import {
  calibratedScore,
  cohortStats,
  falseMatchRateAt,
  IMPOSTOR_PRIOR,
  log10NormalTail,
  PRIOR_WEIGHT,
  TAIL_KNEE,
  TAIL_SLOPE,
} from '../src/calibration.js';
import { seededRandom } from '../src/seeded-random.js';
import { FaceIndex } from '../src/face-index.js';

function unit(v: Float32Array): Float32Array {
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/**
 * Templates whose cosines with each other look like different people's faces (mean ~0.05, sd
 * ~0.11, IMPOSTOR_PRIOR): a shared component plus a random direction in a 76-dimensional subspace
 * (random 512-d vectors would all be near-orthogonal, sd 0.044, which no face set is).
 */
function faceLike(random: () => number): Float32Array {
  const v = new Float32Array(512);
  const gaussian = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  let norm = 0;
  for (let i = 1; i <= 76; i++) {
    v[i] = gaussian();
    norm += v[i]! ** 2;
  }
  for (let i = 1; i <= 76; i++) v[i] = (v[i]! / Math.sqrt(norm)) * Math.sqrt(1 - IMPOSTOR_PRIOR.mean);
  v[0] = Math.sqrt(IMPOSTOR_PRIOR.mean);
  return v;
}

/** A probe at exactly `cosine` to `template`, otherwise like any other face. */
function probeAt(template: Float32Array, cosine: number, random: () => number): Float32Array {
  const other = faceLike(random);
  let along = 0;
  for (let i = 0; i < 512; i++) along += other[i]! * template[i]!;
  const orthogonal = unit(other.map((x, i) => x - along * template[i]!));
  return template.map((x, i) => cosine * x + Math.sqrt(1 - cosine ** 2) * orthogonal[i]!);
}

describe('log10NormalTail', () => {
  it('matches the normal distribution: z = 0, 1, -1, 4.753, 10', () => {
    expect(log10NormalTail(0)).toBeCloseTo(Math.log10(0.5), 6);
    expect(log10NormalTail(1)).toBeCloseTo(Math.log10(0.158655254), 6);
    expect(log10NormalTail(-1)).toBeCloseTo(Math.log10(0.841344746), 6);
    expect(log10NormalTail(4.753)).toBeCloseTo(-6, 2);
    // 7.62e-24: far beyond float64's 1 - Phi, kept in the log domain.
    expect(log10NormalTail(10)).toBeCloseTo(Math.log10(7.619853e-24), 4);
  });
});

describe('cohortStats and calibratedScore', () => {
  it('falls back to the impostor prior with an empty cohort', () => {
    const stats = cohortStats([]);
    expect(stats.mean).toBeCloseTo(IMPOSTOR_PRIOR.mean, 12);
    expect(stats.sd).toBeCloseTo(IMPOSTOR_PRIOR.sd, 12);
  });

  it('shrinks a cohort towards the prior with the weight of PRIOR_WEIGHT scores', () => {
    const scores = Array.from({ length: PRIOR_WEIGHT }, (_, i) => (i % 2 === 0 ? 0.2 : 0.4));
    const stats = cohortStats(scores);
    expect(stats.mean).toBeCloseTo((0.3 + IMPOSTOR_PRIOR.mean) / 2, 12);
    expect(stats.sd).toBeCloseTo(Math.sqrt((0.1 ** 2 + IMPOSTOR_PRIOR.sd ** 2) / 2), 12);
  });

  it('maps a cosine at the cohort mean to -log10(0.5) / 10 and clips at 1', () => {
    const prior = cohortStats([]);
    expect(calibratedScore(IMPOSTOR_PRIOR.mean, prior, prior)).toBeCloseTo(Math.log10(2) / 10, 6);
    const tight = { mean: 0, sd: 0.05 };
    expect(calibratedScore(1, tight, tight)).toBe(1);
    expect(falseMatchRateAt(0.6)).toBeCloseTo(1e-6, 12);
  });

  it('follows the normal tail up to TAIL_KNEE and rises by TAIL_SLOPE per unit of z beyond, without a step', () => {
    // A unit-variance cohort centred on 0 makes z the cosine itself.
    const cohort = { mean: 0, sd: 1 };
    const at = (z: number) => calibratedScore(z, cohort, cohort);
    expect(at(2)).toBeCloseTo(-log10NormalTail(2) / 10, 12);
    expect(at(TAIL_KNEE + 1e-9) - at(TAIL_KNEE)).toBeLessThan(1e-9);
    expect(at(TAIL_KNEE + 2) - at(TAIL_KNEE + 1)).toBeCloseTo(TAIL_SLOPE, 12);
    // Heavier than the normal tail: z = 5 is about 1e-5 (normal: 2.9e-7).
    expect(at(5)).toBeGreaterThan(0.45);
    expect(at(5)).toBeLessThan(-log10NormalTail(5) / 10);
  });
});

describe('FaceIndex.calibrate', () => {
  const random = seededRandom(11);
  const index = new FaceIndex();
  const templates = Array.from({ length: 300 }, () => faceLike(random));
  templates.forEach((t, i) => index.add(`p${i}`, t));

  it('gives a genuine capture (cosine 0.75) a score above the default threshold, a stranger a low one', () => {
    const genuine = probeAt(templates[5]!, 0.75, random);
    const [best] = index.calibrate(genuine, index.search(genuine, 5));
    expect(best!.id).toBe('p5');
    expect(best!.score).toBeGreaterThan(FACE_LINE_DEFAULTS.matchThreshold);
    const stranger = faceLike(random);
    const [top] = index.calibrate(stranger, index.search(stranger, 5));
    expect(top!.score).toBeLessThan(0.4);
  });

  it('denies a stranger scoring just above the old cosine threshold 0.39 (cosine 0.40)', () => {
    const stranger = probeAt(templates[7]!, 0.4, random);
    const hits = index.search(stranger, 5);
    // Templates are held as float16: a cosine keeps 3 digits (search/half.ts).
    expect(hits.find((h) => h.id === 'p7')!.score).toBeCloseTo(0.4, 3);
    const calibrated = index.calibrate(stranger, hits);
    expect(calibrated.find((h) => h.id === 'p7')!.score).toBeLessThan(FACE_LINE_DEFAULTS.matchThreshold);
    expect(calibrated[0]!.score).toBeLessThan(FACE_LINE_DEFAULTS.matchThreshold);
  });

  it("leaves the search hits out of the probe's cohort and each template out of its own", () => {
    const probe = templates[3]!;
    const hits = index.search(probe, 5);
    const hitIds = new Set(hits.map((h) => h.id));
    const dot = (a: Float32Array, b: Float32Array): number => a.reduce((s, x, i) => s + x * b[i]!, 0);
    const probeStats = cohortStats(
      templates.filter((_, i) => !hitIds.has(`p${i}`)).map((t) => dot(probe, t)),
    );
    const ownStats = cohortStats(templates.filter((_, i) => i !== 3).map((t) => dot(probe, t)));
    const [best] = index.calibrate(probe, hits);
    expect(best!.id).toBe('p3');
    // Templates are held as float16: cosines, and the statistics made of them, keep 3 digits.
    expect(best!.cosine).toBeCloseTo(1, 3);
    expect(best!.score).toBeCloseTo(calibratedScore(best!.cosine, probeStats, ownStats), 3);
    // With the probe's own template in its cohort (cosine 1) the statistics would differ.
    const withHits = cohortStats(templates.map((t) => dot(probe, t)));
    expect(Math.abs(withHits.sd - probeStats.sd)).toBeGreaterThan(1e-3);
  });
});
