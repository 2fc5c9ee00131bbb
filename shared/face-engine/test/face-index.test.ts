import { describe, expect, it } from 'vitest';
import {
  cosineSimilarity,
  embeddingFromBuffer,
  embeddingToBuffer,
  FaceIndex,
  FAST_SEARCH_MIN_SIZE,
} from '../src/index.js';

function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a ^= a << 13;
    a ^= a >>> 17;
    a ^= a << 5;
    return (a >>> 0) / 4294967296 - 0.5;
  };
}

function unit(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  return v.map((x) => x / Math.sqrt(n));
}

/** A random template, and a probe of it at cosine ~`similarity` (a genuine capture of the same face). */
function synthetic(next: () => number): Float32Array {
  return unit(Float32Array.from({ length: 512 }, next));
}

function probeOf(template: Float32Array, similarity: number, next: () => number): Float32Array {
  const noise = synthetic(next);
  const w = Math.sqrt(1 - similarity * similarity);
  return unit(template.map((x, i) => similarity * x + w * noise[i]!));
}

/**
 * Digits a cosine keeps through the index: templates are held as float16, which moves a cosine of
 * unit vectors by at most 2^-11 (search/half.ts); toBeCloseTo(x, 3) allows 5e-4.
 */
const STORED_DIGITS = 3;

describe('FaceIndex', () => {
  it('adds, replaces and removes templates, keeping ids and scores right', () => {
    const next = generator(7);
    const index = new FaceIndex({ initialCapacity: 16 });
    const vectors = Array.from({ length: 40 }, () => synthetic(next));
    vectors.forEach((v, i) => index.add(`p${i}`, v));
    expect(index.size).toBe(40);
    expect(index.search(vectors[3]!, 1)[0]).toEqual({ id: 'p3', score: expect.closeTo(1, STORED_DIGITS) });
    expect(index.remove('p3')).toBe(true);
    expect(index.remove('p3')).toBe(false);
    expect(index.size).toBe(39);
    expect(index.search(vectors[3]!, 1)[0]!.id).not.toBe('p3');
    // The last row moved into p3's place: it must still be found under its own id, in both modes.
    for (const mode of ['exact', 'fast'] as const) {
      expect(index.search(vectors[39]!, 1, { mode })[0]!.id).toBe('p39');
    }
    index.add('p5', vectors[6]!);
    expect(index.size).toBe(39);
    expect(
      index
        .search(vectors[6]!, 2)
        .map((h) => h.id)
        .sort(),
    ).toEqual(['p5', 'p6']);
  });

  it('lists its templates normalised under their ids, after removals and replacements', () => {
    const next = generator(11);
    const index = new FaceIndex({ initialCapacity: 16 });
    const vectors = Array.from({ length: 20 }, () => synthetic(next).map((x) => x * 3));
    vectors.forEach((v, i) => index.add(`p${i}`, v));
    index.remove('p4');
    index.add('p7', vectors[8]!);
    const listed = new Map([...index.entries()].map(([id, v]) => [id, Float32Array.from(v)]));
    expect(listed.size).toBe(19);
    expect(listed.has('p4')).toBe(false);
    expect(cosineSimilarity(listed.get('p7')!, vectors[8]!)).toBeCloseTo(1, STORED_DIGITS);
    for (const [id, v] of listed) {
      if (id === 'p7') continue;
      expect(cosineSimilarity(v, vectors[Number(id.slice(1))]!)).toBeCloseTo(1, STORED_DIGITS);
      expect(Math.hypot(...v)).toBeCloseTo(1, STORED_DIGITS);
    }
  });

  it('loads exported rows into another index: new ids appended, known ids replaced, the same answers', () => {
    const next = generator(13);
    const source = new FaceIndex();
    const vectors = Array.from({ length: 30 }, () => synthetic(next));
    vectors.forEach((v, i) => source.add(`p${i}`, v));
    // Loaded in three parts (as a snapshot's chunks) around templates added apart, one of them an id
    // the last part replaces.
    const loaded = new FaceIndex({ initialCapacity: 16 });
    loaded.addRows(source.layout, source.exportRows(0, 10));
    loaded.add('extra', synthetic(next));
    loaded.addRows(source.layout, source.exportRows(10, 20));
    loaded.add('p25', synthetic(next));
    loaded.addRows(source.layout, source.exportRows(20, 30));
    expect(loaded.size).toBe(31);
    for (const [i, v] of vectors.entries()) {
      for (const mode of ['exact', 'fast'] as const) {
        const [hit] = loaded.search(probeOf(v, 0.7, next), 1, { mode });
        expect(hit?.id).toBe(`p${i}`);
      }
      expect(loaded.search(v, 1)[0]?.score).toBeCloseTo(source.search(v, 1)[0]!.score, 6);
    }
    expect(() => loaded.addRows('other-layout', source.exportRows(0, 1))).toThrow(RangeError);
  });

  it('returns exact cosine scores in descending order, and nothing from an empty index', () => {
    const next = generator(11);
    const index = new FaceIndex();
    expect(index.search(synthetic(next), 5)).toEqual([]);
    const vectors = Array.from({ length: 300 }, () => synthetic(next));
    vectors.forEach((v, i) =>
      index.add(
        String(i),
        v.map((x) => x * 3),
      ),
    );
    const query = synthetic(next);
    const hits = index.search(query, 10, { mode: 'exact' });
    const expected = vectors
      .map((v, i) => ({ id: String(i), score: cosineSimilarity(query, v) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 10);
    expect(hits.map((h) => h.id)).toEqual(expected.map((e) => e.id));
    hits.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, STORED_DIGITS));
  });

  // From FAST_SEARCH_MIN_SIZE, where `auto` takes the fast path, to ten times as many (the bench
  // measures recall up to 1,000,000).
  it.each([
    { size: FAST_SEARCH_MIN_SIZE, probes: 300 },
    { size: 10 * FAST_SEARCH_MIN_SIZE, probes: 100 },
  ])(
    'fast path agrees with exact search at rank 1 for >= 99 % of genuine-like probes ($size templates)',
    ({ size, probes }) => {
      const next = generator(42);
      const index = new FaceIndex({ initialCapacity: size });
      const vectors = Array.from({ length: size }, () => synthetic(next));
      vectors.forEach((v, i) => index.add(String(i), v));
      let agree = 0;
      for (let i = 0; i < probes; i++) {
        const probe = probeOf(vectors[Math.floor((next() + 0.5) * vectors.length)]!, 0.5, next);
        const exact = index.search(probe, 1, { mode: 'exact' })[0]!;
        const fast = index.search(probe, 1, { mode: 'fast' })[0]!;
        if (fast.id === exact.id) {
          agree++;
          expect(fast.score).toBeCloseTo(exact.score, 5);
        }
      }
      expect(agree / probes).toBeGreaterThanOrEqual(0.99);
    },
  );

  it('searches a big guest list the fast way: guests only, the same best guest as an exact scan', () => {
    const next = generator(23);
    const index = new FaceIndex();
    const vectors = Array.from({ length: 4 * FAST_SEARCH_MIN_SIZE }, () => synthetic(next));
    vectors.forEach((v, i) => index.add(String(i), v));
    // Every other template is a guest: the best match of a guest's probe among everyone is often
    // a neighbour that is not one.
    const guests = vectors.map((_, i) => i).filter((i) => i % 2 === 0);
    const among = new Set(guests.map(String));
    let agree = 0;
    const probes = 200;
    for (let i = 0; i < probes; i++) {
      const probe = probeOf(vectors[guests[Math.floor((next() + 0.5) * guests.length)]!]!, 0.5, next);
      const exact = index.search(probe, 3, { mode: 'exact', among });
      const fast = index.search(probe, 3, { mode: 'fast', among });
      expect(fast.every((hit) => among.has(hit.id))).toBe(true);
      if (fast[0]!.id === exact[0]!.id) agree++;
    }
    expect(agree / probes).toBeGreaterThanOrEqual(0.99);
  });

  it('auto scans exactly below FAST_SEARCH_MIN_SIZE templates searched and takes the fast path from there, counting a guest list', () => {
    // Strangers' probes: their best match is a near tie the fast path's int8 scan often ranks
    // differently, so which path `auto` took shows in its answers.
    const next = generator(31);
    const vectors = Array.from({ length: 2 * FAST_SEARCH_MIN_SIZE }, () => synthetic(next));
    const strangers = Array.from({ length: 40 }, () => synthetic(next));
    const answers = (index: FaceIndex, mode: 'auto' | 'exact' | 'fast', among?: ReadonlySet<string>) =>
      strangers.map((p) => index.search(p, 1, { mode, ...(among ? { among } : {}) })[0]!.id);
    const sized = (n: number) => {
      const index = new FaceIndex();
      vectors.slice(0, n).forEach((v, i) => index.add(String(i), v));
      return index;
    };

    const small = sized(FAST_SEARCH_MIN_SIZE - 1);
    expect(answers(small, 'auto')).toEqual(answers(small, 'exact'));
    const big = sized(FAST_SEARCH_MIN_SIZE);
    expect(answers(big, 'auto')).toEqual(answers(big, 'fast'));
    expect(answers(big, 'fast')).not.toEqual(answers(big, 'exact'));

    const all = sized(2 * FAST_SEARCH_MIN_SIZE);
    const list = (n: number) => new Set(Array.from({ length: n }, (_, i) => String(2 * i)));
    const shortList = list(FAST_SEARCH_MIN_SIZE - 1);
    expect(answers(all, 'auto', shortList)).toEqual(answers(all, 'exact', shortList));
    const longList = list(FAST_SEARCH_MIN_SIZE);
    expect(answers(all, 'auto', longList)).toEqual(answers(all, 'fast', longList));
    expect(answers(all, 'fast', longList)).not.toEqual(answers(all, 'exact', longList));
  });

  it('searches only the given ids when asked (the guests of an event), in both modes', () => {
    const next = generator(11);
    const index = new FaceIndex();
    const templates = Array.from({ length: 300 }, () => synthetic(next));
    templates.forEach((t, i) => index.add(`p${i}`, t));
    const among = new Set(['p5', 'p17', 'p250', 'nobody']);
    for (const mode of ['exact', 'fast'] as const) {
      const hits = index.search(templates[7]!, 3, { mode, among });
      expect(hits.map((h) => h.id).sort()).toEqual(['p17', 'p250', 'p5']);
      for (const h of hits)
        expect(h.score).toBeCloseTo(
          cosineSimilarity(templates[7]!, templates[Number(h.id.slice(1))]!),
          STORED_DIGITS,
        );
    }
    expect(index.search(templates[7]!, 3)[0]!.id).toBe('p7');
  });

  it('calibrates a replaced template with fresh cohort statistics (as a new index would)', () => {
    const next = generator(5);
    const templates = Array.from({ length: 40 }, () => synthetic(next));
    const held = new FaceIndex();
    templates.forEach((t, i) => held.add(`p${i}`, t));
    const replacement = synthetic(next);
    // A weak match (cosine 0.15) so the calibrated score is not clipped at 1.
    const query = probeOf(replacement, 0.15, next);
    held.calibrate(query, [{ id: 'p3', score: 0 }]);
    held.add('p3', replacement);
    const fresh = new FaceIndex();
    templates.forEach((t, i) => fresh.add(`p${i}`, i === 3 ? replacement : t));
    const [mine] = held.calibrate(query, held.search(query, 1));
    const [theirs] = fresh.calibrate(query, fresh.search(query, 1));
    expect(mine!.id).toBe('p3');
    expect(mine).toEqual(theirs);
  });

  it('round-trips embeddings through a 2048-byte little-endian buffer', () => {
    const v = synthetic(generator(3));
    const buffer = embeddingToBuffer(v);
    expect(buffer.length).toBe(2048);
    expect(embeddingFromBuffer(buffer)).toEqual(v);
  });

  it('refuses embeddings of the wrong length', () => {
    const index = new FaceIndex();
    expect(() => index.add('x', new Float32Array(128))).toThrow(RangeError);
    expect(() => index.search(new Float32Array(3), 1)).toThrow(RangeError);
  });
});
