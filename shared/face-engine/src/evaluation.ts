/** Verification and identification metrics over labelled embeddings (used by `pnpm eval` and tests). */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { calibratedScore, COHORT_SIZE, cohortStats } from './calibration.js';
import { seededRandom } from './seeded-random.js';
import { cosineSimilarity, meanEmbedding } from './embedding.js';
import { FaceIndex } from './face-index.js';

export interface LabelledEmbedding {
  readonly label: string;
  readonly embedding: Float32Array;
}

export interface EvaluationReport {
  readonly identities: number;
  readonly samples: number;
  readonly rank1: number;
  readonly genuine: { readonly count: number; readonly min: number; readonly max: number };
  readonly impostor: { readonly count: number; readonly min: number; readonly max: number };
  readonly eer: number;
  readonly eerThreshold: number;
  readonly tarAtFar1e3: number;
  /** Midpoint of the gap when genuine and impostor scores separate, else the EER threshold. */
  readonly recommendedThreshold: number;
  readonly separated: boolean;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function evaluateEmbeddings(samples: readonly LabelledEmbedding[]): EvaluationReport {
  const genuine: number[] = [];
  const impostor: number[] = [];
  let correct = 0;
  let probes = 0;
  const scores = samples.map(() => new Float64Array(samples.length));
  for (let i = 0; i < samples.length; i++) {
    for (let j = i + 1; j < samples.length; j++) {
      const s = cosineSimilarity(samples[i]!.embedding, samples[j]!.embedding);
      scores[i]![j] = s;
      scores[j]![i] = s;
      (samples[i]!.label === samples[j]!.label ? genuine : impostor).push(s);
    }
  }
  // Rank-1, leave-one-out: each sample is a probe against all others, when its identity has another sample.
  for (let i = 0; i < samples.length; i++) {
    const label = samples[i]!.label;
    if (!samples.some((s, j) => j !== i && s.label === label)) continue;
    probes++;
    let best = -1;
    let bestScore = -Infinity;
    for (let j = 0; j < samples.length; j++) {
      if (j !== i && scores[i]![j]! > bestScore) {
        bestScore = scores[i]![j]!;
        best = j;
      }
    }
    if (samples[best]?.label === label) correct++;
  }
  genuine.sort((a, b) => a - b);
  impostor.sort((a, b) => a - b);
  // EER: sweep thresholds over all observed scores.
  let eer = 1;
  let eerThreshold = 0;
  let bestGap = Infinity;
  for (const t of [...genuine, ...impostor]) {
    const frr = countBelow(genuine, t) / genuine.length;
    const far = (impostor.length - countBelow(impostor, t)) / impostor.length;
    if (Math.abs(frr - far) < bestGap) {
      bestGap = Math.abs(frr - far);
      eer = (frr + far) / 2;
      eerThreshold = t;
    }
  }
  // TAR at FAR 1e-3: threshold = the impostor score exceeded by at most 0.1 % of impostor pairs.
  const farIndex = Math.min(impostor.length - 1, Math.ceil(impostor.length * (1 - 1e-3)));
  const farThreshold = impostor[farIndex] ?? 1;
  const tar = (genuine.length - countBelow(genuine, farThreshold + 1e-12)) / genuine.length;
  const gMin = genuine[0] ?? NaN;
  const iMax = impostor[impostor.length - 1] ?? NaN;
  const separated = gMin > iMax;
  return {
    identities: new Set(samples.map((s) => s.label)).size,
    samples: samples.length,
    rank1: probes ? correct / probes : NaN,
    genuine: { count: genuine.length, min: gMin, max: genuine[genuine.length - 1] ?? NaN },
    impostor: { count: impostor.length, min: impostor[0] ?? NaN, max: iMax },
    eer,
    eerThreshold,
    tarAtFar1e3: tar,
    recommendedThreshold: separated ? (gMin + iMax) / 2 : eerThreshold,
    separated,
  };
}

/** Number of sorted values strictly below t. */
function countBelow(sorted: readonly number[], t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const IMAGE = /\.(jpe?g|png)$/i;

/**
 * Images in leaf folders at least two levels down (group/identity/*), labelled by that path; loose
 * images and top-level folders (group photos, spoof samples) carry no identity and are skipped.
 */
export async function labelledImages(root: string): Promise<Array<{ label: string; file: string }>> {
  const out: Array<{ label: string; file: string }> = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    const subdirs = entries.filter((e) => e.isDirectory());
    if (subdirs.length === 0 && rel.includes('/')) {
      for (const e of entries)
        if (e.isFile() && IMAGE.test(e.name)) out.push({ label: rel, file: path.join(dir, e.name) });
    }
    for (const d of subdirs.sort((a, b) => a.name.localeCompare(b.name))) {
      await walk(path.join(dir, d.name), rel ? `${rel}/${d.name}` : d.name);
    }
  };
  await walk(root, '');
  return out;
}

// ---------------------------------------------------------------------------------------------
// Open-set identification: strangers at the door, enrolled people refused or taken for someone else.

/** Candidates the check-in searches before calibrating them (the cloud's gallery: 1 + 4 spare). */
export const CHECK_IN_CANDIDATES = 5;
/** Below this many impostor pairs at or above a threshold, its rate comes from the fitted tail. */
export const MIN_EMPIRICAL_PAIRS = 10;
/** Share of the highest impostor scores the exponential tail is fitted to. */
export const TAIL_SHARE = 1e-3;

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Exponential fit of the highest impostor scores: rate(t) = share * exp(-slope * (t - from)). */
export interface TailFit {
  readonly from: number;
  readonly share: number;
  readonly slope: number;
  /** Impostor scores above `from` the fit was made on. */
  readonly scores: number;
}

/** Per-pair rate of impostor scores at or above a threshold, empirical where there is data enough. */
export interface ImpostorTail {
  readonly pairs: number;
  /** Share of impostor pairs at or above t (see `method`). */
  rate(t: number): number;
  /** `empirical` with >= MIN_EMPIRICAL_PAIRS pairs at or above t, else `tail fit`. */
  method(t: number): 'empirical' | 'tail fit';
  /** Impostor pairs at or above t. */
  countAtOrAbove(t: number): number;
}

export interface FittedTail extends ImpostorTail {
  readonly fit: TailFit;
}

/**
 * The impostor score distribution of a decision score. Beyond the data (fewer than
 * MIN_EMPIRICAL_PAIRS pairs at or above t) the rate is an exponential tail fitted by maximum
 * likelihood to the top TAIL_SHARE of impostor scores (at least MIN_EMPIRICAL_PAIRS of them). A
 * tail that falls like a Gaussian one (cosine similarity) falls faster than any exponential, so the
 * fit overestimates it there: a conservative extrapolation. A calibrated score whose calibration
 * holds has an exactly exponential tail, of slope 10 ln 10 = 23.0.
 */
export function impostorTail(scores: ArrayLike<number>): FittedTail {
  const sorted = Float64Array.from(scores).sort();
  const n = sorted.length;
  if (n <= MIN_EMPIRICAL_PAIRS) throw new RangeError(`need more than ${MIN_EMPIRICAL_PAIRS} impostor scores`);
  const top = Math.min(n - 1, Math.max(MIN_EMPIRICAL_PAIRS, Math.ceil(n * TAIL_SHARE)));
  const from = sorted[n - top - 1]!;
  let excess = 0;
  for (let i = n - top; i < n; i++) excess += sorted[i]! - from;
  const fit: TailFit = { from, share: top / n, slope: excess > 0 ? top / excess : Infinity, scores: top };
  const countAtOrAbove = (t: number): number => n - lowerBound(sorted, t);
  const method = (t: number): 'empirical' | 'tail fit' =>
    countAtOrAbove(t) >= MIN_EMPIRICAL_PAIRS ? 'empirical' : 'tail fit';
  return {
    pairs: n,
    fit,
    countAtOrAbove,
    method,
    rate: (t) =>
      method(t) === 'empirical'
        ? countAtOrAbove(t) / n
        : fit.share * Math.exp(-fit.slope * Math.max(0, t - fit.from)),
  };
}

/**
 * The quality-aware rule's impostor rate: every pair's rate (`all`) minus what the penalty removes
 * from the pairs of penalised probes (`penalised`, a part of `all` with its own tail fit):
 * r(t) - w (r_p(t) - r_p(t + penalty)), w the penalised share of the pairs. Measuring the rule by
 * difference keeps the noise of fitting another tail to the other pairs out of the comparison.
 */
export function penalisedTail(all: ImpostorTail, penalised: ImpostorTail, penalty: number): ImpostorTail {
  const w = penalised.pairs / all.pairs;
  const removedCount = (t: number): number =>
    penalised.countAtOrAbove(t) - penalised.countAtOrAbove(t + penalty);
  return {
    pairs: all.pairs,
    rate: (t) =>
      all.method(t) === 'empirical'
        ? (all.countAtOrAbove(t) - removedCount(t)) / all.pairs
        : Math.max(0, all.rate(t) - w * (penalised.rate(t) - penalised.rate(t + penalty))),
    method: (t) => all.method(t),
    countAtOrAbove: (t) => all.countAtOrAbove(t) - removedCount(t),
  };
}

/** Index of the first value >= t in a sorted array. */
function lowerBound(sorted: ArrayLike<number>, t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Chance that at least one of n independent trials of probability p happens: 1 - (1 - p)^n. */
export function atLeastOne(p: number, n: number): number {
  if (p >= 1) return n > 0 ? 1 : 0;
  return -Math.expm1(n * Math.log1p(-p));
}

const MARGIN_STEPS = 4000;

/**
 * FPIR with N people enrolled, from the per-pair impostor rate, scores assumed independent:
 * 1 - (1 - r(t))^N. With a margin (the best must lead the second best by `margin`) a stranger is
 * admitted when one score x >= t leads all N - 1 others by the margin:
 * N * integral over x >= t of dF(x) * (1 - r(x - margin))^(N - 1), summed on a grid.
 */
export function extrapolatedFpir(tail: ImpostorTail, threshold: number, n: number, margin = 0): number {
  const plain = atLeastOne(tail.rate(threshold), n);
  if (margin <= 0) return plain;
  // Far enough that what lies beyond is negligible against the rate at the threshold.
  let end = Math.max(threshold, 1);
  while (tail.rate(end) > 1e-12 * tail.rate(threshold) && end < threshold + 20) end += 0.25;
  const step = (end - threshold) / MARGIN_STEPS;
  let sum = 0;
  let upper = tail.rate(threshold);
  for (let i = 0; i < MARGIN_STEPS; i++) {
    const x = threshold + (i + 1) * step;
    const next = tail.rate(x);
    // The factor at the cell's upper end is the larger one: the sum leans towards admitting.
    sum += Math.max(0, upper - next) * (1 - tail.rate(x - margin)) ** (n - 1);
    upper = next;
  }
  sum += upper * (1 - tail.rate(end - margin)) ** (n - 1);
  return Math.min(plain, n * sum);
}

export interface GenuineScore {
  /** Decision score of the probe against its own template. */
  readonly score: number;
  /** Added to the threshold for this probe (quality-aware rule); 0 otherwise. */
  readonly penalty?: number;
}

/**
 * FNIR with N people enrolled: the probe is refused when its own score is under the threshold
 * (FNMR), and otherwise missed when one of the N - 1 others scores at or above its own score minus
 * the margin (taken for someone else, or refused for want of a margin): mean over genuine probes of
 * [score < t + penalty] + [else] (1 - (1 - r(score - margin))^(N - 1)).
 */
export function extrapolatedFnir(
  genuine: readonly GenuineScore[],
  tail: ImpostorTail,
  threshold: number,
  n: number,
  margin = 0,
): number {
  let missed = 0;
  for (const g of genuine) {
    missed += g.score < threshold + (g.penalty ?? 0) ? 1 : atLeastOne(tail.rate(g.score - margin), n - 1);
  }
  return missed / genuine.length;
}

export interface OpenSetSample extends LabelledEmbedding {
  readonly quality: number;
}

export interface OpenSetSplit {
  /** Enrolled identity -> the indices of its enrollment photos (k of them). */
  readonly enrolled: ReadonlyMap<string, readonly number[]>;
  /** Photos of enrolled identities that are not enrollment photos. */
  readonly genuineProbes: readonly number[];
  /** Every photo of the identities left out of the gallery. */
  readonly strangerProbes: readonly number[];
}

export interface SplitOptions {
  /** Enrollment photos per enrolled identity. */
  readonly k: number;
  /** Identities are dealt into this many folds; each fold is left out (strangers) once per repeat. */
  readonly folds: number;
  readonly repeats: number;
  readonly seed: number;
  /** Enrollment photos are drawn from photos of at least this quality (what enrollment accepts). */
  readonly enrollQuality: number;
}

/**
 * Leave-identities-out splits: per repeat, identities are shuffled into folds, each fold in turn is
 * the strangers and the others are enrolled with k photos (drawn at random among those enrollment
 * accepts), their other photos being genuine probes. An identity with fewer than k acceptable
 * photos, or no photo left to probe with, is never enrolled; its photos are always stranger probes.
 * The random draws do not depend on k: the same seed gives the same folds and photo orders for
 * every k, so k = 1 and k = 3 are compared on the same strangers.
 */
export function openSetSplits(samples: readonly OpenSetSample[], options: SplitOptions): OpenSetSplit[] {
  const random = seededRandom(options.seed);
  const byLabel = new Map<string, number[]>();
  samples.forEach((s, i) => byLabel.set(s.label, [...(byLabel.get(s.label) ?? []), i]));
  const labels = [...byLabel.keys()].sort();
  const splits: OpenSetSplit[] = [];
  for (let r = 0; r < options.repeats; r++) {
    const order = shuffled(labels, random);
    const photos = new Map(order.map((label) => [label, shuffled(byLabel.get(label)!, random)]));
    for (let f = 0; f < options.folds; f++) {
      const enrolled = new Map<string, number[]>();
      const genuineProbes: number[] = [];
      const strangerProbes: number[] = [];
      order.forEach((label, position) => {
        const all = photos.get(label)!;
        const enroll = all.filter((i) => samples[i]!.quality >= options.enrollQuality).slice(0, options.k);
        const rest = all.filter((i) => !enroll.includes(i));
        if (position % options.folds === f || enroll.length < options.k || rest.length === 0) {
          strangerProbes.push(...all);
        } else {
          enrolled.set(label, enroll);
          genuineProbes.push(...rest);
        }
      });
      splits.push({ enrolled, genuineProbes, strangerProbes });
    }
  }
  return splits;
}

export type DecisionScore = 'cosine' | 'calibrated';

/** One probe searched in one split's gallery. */
export interface ProbeTrial {
  readonly sample: number;
  readonly label: string;
  /** Its identity is enrolled (a genuine probe) rather than a stranger. */
  readonly enrolled: boolean;
  readonly quality: number;
  /** Decision score against its own template (genuine probes only). */
  readonly genuine?: number;
  /** Decision scores against every template of other people. */
  readonly impostors: Float64Array;
  /** The product's answer: best and second-best candidate, as the search returns them. */
  readonly best: { readonly label: string; readonly score: number };
  readonly second: number;
}

export interface OpenSetTrial {
  readonly score: DecisionScore;
  readonly probes: readonly ProbeTrial[];
  /** Gallery sizes of the splits. */
  readonly galleries: readonly number[];
}

/**
 * Every probe of every split searched in a FaceIndex of the enrolled identities' templates
 * (meanEmbedding of their k photos), the way the product decides: `cosine`, the best search hit;
 * `calibrated`, CHECK_IN_CANDIDATES search hits then `calibrate`, best first. For the per-pair
 * rates every template is also scored: with the statistics `calibrate` uses (the probe's against
 * the gallery minus the search hits, each template's against the others; the galleries here are
 * below COHORT_SIZE, so the cohort is the whole gallery), checked against `calibrate` on its hits.
 */
export function runOpenSet(
  samples: readonly OpenSetSample[],
  splits: readonly OpenSetSplit[],
  score: DecisionScore,
  /** What each sample looks like as a probe, when not its own embedding (e.g. a burst of frames). */
  probeEmbeddings?: readonly Float32Array[],
): OpenSetTrial {
  const probes: ProbeTrial[] = [];
  const galleries: number[] = [];
  for (const split of splits) {
    const labels = [...split.enrolled.keys()];
    if (labels.length > COHORT_SIZE)
      throw new RangeError(`galleries above ${COHORT_SIZE} are not replicated`);
    const index = new FaceIndex();
    for (const label of labels) {
      index.add(label, meanEmbedding(split.enrolled.get(label)!.map((i) => samples[i]!.embedding)));
    }
    // The templates as the index holds them (float16), so the per-pair scores below are the product's.
    const held = new Map(index.entries());
    const templates = labels.map((label) => held.get(label)!);
    galleries.push(labels.length);
    const templateStats = templates.map((t, row) =>
      cohortStats(templates.filter((_, other) => other !== row).map((u) => dot(t, u))),
    );
    const trial = (sample: number, enrolled: boolean): void => {
      const probe = {
        ...samples[sample]!,
        embedding: probeEmbeddings?.[sample] ?? samples[sample]!.embedding,
      };
      const cosines = templates.map((t) => dot(probe.embedding, t));
      const hits = index.search(probe.embedding, score === 'cosine' ? 2 : CHECK_IN_CANDIDATES, {
        mode: 'exact',
      });
      let decision: number[];
      let answer: Array<{ id: string; score: number }>;
      if (score === 'cosine') {
        decision = cosines;
        answer = hits;
      } else {
        const hitRows = new Set(hits.map((h) => labels.indexOf(h.id)));
        const probeStats = cohortStats(cosines.filter((_, row) => !hitRows.has(row)));
        decision = cosines.map((c, row) => calibratedScore(c, probeStats, templateStats[row]!));
        answer = index.calibrate(probe.embedding, hits);
        for (const hit of answer) {
          if (Math.abs(hit.score - decision[labels.indexOf(hit.id)]!) > 1e-5) {
            throw new Error(`per-pair calibrated score of ${hit.id} differs from FaceIndex.calibrate`);
          }
        }
      }
      const own = labels.indexOf(probe.label);
      probes.push({
        sample,
        label: probe.label,
        enrolled,
        quality: probe.quality,
        ...(enrolled ? { genuine: decision[own]! } : {}),
        impostors: Float64Array.from(decision.filter((_, row) => row !== own)),
        best: { label: answer[0]!.id, score: answer[0]!.score },
        second: answer[1]?.score ?? -Infinity,
      });
    };
    for (const i of split.genuineProbes) trial(i, true);
    for (const i of split.strangerProbes) trial(i, false);
  }
  return { score, probes, galleries };
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** How a strategy decides on the best candidate. */
export interface DecisionRule {
  readonly threshold: number;
  /** The best must lead the second best by this much (0: no margin). */
  readonly margin?: number;
  /** Probes under `quality.below` need `threshold + quality.penalty`. */
  readonly quality?: { readonly below: number; readonly penalty: number };
}

function penaltyOf(rule: DecisionRule, quality: number): number {
  return rule.quality && quality < rule.quality.below ? rule.quality.penalty : 0;
}

/** Admitted as `best` (or refused) by the rule. */
export function admits(rule: DecisionRule, probe: ProbeTrial): boolean {
  return (
    probe.best.score >= rule.threshold + penaltyOf(rule, probe.quality) &&
    probe.best.score - probe.second >= (rule.margin ?? 0)
  );
}

export interface MeasuredOpenSet {
  /** Mean gallery size of the splits. */
  readonly gallery: number;
  readonly strangers: number;
  readonly strangersAdmitted: number;
  readonly fpir: number;
  readonly genuineProbes: number;
  /** Refused, or admitted as someone else. */
  readonly genuineMissed: number;
  readonly fnir: number;
}

/** FPIR and FNIR counted on the product's decisions in the splits' own galleries. */
export function measureOpenSet(trial: OpenSetTrial, rule: DecisionRule): MeasuredOpenSet {
  let strangers = 0;
  let admitted = 0;
  let genuineProbes = 0;
  let missed = 0;
  for (const p of trial.probes) {
    const yes = admits(rule, p);
    if (p.enrolled) {
      genuineProbes++;
      if (!yes || p.best.label !== p.label) missed++;
    } else {
      strangers++;
      if (yes) admitted++;
    }
  }
  return {
    gallery: trial.galleries.reduce((a, b) => a + b, 0) / Math.max(1, trial.galleries.length),
    strangers,
    strangersAdmitted: admitted,
    fpir: strangers ? admitted / strangers : NaN,
    genuineProbes,
    genuineMissed: missed,
    fnir: genuineProbes ? missed / genuineProbes : NaN,
  };
}

/** A trial's pairs under a rule: genuine scores (with the rule's penalty) and two impostor tails. */
export interface PairScores {
  readonly genuine: readonly GenuineScore[];
  /** Impostor decision scores as they are (what outscores a genuine match). */
  readonly impostor: FittedTail;
  /** Impostor decision scores minus the probe's penalty (what passes the threshold). */
  readonly admitted: ImpostorTail;
}

export function pairScores(trial: OpenSetTrial, rule: Omit<DecisionRule, 'threshold'> = {}): PairScores {
  const genuine: GenuineScore[] = [];
  const all: number[] = [];
  const penalised: number[] = [];
  for (const p of trial.probes) {
    const penalty = penaltyOf({ threshold: 0, ...rule }, p.quality);
    if (p.genuine !== undefined) genuine.push({ score: p.genuine, penalty });
    for (const s of p.impostors) {
      all.push(s);
      if (penalty > 0) penalised.push(s);
    }
  }
  const impostor = impostorTail(all);
  const admitted =
    rule.quality && penalised.length > 0
      ? penalisedTail(impostor, impostorTail(penalised), rule.quality.penalty)
      : impostor;
  return { genuine, impostor, admitted };
}

/** Per-pair false-match rate (by `method`) and false-non-match rate at a threshold. */
export interface PairRates {
  readonly threshold: number;
  readonly fmr: number;
  readonly fmrMethod: 'empirical' | 'tail fit';
  readonly impostorPairsAtOrAbove: number;
  readonly fnmr: number;
}

export function pairRates(pairs: PairScores, threshold: number): PairRates {
  const refused = pairs.genuine.filter((g) => g.score < threshold + (g.penalty ?? 0)).length;
  return {
    threshold,
    fmr: pairs.admitted.rate(threshold),
    fmrMethod: pairs.admitted.method(threshold),
    impostorPairsAtOrAbove: pairs.admitted.countAtOrAbove(threshold),
    fnmr: refused / pairs.genuine.length,
  };
}

export interface ExtrapolatedOpenSet {
  readonly n: number;
  readonly fpir: number;
  readonly fnir: number;
}

/** FPIR and FNIR at gallery sizes from the per-pair rates (extrapolatedFpir, extrapolatedFnir). */
export function extrapolateOpenSet(
  pairs: PairScores,
  rule: DecisionRule,
  sizes: readonly number[],
): ExtrapolatedOpenSet[] {
  return sizes.map((n) => ({
    n,
    fpir: extrapolatedFpir(pairs.admitted, rule.threshold, n, rule.margin ?? 0),
    fnir: extrapolatedFnir(pairs.genuine, pairs.impostor, rule.threshold, n, rule.margin ?? 0),
  }));
}

/** The lowest threshold in [low, high] whose per-pair impostor rate is at most `rate` (bisection). */
export function thresholdForRate(tail: ImpostorTail, rate: number, low: number, high: number): number {
  let lo = low;
  let hi = high;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (tail.rate(mid) <= rate) hi = mid;
    else lo = mid;
  }
  return hi;
}
