/**
 * `pnpm --filter @portico/face-engine eval [folder]`: runs the whole chain on a labelled folder
 * (default ../shared/faces from the workspace root; identity = the name of the folder holding the
 * image) and prints rank-1, EER, TAR at FAR 1e-3, score ranges, a threshold and per-stage latency.
 */
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Analyzer } from '../src/analyzer.js';
import { DEFAULT_LIMITS } from '../src/decode.js';
import { isFaceEngineError } from '../src/errors.js';
import { TENANT_SETTINGS_DEFAULTS } from '@portico/contract';
import {
  evaluateEmbeddings,
  labelledImages,
  percentile,
  type EvaluationReport,
  type LabelledEmbedding,
} from '../src/evaluation.js';
import { loadVerifiedModels } from '../src/models/model-store.js';
import { defaultLabelledDir, resolveModelDir } from '../src/models/model-dir.js';
import type { StageTimings } from '../src/types.js';

const folder = path.resolve(process.argv[2] ?? defaultLabelledDir());
if (!existsSync(folder)) {
  console.error(
    `No labelled folder at ${folder}. Pass one: pnpm --filter @portico/face-engine eval <folder>`,
  );
  process.exit(2);
}

const analyzer = await Analyzer.create(await loadVerifiedModels(resolveModelDir()), {
  limits: DEFAULT_LIMITS,
});
const images = await labelledImages(folder);
const samples: Array<LabelledEmbedding & { quality: number; file: string }> = [];
const timings: StageTimings[] = [];
const failures: string[] = [];
for (const { label, file } of images) {
  try {
    const result = await analyzer.analyze(await readFile(file));
    samples.push({ label, embedding: result.embedding, quality: result.quality, file });
    timings.push(result.timings);
  } catch (error) {
    if (!isFaceEngineError(error)) throw error;
    failures.push(`${path.relative(folder, file)}: ${error.code}`);
  }
}
await analyzer.release();

const f = (x: number): string => x.toFixed(4);
console.log(`folder            ${folder}`);
console.log(
  `images            ${images.length} labelled, ${samples.length} embedded, ${failures.length} failed`,
);
for (const line of failures) console.log(`  failed          ${line}`);

function report(title: string, set: readonly LabelledEmbedding[]): EvaluationReport {
  const r = evaluateEmbeddings(set);
  console.log(`\n${title}`);
  console.log(`identities        ${r.identities} (${set.length} images)`);
  console.log(`rank-1            ${(r.rank1 * 100).toFixed(2)} %`);
  console.log(`EER               ${(r.eer * 100).toFixed(2)} % at ${f(r.eerThreshold)}`);
  console.log(`TAR @ FAR 1e-3    ${(r.tarAtFar1e3 * 100).toFixed(2)} %`);
  console.log(`genuine pairs     ${r.genuine.count}: ${f(r.genuine.min)} .. ${f(r.genuine.max)}`);
  console.log(`impostor pairs    ${r.impostor.count}: ${f(r.impostor.min)} .. ${f(r.impostor.max)}`);
  console.log(
    `separated         ${r.separated ? `yes, gap ${f(r.genuine.min - r.impostor.max)}: every genuine pair above every impostor pair` : 'NO'}`,
  );
  console.log(`recommended thr.  ${f(r.recommendedThreshold)}`);
  return r;
}

const r = report('every image', samples);
// What the product compares: enrollment refuses photos below the tenant's quality level (default 0.5).
const level = TENANT_SETTINGS_DEFAULTS.biometricQualityLevel;
const refused = samples.filter((s) => s.quality < level);
report(
  `images the product would enrol (quality >= ${level}, the default biometricQualityLevel)`,
  samples.filter((s) => s.quality >= level),
);
for (const s of refused)
  console.log(`  left out         ${path.relative(folder, s.file)}: quality ${s.quality.toFixed(3)}`);
console.log('');
console.log('latency (ms, single thread, per image)   p50     p95');
for (const stage of ['decode', 'detect', 'landmarks', 'align', 'embed', 'quality', 'total'] as const) {
  const values = timings.map((t) => t[stage]);
  console.log(
    `  ${stage.padEnd(38)} ${percentile(values, 50).toFixed(2).padStart(6)} ${percentile(values, 95).toFixed(2).padStart(7)}`,
  );
}
if (failures.length > 0 || r.rank1 < 1 || !r.separated) process.exitCode = 1;
