import { describe, expect, it } from 'vitest';
import { FaceIndex } from '../src/face-index.js';
import {
  answerOf,
  atLeastOne,
  identify,
  measure,
  planSplits,
  runSplit,
  ScoreHistogram,
  type Photo,
  type Split,
} from '../src/open-set.js';

/** Unit vector along the given axes (512-d, one-hot combinations are exactly orthogonal). */
function vector(parts: Record<number, number>): Float32Array {
  const v = new Float32Array(512);
  for (const [axis, value] of Object.entries(parts)) v[Number(axis)] = value;
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

const clear = { detector: 1, size: 1, sharpness: 0.5, exposure: 1, pose: 1 };
const photo = (label: string, embedding: Float32Array, quality = 0.9, factors = clear): Photo => ({
  label,
  embedding,
  quality,
  qualityFactors: factors,
});

const policy = {
  matchThreshold: 0.6,
  stepUpThreshold: 0.3,
  probeQualityMin: 0.4,
  requireLiveness: true,
  livenessThreshold: 0.5,
};

describe('planSplits', () => {
  // 30 people: p0..p9 with 3 photos, p10..p29 with one; p9's photos are all below enrollment quality.
  const photos: Photo[] = Array.from({ length: 30 }, (_, l) =>
    Array.from({ length: l < 10 ? 3 : 1 }, (_, i) =>
      photo(`p${l}`, vector({ [l]: 1, [100 + l * 3 + i]: 0.3 }), l === 9 ? 0.2 : 0.9),
    ),
  ).flat();
  const plan = { gallery: 12, photosPerPerson: 1, splits: 4, seed: 7, enrollQuality: 0.5 };

  it('enrolls the gallery size asked, people with a photo to probe first, and holds a third out as strangers', () => {
    const splits = planSplits(photos, plan);
    expect(splits).toHaveLength(4);
    for (const split of splits) {
      expect(split.enrolled.size).toBe(12);
      const strangers = new Set(split.strangerProbes.map((i) => photos[i]!.label));
      // A third of the 30 held out, and p9, whom enrollment refuses.
      expect(strangers.size).toBe(11);
      for (const label of split.enrolled.keys()) expect(strangers.has(label)).toBe(false);
      // Every enrollable multi-photo person who is not a stranger is enrolled before any filler.
      const multiEnrolled = [...split.enrolled.keys()].filter((l) => Number(l.slice(1)) < 9);
      const multiStrangers = [...strangers].filter((l) => Number(l.slice(1)) < 9);
      expect(multiEnrolled.length + multiStrangers.length).toBe(9);
      // Genuine probes are exactly the enrolled people's other photos.
      const expected = [...split.enrolled].flatMap(([label, enroll]) =>
        photos.flatMap((p, i) => (p.label === label && !enroll.includes(i) ? [i] : [])),
      );
      expect([...split.genuineProbes].sort((a, b) => a - b)).toEqual(expected.sort((a, b) => a - b));
      for (const enroll of split.enrolled.values())
        for (const i of enroll) expect(photos[i]!.quality).toBeGreaterThanOrEqual(0.5);
      // p9 cannot be enrolled: it is always a stranger.
      expect(strangers.has('p9')).toBe(true);
    }
    expect(new Set(splits.map((s) => [...s.enrolled.keys()].sort().join())).size).toBeGreaterThan(1);
  });

  it('enrolls k photos per person, probes only people with k photos and one more, and fills with fewer', () => {
    const more = [...photos, photo('p0', vector({ 0: 1, 99: 0.3 }))];
    for (const split of planSplits(more, { ...plan, photosPerPerson: 3 })) {
      for (const [label, enroll] of split.enrolled) {
        expect(enroll).toHaveLength(Math.min(3, more.filter((p) => p.label === label).length));
      }
      // Only p0 has a fourth photo: it is the only genuine probe, when p0 is not a stranger.
      expect(split.genuineProbes.length).toBe(split.enrolled.has('p0') ? 1 : 0);
    }
    expect(() => planSplits(photos, { ...plan, gallery: 29 })).toThrow(RangeError);
  });
});

describe('runSplit, answerOf and measure', () => {
  // A = axis 0, B = 1, C = 2, plus filler D..H so the cohort has strangers to the probes.
  const photos: Photo[] = [
    photo('A', vector({ 0: 1 })),
    photo('B', vector({ 1: 1 })),
    photo('C', vector({ 2: 1 })),
    ...['D', 'E', 'F', 'G', 'H'].map((l, i) => photo(l, vector({ [20 + i]: 1, 30: 0.2 }))),
    photo('A', vector({ 0: 0.95, 5: 0.31 })), // 8: a good capture of A
    photo('B', vector({ 1: 0.3, 6: 0.954 })), // 9: a poor capture of B
    photo('A', vector({ 0: 0.5, 1: 0.7, 9: 0.5 })), // 10: A looking like B
    photo('A', vector({ 0: 1 }), 0.9, { ...clear, size: 0.1 }), // 11: A, far from the camera
    photo('S1', vector({ 7: 1 })), // 12: a stranger unlike anyone
    photo('S2', vector({ 2: 0.9, 8: 0.436 })), // 13: a look-alike of C
  ];
  const split: Split = {
    enrolled: new Map(['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'].map((l, i) => [l, [i]])),
    genuineProbes: [8, 9, 10, 11],
    strangerProbes: [12, 13],
  };

  it('decides every probe as the product does: search, calibrate, faceDecision', () => {
    const run = runSplit(photos, split);
    const index = new FaceIndex();
    for (const [label, [i]] of split.enrolled) index.add(label, photos[i!]!.embedding);
    for (const result of run.results) {
      const [best] = identify(index, photos[result.photo]!.embedding);
      expect(result.best).toEqual({ label: best!.id, score: best!.score });
    }
    const answers = run.results.map((r) => answerOf(photos, r, policy));
    expect(answers).toEqual(['admitted', 'refused', 'wrong_person', 'retake', 'refused', 'admitted']);
    expect(run.impostor.total).toBe(4 * 7 + 2 * 8);
  });

  it('counts a second factor for someone else as a refusal, and for the right person as a step-up', () => {
    const run = runSplit(photos, split);
    const a2 = run.results.find((r) => r.photo === 10)!;
    const stepUp = { ...policy, matchThreshold: 1, stepUpThreshold: 0 };
    expect(a2.best!.label).toBe('B');
    expect(answerOf(photos, a2, stepUp)).toBe('refused');
    expect(
      answerOf(
        photos,
        run.results.find((r) => r.photo === 8)!,
        stepUp,
      ),
    ).toBe('step_up');
  });

  it('counts retakes apart and gives each rate with its count and range over splits', () => {
    const runs = [runSplit(photos, split), runSplit(photos, split)];
    const m = measure({ gallery: 8, photosPerPerson: 1 }, runs, photos, policy);
    expect(m).toMatchObject({ splits: 2, genuineProbes: 8, strangerProbes: 4 });
    expect(m.retake).toBeCloseTo(1 / 4, 12);
    expect(m.counts.refused).toEqual({ count: 2, rate: 1 / 3, range: [1 / 3, 1 / 3] });
    expect(m.wrongPerson).toBeCloseTo(1 / 3, 12);
    expect(m.rank1).toBeCloseTo(2 / 3, 12);
    expect(m.strangersAdmitted).toBe(0.5);
  });
});

describe('ScoreHistogram and atLeastOne', () => {
  it('counts scores at or above a threshold on its grid', () => {
    const h = new ScoreHistogram();
    for (const s of [0, 0.1, 0.5, 0.5, 0.59999, 0.6, 1]) h.add(s);
    expect(h.atOrAbove(0.5)).toBe(5);
    expect(h.atOrAbove(0.6)).toBe(2);
    expect(h.atOrAbove(1)).toBe(1);
    expect(h.rate(0)).toBe(1);
  });

  it('gives 1 - (1 - p)^n for the chance that one of n trials happens', () => {
    expect(atLeastOne(1e-6, 1_000)).toBeCloseTo(1 - (1 - 1e-6) ** 1_000, 12);
    expect(atLeastOne(1, 3)).toBe(1);
    expect(atLeastOne(0.5, 0)).toBe(0);
  });
});
