/**
 * In-memory 1:N index of face templates with cosine search. Two paths:
 * - exact: every template, dot products (templates are stored L2-normalised, as float16: half the
 *   memory of float32 for a cosine that moves by about 10^-5, see search/half.ts);
 * - fast: every template projected to 128 dimensions (seeded randomised Hadamard projection)
 *   and quantised to int8, scanned by a WebAssembly SIMD kernel; the best candidates are then
 *   re-scored exactly. Data-independent: no training, adds and removes are O(1).
 * Recall of fast against exact is measured by the benchmark and the tests (see README).
 */
import { readFileSync } from 'node:fs';
import { calibratedScore, COHORT_SIZE, cohortStats, type CohortStats } from './calibration.js';
import { EMBEDDING_DIMENSIONS } from './embedding.js';
import { seededRandom } from './seeded-random.js';
import { HALF_VALUES, toHalf } from './search/half.js';
import { TopK } from './search/top-k.js';

export type SearchMode = 'exact' | 'fast' | 'auto';

export interface SearchOptions {
  /** `auto` (default) is exact below FAST_SEARCH_MIN_SIZE templates searched, fast from there on. */
  readonly mode?: SearchMode;
  /** Fast path only: templates re-scored exactly after the quantised scan. */
  readonly candidates?: number;
  /**
   * Only these ids (e.g. the guests of an event). `auto` counts them, not the index, against
   * FAST_SEARCH_MIN_SIZE: a big guest list takes the fast path (unless it is under 1/64 of the index).
   */
  readonly among?: ReadonlySet<string>;
}

/** Stored rows of a FaceIndex (see `FaceIndex.exportRows`): `dims` float16 bits and 128 int8 per id. */
export interface IndexRows {
  readonly ids: string[];
  readonly vectors: Uint16Array;
  readonly projected: Int8Array;
}

export interface SearchHit {
  readonly id: string;
  /** Cosine similarity in [-1, 1]. */
  readonly score: number;
}

export interface CalibratedHit {
  readonly id: string;
  /** Cosine similarity in [-1, 1]. */
  readonly cosine: number;
  /** Calibrated score in [0, 1] (see calibration.ts): a stranger reaches it with probability ~10^(-10 score). */
  readonly score: number;
}

/**
 * From this many templates searched `auto` takes the fast path: at 1,000 it costs a third of an
 * exact scan (0.7 against 2.6 ms on a slow 2-core machine; the exact scan grows linearly, 25 ms at
 * 10,000) and decided 31,988 of lfw-dev's 31,990 probes at 1,000 enrolled as the exact scan did
 * (2026-11-27, docs/benchmarks/face-engine.md). Below it the fast path's fixed cost (the projection, 200
 * candidates re-scored) is no saving.
 */
export const FAST_SEARCH_MIN_SIZE = 1_000;
/**
 * An exact dot product (512 float16) costs about as much as the fast path's int8 scan of this many
 * rows (2.6 us against 0.03 us per row on a 2-core AMD EPYC, 2026-11-27, the bench's 10k and 100k rows).
 */
const EXACT_PER_SCANNED = 64;
const DEFAULT_CANDIDATES = 200;
const PROJECTED = 128;
/** Projected coordinates of unit vectors are ~N(0, 1/sqrt(512)); int8 covers +-4.5 sigma. */
const RANGE_I8 = 4.5 / Math.sqrt(EMBEDDING_DIMENSIONS);
const RANGE_I16 = 8 / Math.sqrt(EMBEDDING_DIMENSIONS);
const QUERY_BYTES = 1024;
const WASM_PAGE = 65536;

interface ScanKernel {
  readonly memory: { readonly buffer: ArrayBuffer; grow(pages: number): number };
  readonly scan: (mat: number, q: number, n: number, d: number, out: number) => void;
}

// The project's lib settings (ES2023, no DOM) do not declare WebAssembly; Node has it.
const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (module: object, imports: object) => { exports: unknown };
    };
  }
).WebAssembly;

let kernelModule: object | undefined;

/** scan-i8.wasm is built from scan-i8.wat: `npx -p wabt@1.0.39 wat2wasm scan-i8.wat -o scan-i8.wasm`. */
function loadKernel(): ScanKernel {
  kernelModule ??= new wasm.Module(readFileSync(new URL('./search/scan-i8.wasm', import.meta.url)));
  return new wasm.Instance(kernelModule, {}).exports as ScanKernel;
}

/**
 * Subsampled randomised Hadamard transform: random signs, a Walsh-Hadamard transform, then a fixed
 * random subset of PROJECTED coordinates. An orthonormal random projection like a Gaussian one, but
 * O(d log d) instead of O(d * PROJECTED), which is what makes bulk loading a million templates fast.
 */
class Projection {
  private readonly signs: Float64Array;
  private readonly picks: Int32Array;
  private readonly work: Float64Array;
  private readonly scale: number;

  constructor(
    private readonly dims: number,
    seed: number,
  ) {
    const size = 2 ** Math.ceil(Math.log2(dims));
    const next = seededRandom(seed);
    this.signs = Float64Array.from({ length: size }, () => (next() < 0.5 ? -1 : 1));
    const order = Array.from({ length: size }, (_, i) => i);
    for (let i = size - 1; i > 0; i--) {
      const k = Math.floor(next() * (i + 1));
      [order[i], order[k]] = [order[k]!, order[i]!];
    }
    this.picks = Int32Array.from(order.slice(0, PROJECTED));
    this.work = new Float64Array(size);
    this.scale = 1 / Math.sqrt(size);
  }

  /**
   * The projection of `v` into `out`. The transform runs two butterfly stages per pass (the same
   * additions in the same order as one stage at a time, so the same bits) and only the picked outputs
   * of a last single stage are computed: 3-4 times faster than stage by stage, which is most of the
   * cost of loading a gallery.
   */
  apply(v: Float32Array, offset: number, out: Float32Array): void {
    const w = this.work;
    const n = w.length;
    const signs = this.signs;
    for (let i = 0; i < this.dims; i++) w[i] = v[offset + i]! * signs[i]!;
    if (this.dims < n) w.fill(0, this.dims);
    let h = 1;
    for (; 4 * h <= n; h *= 4) {
      const h2 = 2 * h;
      const h3 = 3 * h;
      for (let i = 0; i < n; i += 4 * h) {
        for (let j = i; j < i + h; j++) {
          const a = w[j]!;
          const b = w[j + h]!;
          const c = w[j + h2]!;
          const d = w[j + h3]!;
          const s0 = a + b;
          const s1 = a - b;
          const s2 = c + d;
          const s3 = c - d;
          w[j] = s0 + s2;
          w[j + h] = s1 + s3;
          w[j + h2] = s0 - s2;
          w[j + h3] = s1 - s3;
        }
      }
    }
    const picks = this.picks;
    if (h < n) {
      // One stage left (n is 2 * 4^k): only the picked coordinates.
      for (let i = 0; i < PROJECTED; i++) {
        const p = picks[i]!;
        out[i] = (p < h ? w[p]! + w[p + h]! : w[p - h]! - w[p]!) * this.scale;
      }
    } else {
      for (let i = 0; i < PROJECTED; i++) out[i] = w[picks[i]!]! * this.scale;
    }
  }
}

export class FaceIndex {
  private readonly dims: number;
  private readonly seed: number;
  private readonly projection: Projection;
  private capacity = 0;
  /** The templates, L2-normalised, as float16 bits (`HALF_VALUES` reads them), `dims` per row. */
  private vectors = new Uint16Array(0);
  private ids: string[] = [];
  private readonly rows = new Map<string, number>();
  private readonly kernel = loadKernel();
  /** The kernel's memory as bytes (the int8 templates live there), replaced when it grows. */
  private mat = new Int8Array(0);
  private readonly projected = new Float32Array(PROJECTED);
  private readonly unitScratch: Float32Array;
  /** A template's cohort statistics and the index size they were measured at (see calibrate). */
  private readonly templateStats = new Map<string, { stats: CohortStats; size: number }>();

  constructor(options: { dimensions?: number; seed?: number; initialCapacity?: number } = {}) {
    this.dims = options.dimensions ?? EMBEDDING_DIMENSIONS;
    if (this.dims % 4 !== 0 || this.dims < PROJECTED) {
      throw new RangeError(`dimensions must be a multiple of 4 and at least ${PROJECTED}`);
    }
    this.seed = options.seed ?? 0x5eed;
    this.projection = new Projection(this.dims, this.seed);
    this.unitScratch = new Float32Array(this.dims);
    this.reserve(Math.max(16, options.initialCapacity ?? 1024));
  }

  get size(): number {
    return this.ids.length;
  }

  has(id: string): boolean {
    return this.rows.has(id);
  }

  /** Adds a template, or replaces the one stored under `id`. */
  add(id: string, embedding: Float32Array): void {
    if (embedding.length !== this.dims) {
      throw new RangeError(`embedding has ${embedding.length} dimensions, index expects ${this.dims}`);
    }
    this.templateStats.delete(id);
    let row = this.rows.get(id);
    if (row === undefined) {
      if (this.ids.length === this.capacity) this.reserve(this.capacity * 2);
      row = this.ids.length;
      this.ids.push(id);
      this.rows.set(id, row);
    }
    let norm = 0;
    for (let i = 0; i < this.dims; i++) norm += embedding[i]! * embedding[i]!;
    const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    const unit = this.unitScratch;
    const base = row * this.dims;
    for (let i = 0; i < this.dims; i++) {
      unit[i] = embedding[i]! * inv;
      this.vectors[base + i] = toHalf(unit[i]!);
    }
    this.projection.apply(unit, 0, this.projected);
    const mat = this.mat;
    const at = this.matOffset + row * PROJECTED;
    const scale = 127 / RANGE_I8;
    for (let i = 0; i < PROJECTED; i++)
      mat[at + i] = Math.max(-127, Math.min(127, Math.round(this.projected[i]! * scale)));
  }

  /**
   * The stored templates, L2-normalised (as stored: float16 values), in row order, e.g. to write them
   * to disk without keeping a second copy: one vector is made at a time.
   */
  *entries(): IterableIterator<[string, Float32Array]> {
    for (let row = 0; row < this.ids.length; row++) yield [this.ids[row]!, this.template(row)];
  }

  /**
   * How rows are stored (float16 templates, the fast path's projection and quantisation): rows from
   * `exportRows()` go back into an index of the same layout only.
   */
  get layout(): string {
    return `f16x${this.dims}+rht${PROJECTED}i8@${this.seed.toString(16)}:1`;
  }

  /**
   * Rows `from` to `to` (row order) as stored, copied: ids, float16 bits and int8 projections. With
   * `addRows`, a snapshot that loads without normalising, rounding or projecting again.
   */
  exportRows(from = 0, to = this.size): IndexRows {
    const end = Math.min(to, this.size);
    return {
      ids: this.ids.slice(from, end),
      vectors: this.vectors.slice(from * this.dims, end * this.dims),
      projected: this.mat.slice(this.matOffset + from * PROJECTED, this.matOffset + end * PROJECTED),
    };
  }

  /** Adds rows as `exportRows()` gave them from an index of `layout` (replacing rows of the same ids). */
  addRows(layout: string, rows: IndexRows): void {
    if (layout !== this.layout) throw new RangeError(`rows of layout ${layout}, index is ${this.layout}`);
    const n = rows.ids.length;
    if (rows.vectors.length !== n * this.dims || rows.projected.length !== n * PROJECTED) {
      throw new RangeError('rows and their vectors differ in length');
    }
    if (this.ids.length + n > this.capacity) this.reserve(Math.max(this.capacity * 2, this.ids.length + n));
    const first = this.ids.length;
    const at = new Int32Array(n);
    let appended = true;
    for (let i = 0; i < n; i++) {
      const id = rows.ids[i]!;
      this.templateStats.delete(id);
      let row = this.rows.get(id);
      if (row === undefined) {
        row = this.ids.length;
        this.ids.push(id);
        this.rows.set(id, row);
      }
      at[i] = row;
      appended &&= row === first + i;
    }
    // New ids in order (a snapshot loading): one copy each, not one per row.
    if (appended) {
      this.vectors.set(rows.vectors, first * this.dims);
      this.mat.set(rows.projected, this.matOffset + first * PROJECTED);
      return;
    }
    for (let i = 0; i < n; i++) {
      const row = at[i]!;
      this.vectors.set(rows.vectors.subarray(i * this.dims, (i + 1) * this.dims), row * this.dims);
      this.mat.set(
        rows.projected.subarray(i * PROJECTED, (i + 1) * PROJECTED),
        this.matOffset + row * PROJECTED,
      );
    }
  }

  /** Removes a template; the last row moves into the hole so storage stays dense. */
  remove(id: string): boolean {
    const row = this.rows.get(id);
    if (row === undefined) return false;
    this.templateStats.delete(id);
    const last = this.ids.length - 1;
    if (row !== last) {
      const lastId = this.ids[last]!;
      this.vectors.copyWithin(row * this.dims, last * this.dims, (last + 1) * this.dims);
      this.mat.copyWithin(
        this.matOffset + row * PROJECTED,
        this.matOffset + last * PROJECTED,
        this.matOffset + (last + 1) * PROJECTED,
      );
      this.ids[row] = lastId;
      this.rows.set(lastId, row);
    }
    this.ids.pop();
    this.rows.delete(id);
    return true;
  }

  clear(): void {
    this.ids = [];
    this.rows.clear();
    this.templateStats.clear();
  }

  search(query: Float32Array, k: number, options: SearchOptions = {}): SearchHit[] {
    const unit = this.unit(query);
    const { among } = options;
    const mode = options.mode ?? 'auto';
    // The templates searched: an event's guests (at most) or the whole index.
    const searched = among ? Math.min(among.size, this.size) : this.size;
    // An exact scan costs per template searched, the fast path per template held: a small guest list
    // in a big index is searched exactly.
    const fast =
      mode === 'fast' ||
      (mode === 'auto' && searched >= FAST_SEARCH_MIN_SIZE && searched * EXACT_PER_SCANNED >= this.size);
    const limit = Math.max(0, Math.min(Math.floor(k), searched));
    if (limit === 0) return [];
    const top = new TopK(limit);
    if (fast) {
      const count = Math.max(limit, options.candidates ?? DEFAULT_CANDIDATES);
      for (const row of this.candidates(unit, count, among)) top.push(row, this.dot(unit, row));
    } else if (among) {
      for (const id of among) {
        const row = this.rows.get(id);
        if (row !== undefined) top.push(row, this.dot(unit, row));
      }
    } else {
      for (let row = 0; row < this.ids.length; row++) {
        const s = this.dot(unit, row);
        if (s > top.floor) top.push(row, s);
      }
    }
    return top.sorted().map(({ item, score }) => ({ id: this.ids[item]!, score }));
  }

  /**
   * Calibrated scores of search hits for `query`, best first (S-norm can reorder close candidates).
   * The cohort is a stride sample of up to COHORT_SIZE templates of this index: the probe is scored
   * against it without the hits themselves (one of them may be the probe's own face), each hit
   * without itself. A template's statistics are kept until it changes or the index grows or shrinks
   * by a tenth (they move with the cohort, slowly once it is large), which halves the cost.
   */
  calibrate(query: Float32Array, hits: readonly SearchHit[]): CalibratedHit[] {
    if (hits.length === 0) return [];
    const unit = this.unit(query);
    const cohort = this.cohortRows();
    const probe = this.probeStats(unit, hits, cohort);
    return hits
      .map((hit) => {
        const row = this.rows.get(hit.id);
        if (row === undefined) throw new RangeError(`${hit.id} is not in the index`);
        return {
          id: hit.id,
          cosine: hit.score,
          score: calibratedScore(hit.score, probe, this.statsOf(hit.id, row, cohort)),
        };
      })
      .sort((a, b) => b.score - a.score);
  }

  /**
   * The calibrated score of `query` against every template, in row order (`entries()`), with the
   * statistics `calibrate` would use after a search that returned `hits`: what the evaluation counts
   * per pair. Costs a scan of the whole index.
   */
  calibrateAll(query: Float32Array, hits: readonly SearchHit[]): Float64Array {
    const unit = this.unit(query);
    const cohort = this.cohortRows();
    const probe = this.probeStats(unit, hits, cohort);
    const out = new Float64Array(this.ids.length);
    for (let row = 0; row < out.length; row++) {
      out[row] = calibratedScore(this.dot(unit, row), probe, this.statsOf(this.ids[row]!, row, cohort));
    }
    return out;
  }

  /** The probe's cohort statistics, without the search hits (one of them may be its own face). */
  private probeStats(unit: Float32Array, hits: readonly SearchHit[], cohort: readonly number[]): CohortStats {
    const hitRows = new Set(hits.map((h) => this.rows.get(h.id)));
    return cohortStats(cohort.filter((row) => !hitRows.has(row)).map((row) => this.dot(unit, row)));
  }

  private statsOf(id: string, row: number, cohort: readonly number[]): CohortStats {
    const size = this.ids.length;
    const held = this.templateStats.get(id);
    if (held && Math.abs(size - held.size) <= held.size / 10) return held.stats;
    const own = this.template(row);
    const stats = cohortStats(cohort.filter((r) => r !== row).map((r) => this.dot(own, r)));
    this.templateStats.set(id, { stats, size });
    return stats;
  }

  /** Rows of the calibration cohort: all of them up to COHORT_SIZE, an even stride sample beyond. */
  private cohortRows(): number[] {
    const n = this.ids.length;
    const count = Math.min(n, COHORT_SIZE);
    return Array.from({ length: count }, (_, i) => Math.floor((i * n) / count));
  }

  private unit(query: Float32Array): Float32Array {
    if (query.length !== this.dims) {
      throw new RangeError(`query has ${query.length} dimensions, index expects ${this.dims}`);
    }
    let norm = 0;
    for (let i = 0; i < this.dims; i++) norm += query[i]! * query[i]!;
    const inv = 1 / (Math.sqrt(norm) || 1);
    return Float32Array.from(query, (v) => v * inv);
  }

  private get matOffset(): number {
    return QUERY_BYTES;
  }

  private get outOffset(): number {
    return QUERY_BYTES + this.capacity * PROJECTED;
  }

  private reserve(capacity: number): void {
    const vectors = new Uint16Array(capacity * this.dims);
    vectors.set(this.vectors.subarray(0, this.ids.length * this.dims));
    this.vectors = vectors;
    this.capacity = capacity;
    // Layout: [query int16][templates int8, capacity rows][scores int32, capacity]; rows never move.
    const needed = QUERY_BYTES + capacity * (PROJECTED + 4);
    const have = this.kernel.memory.buffer.byteLength;
    if (needed > have) this.kernel.memory.grow(Math.ceil((needed - have) / WASM_PAGE));
    // Growing the memory replaces its buffer.
    this.mat = new Int8Array(this.kernel.memory.buffer);
  }

  /** The `count` best rows by the quantised scan (of `among`'s rows only, when given). */
  private candidates(unit: Float32Array, count: number, among?: ReadonlySet<string>): number[] {
    this.projection.apply(unit, 0, this.projected);
    const buffer = this.kernel.memory.buffer;
    const q = new Int16Array(buffer, 0, PROJECTED);
    const scale = 32767 / RANGE_I16;
    for (let i = 0; i < PROJECTED; i++) {
      q[i] = Math.max(-32767, Math.min(32767, Math.round(this.projected[i]! * scale)));
    }
    const n = this.ids.length;
    this.kernel.scan(this.matOffset, 0, n, PROJECTED, this.outOffset);
    const scores = new Int32Array(buffer, this.outOffset, n);
    const top = new TopK(Math.min(count, n));
    // With `among`, the kernel still scans every row (contiguous int8 is cheaper than gathering the
    // guests' rows) and only a row good enough to enter is looked up among the guests.
    for (let row = 0; row < n; row++) {
      const s = scores[row]!;
      if (s > top.floor && (among === undefined || among.has(this.ids[row]!))) top.push(row, s);
    }
    return top.sorted().map((c) => c.item);
  }

  private template(row: number): Float32Array {
    const out = new Float32Array(this.dims);
    const base = row * this.dims;
    for (let i = 0; i < this.dims; i++) out[i] = HALF_VALUES[this.vectors[base + i]!]!;
    return out;
  }

  private dot(unit: Float32Array, row: number): number {
    const v = this.vectors;
    const h = HALF_VALUES;
    const base = row * this.dims;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let i = 0; i < this.dims; i += 4) {
      s0 += h[v[base + i]!]! * unit[i]!;
      s1 += h[v[base + i + 1]!]! * unit[i + 1]!;
      s2 += h[v[base + i + 2]!]! * unit[i + 2]!;
      s3 += h[v[base + i + 3]!]! * unit[i + 3]!;
    }
    return s0 + s1 + s2 + s3;
  }
}
