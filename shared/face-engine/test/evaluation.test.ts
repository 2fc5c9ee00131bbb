import { describe, expect, it } from 'vitest';
import {
  admits,
  atLeastOne,
  extrapolatedFnir,
  extrapolatedFpir,
  impostorTail,
  measureOpenSet,
  openSetSplits,
  penalisedTail,
  runOpenSet,
  thresholdForRate,
  type ImpostorTail,
  type OpenSetSample,
  type OpenSetSplit,
  type ProbeTrial,
} from '../src/evaluation.js';
import { seededRandom } from '../src/seeded-random.js';

/** A tail whose rate is known exactly: what a perfectly calibrated score gives, 10^(-10 t). */
const calibratedTail: ImpostorTail = {
  pairs: 1e9,
  rate: (t) => Math.min(1, 10 ** (-10 * t)),
  method: () => 'tail fit',
  countAtOrAbove: () => 0,
};

/** Unit vector along the given axes (512-d, one-hot combinations are exactly orthogonal). */
function vector(parts: Record<number, number>): Float32Array {
  const v = new Float32Array(512);
  for (const [axis, value] of Object.entries(parts)) v[Number(axis)] = value;
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

function exponentialScores(count: number, slope: number, seed: number): number[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => -Math.log(1 - random()) / slope);
}

describe('impostorTail', () => {
  it('counts pairs at or above a threshold while at least 10 are there, then switches to the fitted tail', () => {
    const tail = impostorTail(Array.from({ length: 1000 }, (_, i) => i / 1000));
    expect(tail.rate(0.5)).toBe(0.5);
    expect(tail.method(0.5)).toBe('empirical');
    expect(tail.countAtOrAbove(0.99)).toBe(10);
    expect(tail.method(0.99)).toBe('empirical');
    expect(tail.method(0.991)).toBe('tail fit');
  });

  it('recovers the slope of an exponential tail and extrapolates its rate beyond the data', () => {
    const tail = impostorTail(exponentialScores(200_000, 20, 1));
    expect(tail.fit.share).toBeCloseTo(1e-3, 6);
    expect(tail.fit.slope).toBeGreaterThan(17);
    expect(tail.fit.slope).toBeLessThan(23);
    // exp(-20 * 0.8) = 1.1e-7: 50 times beyond the last of the 200,000 scores.
    const at = tail.rate(0.8);
    expect(tail.method(0.8)).toBe('tail fit');
    expect(at / Math.exp(-16)).toBeGreaterThan(0.3);
    expect(at / Math.exp(-16)).toBeLessThan(3);
  });

  it('overestimates a Gaussian tail beyond the data (a conservative extrapolation)', () => {
    const random = seededRandom(2);
    const gaussian = Array.from(
      { length: 200_000 },
      () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random()),
    );
    const tail = impostorTail(gaussian);
    // P(N(0,1) >= 5) = 2.87e-7, P(>= 6) = 9.87e-10.
    expect(tail.rate(5)).toBeGreaterThan(2.87e-7);
    expect(tail.rate(6)).toBeGreaterThan(9.87e-10);
  });
});

describe('open-set extrapolation', () => {
  it('gives 1 - (1 - p)^n for the chance that one of n strangers passes', () => {
    expect(atLeastOne(1e-6, 1000)).toBeCloseTo(1 - (1 - 1e-6) ** 1000, 12);
    expect(atLeastOne(1e-6, 1000)).toBeCloseTo(9.995e-4, 6);
    expect(atLeastOne(0, 1e5)).toBe(0);
    expect(atLeastOne(1, 3)).toBe(1);
  });

  it('admits a stranger with probability 1 - (1 - r(t))^N without a margin (FPIR)', () => {
    expect(extrapolatedFpir(calibratedTail, 0.6, 10_000)).toBeCloseTo(atLeastOne(1e-6, 10_000), 12);
    expect(extrapolatedFpir(calibratedTail, 0.6, 10_000)).toBeCloseTo(0.00995, 5);
  });

  it('with a margin and one person enrolled, admits exactly the strangers above the threshold', () => {
    const fpir = extrapolatedFpir(calibratedTail, 0.3, 1, 0.05);
    expect(fpir / 1e-3).toBeCloseTo(1, 2);
  });

  it('with a margin, matches a simulation of N strangers scores (best must lead the second by the margin)', () => {
    const slope = 20;
    const n = 50;
    const threshold = Math.log(n) / slope; // each score passes with probability 1/n
    const margin = 0.05;
    const random = seededRandom(3);
    let admitted = 0;
    const trials = 20_000;
    for (let i = 0; i < trials; i++) {
      let best = -Infinity;
      let second = -Infinity;
      for (let j = 0; j < n; j++) {
        const s = -Math.log(1 - random()) / slope;
        if (s > best) [best, second] = [s, best];
        else if (s > second) second = s;
      }
      if (best >= threshold && best - second >= margin) admitted++;
    }
    const exact: ImpostorTail = {
      ...calibratedTail,
      rate: (t) => Math.min(1, Math.exp(-slope * Math.max(0, t))),
    };
    const predicted = extrapolatedFpir(exact, threshold, n, margin);
    expect(predicted).toBeLessThan(extrapolatedFpir(exact, threshold, n));
    expect(predicted / (admitted / trials)).toBeGreaterThan(0.93);
    expect(predicted / (admitted / trials)).toBeLessThan(1.07);
  });

  it('counts a genuine probe under the threshold as missed, and one above as missed when a stranger outscores it (FNIR)', () => {
    const genuine = [{ score: 0.5 }, { score: 0.9 }, { score: 0.7, penalty: 0.15 }];
    const fnir = extrapolatedFnir(genuine, calibratedTail, 0.6, 1001);
    // 0.5: refused. 0.9: one of 1,000 others at >= 0.9, 1e-9 each. 0.7 under 0.6 + penalty 0.15: refused.
    expect(fnir).toBeCloseTo((1 + atLeastOne(1e-9, 1000) + 1) / 3, 12);
    // With a margin the others need only reach the score minus the margin.
    expect(extrapolatedFnir([{ score: 0.9 }], calibratedTail, 0.6, 1001, 0.1)).toBeCloseTo(
      atLeastOne(1e-8, 1000),
      12,
    );
  });

  it('finds the threshold of a per-pair rate', () => {
    expect(thresholdForRate(calibratedTail, 1e-6, 0, 1)).toBeCloseTo(0.6, 6);
  });

  it('removes from the impostor rate only what the quality penalty removes from penalised probes', () => {
    const grid = Array.from({ length: 1000 }, (_, i) => i / 1000);
    const all = impostorTail([...grid, ...grid]);
    const penalised = impostorTail(grid);
    const tail = penalisedTail(all, penalised, 0.1);
    // At 0.8: 200 unpenalised pairs, and the 100 penalised ones at >= 0.9.
    expect(tail.countAtOrAbove(0.8)).toBe(300);
    expect(tail.rate(0.8)).toBeCloseTo(300 / 2000, 12);
  });
});

describe('openSetSplits', () => {
  const samples: OpenSetSample[] = ['a', 'b', 'c', 'd', 'e'].flatMap((label, l) =>
    Array.from({ length: 4 }, (_, i) => ({
      label,
      embedding: vector({ [l]: 1, [100 + l * 4 + i]: 0.3 }),
      // e's photos are all below the enrollment quality but its first.
      quality: label === 'e' && i > 0 ? 0.2 : 0.9,
    })),
  );

  it('leaves each fold of identities out once per repeat and probes with every photo not enrolled', () => {
    const splits = openSetSplits(samples, { k: 1, folds: 5, repeats: 2, seed: 7, enrollQuality: 0.5 });
    expect(splits).toHaveLength(10);
    for (const split of splits) {
      expect(split.enrolled.size).toBe(4);
      expect(split.genuineProbes).toHaveLength(12);
      expect(split.strangerProbes).toHaveLength(4);
      const strangerLabels = new Set(split.strangerProbes.map((i) => samples[i]!.label));
      expect(strangerLabels.size).toBe(1);
      for (const label of split.enrolled.keys()) expect(strangerLabels.has(label)).toBe(false);
      for (const photos of split.enrolled.values())
        for (const i of photos) expect(samples[i]!.quality).toBeGreaterThanOrEqual(0.5);
    }
    for (const repeat of [splits.slice(0, 5), splits.slice(5)]) {
      const left = repeat.map((s) => samples[s.strangerProbes[0]!]!.label).sort();
      expect(left).toEqual(['a', 'b', 'c', 'd', 'e']);
    }
  });

  it('never enrols an identity with fewer acceptable photos than k, and leaves the same strangers out for every k', () => {
    const one = openSetSplits(samples, { k: 1, folds: 5, repeats: 1, seed: 7, enrollQuality: 0.5 });
    const three = openSetSplits(samples, { k: 3, folds: 5, repeats: 1, seed: 7, enrollQuality: 0.5 });
    for (const split of three) {
      expect(split.enrolled.has('e')).toBe(false);
      for (const photos of split.enrolled.values()) expect(photos).toHaveLength(3);
    }
    one.forEach((split, i) => {
      const k1 = [...split.enrolled.keys()].filter((l) => l !== 'e');
      expect([...three[i]!.enrolled.keys()].sort()).toEqual(k1.sort());
    });
  });
});

describe('runOpenSet and measureOpenSet', () => {
  // A = axis 0, B = 1, C = 2. Genuine: a2 close to A, b2 a poor capture of B, a3 closer to B than to
  // A. Strangers: s1 unlike anyone, s2 a look-alike of C.
  const samples: OpenSetSample[] = [
    { label: 'A', embedding: vector({ 0: 1 }), quality: 0.9 },
    { label: 'B', embedding: vector({ 1: 1 }), quality: 0.9 },
    { label: 'C', embedding: vector({ 2: 1 }), quality: 0.9 },
    { label: 'A', embedding: vector({ 0: 0.9, 5: 0.436 }), quality: 0.9 },
    { label: 'B', embedding: vector({ 1: 0.3, 6: 0.954 }), quality: 0.9 },
    { label: 'A', embedding: vector({ 0: 0.55, 1: 0.7, 9: 0.456 }), quality: 0.9 },
    { label: 'S1', embedding: vector({ 7: 1 }), quality: 0.9 },
    { label: 'S2', embedding: vector({ 2: 0.8, 8: 0.6 }), quality: 0.3 },
  ];
  const split: OpenSetSplit = {
    enrolled: new Map([
      ['A', [0]],
      ['B', [1]],
      ['C', [2]],
    ]),
    genuineProbes: [3, 4, 5],
    strangerProbes: [6, 7],
  };

  it('counts strangers admitted (FPIR) and enrolled people refused or taken for someone else (FNIR)', () => {
    const trial = runOpenSet(samples, [split], 'cosine');
    const measured = measureOpenSet(trial, { threshold: 0.5 });
    expect(measured).toMatchObject({
      gallery: 3,
      strangers: 2,
      strangersAdmitted: 1,
      fpir: 0.5,
      genuineProbes: 3,
      genuineMissed: 2,
    });
    expect(measured.fnir).toBeCloseTo(2 / 3, 12);
    const a2 = trial.probes.find((p) => p.sample === 3)!;
    expect(a2.genuine).toBeCloseTo(0.9, 3);
    expect(a2.impostors).toHaveLength(2);
    expect(trial.probes.find((p) => p.sample === 6)!.impostors).toHaveLength(3);
  });

  it('scores every template with the statistics FaceIndex.calibrate uses (it throws when they differ)', () => {
    const trial = runOpenSet(samples, [split], 'calibrated');
    const s2 = trial.probes.find((p) => p.sample === 7)!;
    expect(s2.best.label).toBe('C');
    expect(Math.max(...s2.impostors)).toBeCloseTo(s2.best.score, 12);
    expect(measureOpenSet(trial, { threshold: 0.6 }).strangersAdmitted).toBe(1);
  });

  it('refuses a best candidate without the margin, and a low-quality probe without the extra score', () => {
    const probe = (best: number, second: number, quality: number): ProbeTrial => ({
      sample: 0,
      label: 'A',
      enrolled: true,
      quality,
      genuine: best,
      impostors: new Float64Array([second]),
      best: { label: 'A', score: best },
      second,
    });
    expect(admits({ threshold: 0.6, margin: 0.05 }, probe(0.7, 0.68, 0.9))).toBe(false);
    expect(admits({ threshold: 0.6, margin: 0.05 }, probe(0.7, 0.6, 0.9))).toBe(true);
    const quality = { threshold: 0.6, quality: { below: 0.5, penalty: 0.1 } };
    expect(admits(quality, probe(0.65, 0.1, 0.3))).toBe(false);
    expect(admits(quality, probe(0.65, 0.1, 0.8))).toBe(true);
  });
});
