/**
 * `pnpm bench` (or `pnpm --filter @portico/face-engine bench [-- --quick]`): per-stage latency of the
 * chain on a 640x480 JPEG, embeddings per second through the worker pool, and 1:N search latency
 * and recall@1 (fast path against exact) at 1k, 10k, 100k and 1M synthetic templates.
 */
import os from 'node:os';
import sharp from 'sharp';
import { Analyzer } from '../src/analyzer.js';
import { DEFAULT_LIMITS } from '../src/decode.js';
import { createFaceEngine } from '../src/engine.js';
import { percentile } from '../src/evaluation.js';
import { FaceIndex } from '../src/face-index.js';
import { fetchPinnedFiles } from '../src/models/fetch.js';
import { FIXTURE_SOURCE, FIXTURES } from '../src/models/manifest.js';
import { fixtureDir, resolveModelDir } from '../src/models/model-dir.js';
import { loadVerifiedModels } from '../src/models/model-store.js';
import type { ProbeTimings, StageTimings } from '../src/types.js';

const quick = process.argv.includes('--quick');
const ms = (x: number): string => x.toFixed(2).padStart(8);
const cpuMs = (usage: NodeJS.CpuUsage): number => (usage.user + usage.system) / 1000;

async function frame640(): Promise<Buffer> {
  const dir = fixtureDir(resolveModelDir());
  await fetchPinnedFiles(FIXTURE_SOURCE, FIXTURES, dir);
  // sample6: several people; cropped to 4:3 around the middle and scaled to 640x480.
  return sharp(`${dir}/sample6.jpg`).resize(640, 480, { fit: 'cover' }).jpeg({ quality: 90 }).toBuffer();
}

async function stages(jpeg: Buffer): Promise<void> {
  const analyzer = await Analyzer.create(await loadVerifiedModels(resolveModelDir()), {
    limits: DEFAULT_LIMITS,
  });
  // analyze (enrollment: everything) without and with liveness; probe (identification: embedding and
  // passive liveness score, no quality or pose models).
  const variants = [
    { label: '', run: () => analyzer.analyze(jpeg) },
    { label: ', with liveness', run: () => analyzer.analyze(jpeg, { liveness: true }) },
    { label: ', probe (identify) with liveness', run: () => analyzer.probe(jpeg, { liveness: true }) },
  ];
  for (const { label, run } of variants) {
    for (let i = 0; i < 10; i++) await run();
    const runs: ProbeTimings[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < (quick ? 30 : 100); i++) {
      const before = process.cpuUsage();
      runs.push((await run()).timings);
      cpu.push(cpuMs(process.cpuUsage(before)));
    }
    console.log(`\nchain on one 640x480 JPEG, one thread, ${runs.length} runs${label}`);
    console.log('  stage           p50 ms   p95 ms');
    const keys = ['decode', 'detect', 'landmarks', 'align', 'embed', 'quality', 'liveness', 'total'] as const;
    for (const key of keys) {
      const values = runs
        .map((t) => (t as Partial<StageTimings>)[key])
        .filter((v): v is number => v !== undefined);
      if (values.length === 0) continue;
      console.log(`  ${key.padEnd(12)} ${ms(percentile(values, 50))} ${ms(percentile(values, 95))}`);
    }
    console.log(
      `  ${'CPU time'.padEnd(12)} ${ms(percentile(cpu, 50))} ${ms(percentile(cpu, 95))}  (process CPU per frame: unaffected by waiting for a core)`,
    );
  }
  await analyzer.release();
}

async function pool(jpeg: Buffer): Promise<void> {
  const workers = os.availableParallelism();
  const engine = await createFaceEngine({ workers });
  console.log(`\nworker pool (${workers} worker processes on ${os.availableParallelism()} cores), 640x480`);
  const variants = [
    { label: 'analyze', run: () => engine.analyze(jpeg) },
    { label: 'probe with liveness', run: () => engine.probe(jpeg, { liveness: true }) },
  ];
  for (const { label, run } of variants) {
    await Promise.all(Array.from({ length: workers * 4 }, run));
    // One frame at a time: the idle worker takes the mirrored embedding.
    const single: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t = performance.now();
      await run();
      single.push(performance.now() - t);
    }
    const count = quick ? 100 : 400;
    const rate = async (concurrency: number): Promise<number> => {
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next++ < count) await run();
        }),
      );
      return count / ((performance.now() - t0) / 1000);
    };
    const atFour = await rate(4);
    const allAtOnce = await rate(count);
    console.log(
      `  ${label.padEnd(20)} one at a time p50 ${ms(percentile(single, 50))} ms, p95 ${ms(percentile(single, 95))} ms; ` +
        `${atFour.toFixed(1)} frames/s at concurrency 4, ${allAtOnce.toFixed(1)} all at once (${count} frames)`,
    );
  }
  await engine.close();
}

/** Deterministic template i: the probes are regenerated from it instead of keeping a second copy. */
function template(i: number, out: Float32Array): Float32Array {
  let a = (i * 2654435761 + 1) >>> 0 || 1;
  let n = 0;
  for (let j = 0; j < out.length; j++) {
    a ^= a << 13;
    a ^= a >>> 17;
    a ^= a << 5;
    const v = (a >>> 0) / 4294967296 - 0.5;
    out[j] = v;
    n += v * v;
  }
  const inv = 1 / Math.sqrt(n);
  for (let j = 0; j < out.length; j++) out[j]! *= inv;
  return out;
}

/** Exact against fast search of `queries` probes at cosine 0.5 to template `sourceOf(q)`, timed. */
function compare(
  index: FaceIndex,
  queries: number,
  sourceOf: (q: number) => number,
  noiseFrom: number,
  among?: ReadonlySet<string>,
) {
  const scratch = new Float32Array(512);
  const noise = new Float32Array(512);
  const exactTimes: number[] = [];
  const fastTimes: number[] = [];
  const fastCpu: number[] = [];
  let agree = 0;
  let exactRight = 0;
  for (let q = 0; q < queries; q++) {
    const source = sourceOf(q);
    template(source, scratch);
    template(noiseFrom + q, noise);
    const probe = scratch.map((x, j) => 0.5 * x + Math.sqrt(0.75) * noise[j]!);
    let t = performance.now();
    const exact = index.search(probe, 1, { mode: 'exact', among })[0]!;
    exactTimes.push(performance.now() - t);
    t = performance.now();
    const before = process.cpuUsage();
    const fast = index.search(probe, 1, { mode: 'fast', among })[0]!;
    fastCpu.push(cpuMs(process.cpuUsage(before)));
    fastTimes.push(performance.now() - t);
    if (fast.id === exact.id) agree++;
    if (exact.id === `t${source}`) exactRight++;
  }
  return { exactTimes, fastTimes, fastCpu, recall: agree / queries, exactRight: exactRight / queries };
}

function search(): void {
  const sizes = quick ? [1_000, 10_000, 100_000] : [1_000, 10_000, 100_000, 1_000_000];
  console.log('\n1:N search, 512-d synthetic templates, probes at cosine 0.5 to a random template');
  console.log(
    '  size       build s  exact p50  exact p99   fast p50   fast p99  fast CPU p99  recall@1(fast=exact)  exact=source  index MB  process RSS MB',
  );
  const scratch = new Float32Array(512);
  for (const size of sizes) {
    // The index's own memory: what its build added to the heap and to array buffers (its rows), the
    // previous size's index collected first where the runtime lets a script ask (node --expose-gc).
    (globalThis as { gc?: () => void }).gc?.();
    const memoryBefore = process.memoryUsage();
    const t0 = performance.now();
    const index = new FaceIndex({ initialCapacity: size });
    for (let i = 0; i < size; i++) index.add(`t${i}`, template(i, scratch));
    const build = (performance.now() - t0) / 1000;
    (globalThis as { gc?: () => void }).gc?.();
    const memory = process.memoryUsage();
    const indexMb =
      (memory.heapUsed + memory.arrayBuffers - memoryBefore.heapUsed - memoryBefore.arrayBuffers) / 2 ** 20;
    const queries = size >= 1_000_000 ? 100 : 500;
    const r = compare(index, queries, (q) => (q * 7919) % size, size + 1_000_003);
    console.log(
      `  ${String(size).padEnd(9)} ${build.toFixed(1).padStart(7)} ${ms(percentile(r.exactTimes, 50))}   ${ms(percentile(r.exactTimes, 99))}   ${ms(percentile(r.fastTimes, 50))}   ${ms(percentile(r.fastTimes, 99))}  ${ms(percentile(r.fastCpu, 99))}     ${r.recall.toFixed(4).padStart(10)} (${queries} q)  ${r.exactRight.toFixed(4)}  ${indexMb.toFixed(0).padStart(8)}  ${(memory.rss / 2 ** 20).toFixed(0).padStart(14)}`,
    );
    if (size === 100_000) {
      // An event's guest list (every other template) in the same index: `among`, both paths.
      const among = new Set(Array.from({ length: size / 2 }, (_, i) => `t${2 * i}`));
      const g = compare(index, 200, (q) => 2 * ((q * 7919) % (size / 2)), size + 2_000_003, among);
      const p = (times: number[], at: number) => percentile(times, at).toFixed(2);
      console.log(
        `  guests ${size / 2} of ${size} (an event's list, \`among\`): exact p50 ${p(g.exactTimes, 50)} ms, p99 ${p(g.exactTimes, 99)} ms; fast p50 ${p(g.fastTimes, 50)} ms, p99 ${p(g.fastTimes, 99)} ms; recall@1 ${g.recall.toFixed(4)} (200 q); exact=source ${g.exactRight.toFixed(4)}`,
      );
    }
  }
}

console.log(
  `face-engine benchmark on ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.availableParallelism()} cores, Node ${process.version}`,
);
const jpeg = await frame640();
await stages(jpeg);
await pool(jpeg);
search();
