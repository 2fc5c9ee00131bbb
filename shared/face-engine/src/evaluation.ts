/** Closed-set verification and identification metrics over labelled embeddings (`pnpm eval`, tests); open set: open-set.ts. */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { cosineSimilarity } from './embedding.js';

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
