import { describe, expect, it } from 'vitest';
import { HALF_VALUES, toHalf } from '../src/search/half.js';

describe('float16 (how the face index holds templates)', () => {
  it('encodes known values to their IEEE 754 half-precision bits', () => {
    const known: [number, number][] = [
      [0, 0x0000],
      [-0, 0x8000],
      [1, 0x3c00],
      [-2, 0xc000],
      [0.1, 0x2e66],
      [1 / 3, 0x3555],
      [65504, 0x7bff],
      // Past the largest half, rounding gives infinity.
      [65520, 0x7c00],
      [-Infinity, 0xfc00],
      // Subnormals: the smallest, a tie rounded to even (zero), and one rounded up.
      [2 ** -24, 0x0001],
      [2 ** -25, 0x0000],
      [3 * 2 ** -25, 0x0002],
      [2 ** -14, 0x0400],
      // Ties between normal halves go to the even mantissa.
      [1 + 2 ** -11, 0x3c00],
      [1 + 3 * 2 ** -11, 0x3c02],
    ];
    for (const [value, bits] of known) expect(toHalf(value), String(value)).toBe(bits);
    expect(Number.isNaN(HALF_VALUES[toHalf(NaN)])).toBe(true);
  });

  it('reads back every finite half exactly, and rounds any value to the nearest half', () => {
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = HALF_VALUES[bits]!;
      if (!Number.isFinite(value)) continue;
      // -0 and 0 are two patterns of one value.
      if (value === 0) continue;
      expect(toHalf(value)).toBe(bits);
    }
    let state = 12345;
    const next = () => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state / 2 ** 32;
    };
    for (let i = 0; i < 20_000; i++) {
      // Template components: a unit 512-d vector's are about N(0, 0.044), all within [-1, 1].
      const x = Math.fround((next() * 2 - 1) * (next() < 0.5 ? 1 : 0.05));
      const bits = toHalf(x);
      const error = Math.abs(HALF_VALUES[bits]! - x);
      // No neighbouring half is nearer.
      for (const neighbour of [bits - 1, bits + 1]) {
        const v = HALF_VALUES[neighbour & 0xffff]!;
        if (Number.isFinite(v) && Math.sign(v) === Math.sign(HALF_VALUES[bits]!)) {
          expect(Math.abs(v - x)).toBeGreaterThanOrEqual(error);
        }
      }
      // Relative error within half a unit in the last place (2^-11), or the subnormal step.
      expect(error).toBeLessThanOrEqual(Math.max(Math.abs(x) * 2 ** -11, 2 ** -25));
    }
  });
});
