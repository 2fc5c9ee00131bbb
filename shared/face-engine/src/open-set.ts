/**
 * Open-set identification measured, not extrapolated: galleries of the size claimed are built from
 * labelled photos, every other photo is searched in them and decided the way the cloud and the
 * device agent decide (FaceIndex search of CHECK_IN_CANDIDATES, calibrate, `faceDecision` of
 * @portico/checkin-policy), and the answers are counted: strangers admitted, enrolled people
 * refused, sent to a second factor, asked to retake, taken for someone else.
 */
import { faceDecision, type FacePolicy, type ProbeQuality } from '@portico/checkin-policy';
import { meanEmbedding } from './embedding.js';
import { FaceIndex, type CalibratedHit } from './face-index.js';
import { seededRandom } from './seeded-random.js';

/** Candidates a check-in searches before calibrating them (the cloud's gallery: 1 + 4 spare). */
export const CHECK_IN_CANDIDATES = 5;

/** The product's identification: search, then calibrated scores, best first. */
export function identify(index: FaceIndex, embedding: Float32Array): CalibratedHit[] {
  return index.calibrate(embedding, index.search(embedding, CHECK_IN_CANDIDATES));
}

export interface Photo extends ProbeQuality {
  /** Identity. */
  readonly label: string;
  readonly embedding: Float32Array;
  /** Enrollment quality (FaceAnalysis.quality): enrollment refuses photos under the tenant's level. */
  readonly quality: number;
}

export interface SplitPlan {
  /** People enrolled. */
  readonly gallery: number;
  /** Enrollment photos per person (their mean embedding is the template). */
  readonly photosPerPerson: number;
  readonly splits: number;
  readonly seed: number;
  /** Enrollment accepts photos of at least this quality (the tenant's biometricQualityLevel). */
  readonly enrollQuality: number;
}

export interface Split {
  /** Enrolled identity -> its enrollment photos. */
  readonly enrolled: ReadonlyMap<string, readonly number[]>;
  /** Photos of enrolled people that are not enrollment photos. */
  readonly genuineProbes: readonly number[];
  /** Every photo of the people held out. */
  readonly strangerProbes: readonly number[];
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * Per split: a third of the people are held out as strangers (fewer when the gallery needs them:
 * then all but `gallery` of the enrollable ones), the rest are candidates for the gallery. A person
 * is enrollable with at least one photo of `enrollQuality`. Enrolled first are people with
 * `photosPerPerson` such photos and a photo left over (their other photos are the genuine probes),
 * then gallery filler with up to `photosPerPerson` of them and no probe (as at a real door, most
 * people enrolled are not in the queue), until the gallery has `gallery` people. People who cannot
 * be enrolled are always strangers. Throws when the photos cannot fill the gallery.
 */
export function planSplits(photos: readonly Photo[], plan: SplitPlan): Split[] {
  const random = seededRandom(plan.seed);
  const byLabel = new Map<string, number[]>();
  photos.forEach((p, i) => byLabel.set(p.label, [...(byLabel.get(p.label) ?? []), i]));
  const labels = [...byLabel.keys()].sort();
  const k = plan.photosPerPerson;
  const splits: Split[] = [];
  for (let s = 0; s < plan.splits; s++) {
    const order = shuffled(labels, random);
    const photoOrder = new Map(order.map((label) => [label, shuffled(byLabel.get(label)!, random)]));
    const enrollable = (label: string) =>
      photoOrder.get(label)!.filter((i) => photos[i]!.quality >= plan.enrollQuality);
    const canEnrol = order.filter((label) => enrollable(label).length > 0);
    const held = Math.min(Math.floor(labels.length / 3), canEnrol.length - plan.gallery);
    if (held < 1) {
      throw new RangeError(
        `${canEnrol.length} people have an enrollable photo: too few for a gallery of ${plan.gallery} and strangers`,
      );
    }
    const strangers = new Set(canEnrol.slice(0, held));
    const canEnrolSet = new Set(canEnrol);
    for (const label of order) if (!canEnrolSet.has(label)) strangers.add(label);
    const candidates = canEnrol.slice(held);
    const probed = (label: string) => enrollable(label).length >= k && photoOrder.get(label)!.length > k;
    const enrolled = new Map<string, number[]>();
    const genuineProbes: number[] = [];
    const chosen = [...candidates.filter(probed), ...candidates.filter((l) => !probed(l))];
    for (const label of chosen.slice(0, plan.gallery)) {
      const enroll = enrollable(label).slice(0, k);
      enrolled.set(label, enroll);
      if (probed(label)) genuineProbes.push(...photoOrder.get(label)!.filter((i) => !enroll.includes(i)));
    }
    const strangerProbes = [...strangers].flatMap((label) => byLabel.get(label)!);
    splits.push({ enrolled, genuineProbes, strangerProbes });
  }
  return splits;
}

/** Calibrated scores in [0, 1] counted in bins of 1/BINS (the last bin holds 1 exactly). */
export class ScoreHistogram {
  static readonly BINS = 10_000;
  readonly counts = new Float64Array(ScoreHistogram.BINS + 1);
  total = 0;

  add(score: number): void {
    this.counts[Math.min(ScoreHistogram.BINS, Math.max(0, Math.floor(score * ScoreHistogram.BINS)))]!++;
    this.total++;
  }

  /** Scores at or above t (t on the bin grid counts exactly; between, the bin holding t counts). */
  atOrAbove(t: number): number {
    let n = 0;
    for (let b = Math.max(0, Math.floor(t * ScoreHistogram.BINS + 1e-9)); b <= ScoreHistogram.BINS; b++)
      n += this.counts[b]!;
    return n;
  }

  rate(t: number): number {
    return this.total > 0 ? this.atOrAbove(t) / this.total : NaN;
  }
}

export type Answer = 'admitted' | 'wrong_person' | 'step_up' | 'refused' | 'retake';

/** One probe searched in one split's gallery: what the decision needs. */
export interface ProbeResult {
  readonly photo: number;
  readonly stranger: boolean;
  /** The best candidate after calibration (none in an empty gallery). */
  readonly best?: { readonly label: string; readonly score: number };
  /** The probe's calibrated score against its own template (genuine probes). */
  readonly genuineScore?: number;
}

export interface SplitRun {
  readonly results: ProbeResult[];
  /** Calibrated scores of every probe against every template of another person (when asked for). */
  readonly impostor: ScoreHistogram;
}

/**
 * Every probe of a split searched in a gallery of its enrolled people the product's way (`identify`),
 * and, with `perPair`, scored against every template (`calibrateAll`, the statistics `calibrate`
 * uses) for the per-pair rates, which doubles the cost.
 */
export function runSplit(photos: readonly Photo[], split: Split, perPair = true): SplitRun {
  const index = new FaceIndex({ initialCapacity: split.enrolled.size });
  for (const [label, enroll] of split.enrolled) {
    index.add(label, meanEmbedding(enroll.map((i) => photos[i]!.embedding)));
  }
  const rowLabels = [...index.entries()].map(([label]) => label);
  const impostor = new ScoreHistogram();
  const results: ProbeResult[] = [];
  const probe = (i: number, stranger: boolean): void => {
    const photo = photos[i]!;
    const search = index.search(photo.embedding, CHECK_IN_CANDIDATES);
    const [best] = index.calibrate(photo.embedding, search);
    let genuineScore: number | undefined;
    if (perPair) {
      const all = index.calibrateAll(photo.embedding, search);
      for (let row = 0; row < all.length; row++) {
        if (rowLabels[row] === photo.label) genuineScore = all[row]!;
        else impostor.add(all[row]!);
      }
    }
    results.push({
      photo: i,
      stranger,
      ...(best ? { best: { label: best.id, score: best.score } } : {}),
      ...(genuineScore === undefined ? {} : { genuineScore }),
    });
  };
  for (const i of split.genuineProbes) probe(i, false);
  for (const i of split.strangerProbes) probe(i, true);
  return { results, impostor };
}

/**
 * The answer at the door, by `faceDecision` (liveness not judged: still photos). Genuine probes:
 * `admitted` (accepted as themselves), `wrong_person` (accepted as someone else), `step_up` (sent to a
 * second factor as themselves), `refused` (refused, or sent to a second factor as someone else: a
 * factor bound to another person cannot be passed), `retake`. Strangers: `admitted` (as anybody),
 * `step_up`, `refused`, `retake`.
 */
export function answerOf(photos: readonly Photo[], result: ProbeResult, policy: FacePolicy): Answer {
  const photo = photos[result.photo]!;
  const decision = faceDecision({ ...policy, requireLiveness: false }, photo, result.best, null);
  const right = result.stranger || result.best?.label === photo.label;
  if (decision === 'retake') return 'retake';
  if (decision === 'accept') return right ? 'admitted' : 'wrong_person';
  return decision === 'step_up' && right ? 'step_up' : 'refused';
}

export interface Counted {
  readonly count: number;
  /** Share of the probes it is counted over (see MeasuredOpenSet). */
  readonly rate: number;
  /** Lowest and highest rate of a single split. */
  readonly range: readonly [number, number];
}

export interface MeasuredOpenSet {
  readonly gallery: number;
  readonly photosPerPerson: number;
  readonly splits: number;
  readonly genuineProbes: number;
  readonly strangerProbes: number;
  /** Over stranger probes that were judged (not retaken). */
  readonly strangersAdmitted: number;
  readonly strangersStepUp: number;
  /** Over genuine probes that were judged (not retaken). */
  readonly refused: number;
  readonly stepUp: number;
  readonly wrongPerson: number;
  readonly rank1: number;
  /** Over all probes of their kind. */
  readonly retake: number;
  readonly strangerRetake: number;
  readonly counts: Record<string, Counted>;
}

/** The answers of every split counted, with each rate's range over the splits. */
export function measure(
  plan: Pick<SplitPlan, 'gallery' | 'photosPerPerson'>,
  runs: readonly SplitRun[],
  photos: readonly Photo[],
  policy: FacePolicy,
): MeasuredOpenSet {
  const answered = runs.map((run) =>
    run.results.map((r) => ({
      stranger: r.stranger,
      answer: answerOf(photos, r, policy),
      rank1: !r.stranger && r.best?.label === photos[r.photo]!.label,
    })),
  );
  type Answered = (typeof answered)[number][number];
  const tally = (select: (r: Answered) => boolean, over: (r: Answered) => boolean): Counted => {
    let count = 0;
    let total = 0;
    const perSplit = answered.map((results) => {
      const pool = results.filter(over);
      const hit = pool.filter(select).length;
      count += hit;
      total += pool.length;
      return pool.length ? hit / pool.length : NaN;
    });
    const finite = perSplit.filter(Number.isFinite);
    return {
      count,
      rate: total ? count / total : NaN,
      range: [Math.min(...finite), Math.max(...finite)],
    };
  };
  const genuineJudged = (r: Answered) => !r.stranger && r.answer !== 'retake';
  const strangerJudged = (r: Answered) => r.stranger && r.answer !== 'retake';
  const counts = {
    strangersAdmitted: tally((r) => r.answer === 'admitted', strangerJudged),
    strangersStepUp: tally((r) => r.answer === 'step_up', strangerJudged),
    refused: tally((r) => r.answer === 'refused', genuineJudged),
    stepUp: tally((r) => r.answer === 'step_up', genuineJudged),
    wrongPerson: tally((r) => r.answer === 'wrong_person', genuineJudged),
    rank1: tally((r) => r.rank1, genuineJudged),
    retake: tally(
      (r) => r.answer === 'retake',
      (r) => !r.stranger,
    ),
    strangerRetake: tally(
      (r) => r.answer === 'retake',
      (r) => r.stranger,
    ),
  };
  const all = answered.flat();
  return {
    gallery: plan.gallery,
    photosPerPerson: plan.photosPerPerson,
    splits: runs.length,
    genuineProbes: all.filter((r) => !r.stranger).length,
    strangerProbes: all.filter((r) => r.stranger).length,
    strangersAdmitted: counts.strangersAdmitted.rate,
    strangersStepUp: counts.strangersStepUp.rate,
    refused: counts.refused.rate,
    stepUp: counts.stepUp.rate,
    wrongPerson: counts.wrongPerson.rate,
    rank1: counts.rank1.rate,
    retake: counts.retake.rate,
    strangerRetake: counts.strangerRetake.rate,
    counts,
  };
}

/** Chance that at least one of n independent trials of probability p happens: 1 - (1 - p)^n. */
export function atLeastOne(p: number, n: number): number {
  if (p >= 1) return n > 0 ? 1 : 0;
  return -Math.expm1(n * Math.log1p(-p));
}

/** How a check-in admitted well above the accept line refreshes its person's template. */
export interface RefreshRule {
  /** Score above the accept line a check-in must reach to refresh (well above: not a close call). */
  readonly margin: number;
  /** Check-in photos a template keeps beside its enrollment photos (the oldest goes first). */
  readonly keep: number;
}

/**
 * Template refresh on the genuine probes of a split, in each person's photo order: every probe is
 * decided against the gallery as it stands, then, when accepted as its own person at or above
 * `matchThreshold + margin`, joins that person's template (the mean of the enrollment photos and
 * the last `keep` such check-ins). Returns the probes after each person's first, decided with
 * refresh and without it (the same photos in the same gallery), so both can be counted alike.
 */
export function runRefresh(
  photos: readonly Photo[],
  split: Split,
  policy: FacePolicy,
  rule: RefreshRule,
): { withRefresh: SplitRun; without: SplitRun; refreshed: number } {
  const index = new FaceIndex({ initialCapacity: split.enrolled.size });
  for (const [label, enroll] of split.enrolled) {
    index.add(label, meanEmbedding(enroll.map((i) => photos[i]!.embedding)));
  }
  const byPerson = new Map<string, number[]>();
  for (const i of split.genuineProbes) {
    const label = photos[i]!.label;
    byPerson.set(label, [...(byPerson.get(label) ?? []), i]);
  }
  const decide = (i: number): ProbeResult => {
    const [best] = identify(index, photos[i]!.embedding);
    return { photo: i, stranger: false, ...(best ? { best: { label: best.id, score: best.score } } : {}) };
  };
  const withRefresh: ProbeResult[] = [];
  const without: ProbeResult[] = [];
  let refreshed = 0;
  for (const [label, probes] of byPerson) {
    const enroll = split.enrolled.get(label)!.map((i) => photos[i]!.embedding);
    const original = meanEmbedding(enroll);
    if (probes.length > 1) for (const i of probes.slice(1)) without.push(decide(i));
    const kept: Float32Array[] = [];
    probes.forEach((i, n) => {
      const result = decide(i);
      if (n > 0) withRefresh.push(result);
      const admitted = answerOf(photos, result, policy) === 'admitted';
      if (admitted && result.best!.score >= policy.matchThreshold + rule.margin) {
        kept.push(photos[i]!.embedding);
        if (kept.length > rule.keep) kept.shift();
        index.add(label, meanEmbedding([...enroll, ...kept]));
        refreshed++;
      }
    });
    index.add(label, original);
  }
  const empty = new ScoreHistogram();
  return {
    withRefresh: { results: withRefresh, impostor: empty },
    without: { results: without, impostor: empty },
    refreshed,
  };
}
