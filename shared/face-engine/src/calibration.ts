/**
 * Match scores that mean the same thing whatever the gallery: a cosine turned into an estimate of how
 * rarely a stranger scores that high. A raw cosine threshold admits strangers in proportion to the
 * gallery size and unevenly across people (some faces score high against everyone); symmetric score
 * normalisation (S-norm) against a cohort of other templates removes most of that unevenness:
 *
 *   z = ((cosine - mean_probe) / sd_probe + (cosine - mean_template) / sd_template) / 2
 *
 * where mean/sd are the probe's (and the template's) cosines against a cohort of templates of other
 * people (the gallery itself, see FaceIndex.calibrate). Were z normal, -log10(P(N(0,1) >= z)) / 10
 * would be a score that a stranger reaches with probability 10^(-10 score). On real-world photos
 * (lfw-dev: 8.7 million stranger pairs) z's tail is heavier: its log-rate falls linearly in z, by
 * about 1.1 decades per unit, not quadratically. So the score follows the normal tail up to
 * TAIL_KNEE and then that straight line:
 *
 *   score = g(z) for z <= TAIL_KNEE, g(TAIL_KNEE) + TAIL_SLOPE (z - TAIL_KNEE) above; g(z) = -log10(P(N(0,1) >= z)) / 10
 *
 * clipped to [0, 1], and a stranger reaches `score` against one enrolled template with probability
 * about 10^(-10 score) (0.6: one in a million); with N people enrolled about N * 10^(-10 score) of
 * strangers pass. `pnpm --filter @portico/face-engine eval` measures how well that holds (README,
 * "Identification").
 *
 * Small cohorts give noisy statistics, so both are shrunk towards the embedder's impostor prior with
 * the weight of PRIOR_WEIGHT cohort scores: with an empty gallery the score is the cosine measured
 * against the prior alone.
 */

/** Cosine between different people's templates for the current embedder, measured by `pnpm eval`. */
export const IMPOSTOR_PRIOR = { mean: 0.047, sd: 0.112 } as const;
/** How many cohort scores the prior is worth. */
export const PRIOR_WEIGHT = 32;
/** Templates of the gallery a probe and a candidate are scored against (a stride sample beyond this). */
export const COHORT_SIZE = 512;
export interface CohortStats {
  readonly mean: number;
  readonly sd: number;
}

/** Mean and standard deviation of cohort scores, shrunk towards IMPOSTOR_PRIOR. */
export function cohortStats(scores: ArrayLike<number>): CohortStats {
  const n = scores.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += scores[i]!;
  const mean = n > 0 ? sum / n : 0;
  let squares = 0;
  for (let i = 0; i < n; i++) squares += (scores[i]! - mean) ** 2;
  const w = PRIOR_WEIGHT;
  return {
    mean: (sum + w * IMPOSTOR_PRIOR.mean) / (n + w),
    sd: Math.sqrt((squares + w * IMPOSTOR_PRIOR.sd ** 2) / (n + w)),
  };
}

/** Where the impostor z's tail leaves the normal one, and its slope beyond (score per unit of z), fitted on lfw-dev. */
export const TAIL_KNEE = 2.15;
export const TAIL_SLOPE = 0.108;
const AT_KNEE = -log10NormalTail(TAIL_KNEE) / 10;

/** The calibrated score (see the module comment) of one cosine given both cohorts. */
export function calibratedScore(cosine: number, probe: CohortStats, template: CohortStats): number {
  const z = ((cosine - probe.mean) / probe.sd + (cosine - template.mean) / template.sd) / 2;
  const score = z <= TAIL_KNEE ? -log10NormalTail(z) / 10 : AT_KNEE + TAIL_SLOPE * (z - TAIL_KNEE);
  return Math.min(1, Math.max(0, score));
}

/** Expected share of single comparisons of a stranger that reach a calibrated score. */
export function falseMatchRateAt(score: number): number {
  return 10 ** (-10 * score);
}

/**
 * log10 P(N(0,1) >= z), without underflow far in the tail: erfc by the Chebyshev fit of Numerical
 * Recipes (fractional error < 1.2e-7 everywhere), kept in the log domain.
 */
export function log10NormalTail(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * x);
  const poly =
    -1.26551223 +
    t *
      (1.00002368 +
        t *
          (0.37409196 +
            t *
              (0.09678418 +
                t *
                  (-0.18628806 +
                    t *
                      (0.27886807 +
                        t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  const lnErfc = Math.log(t) - x * x + poly;
  const lnTail = z >= 0 ? lnErfc + Math.log(0.5) : Math.log(1 - 0.5 * Math.exp(lnErfc));
  return lnTail / Math.LN10;
}
