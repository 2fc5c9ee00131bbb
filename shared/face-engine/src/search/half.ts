/**
 * IEEE 754 half precision (float16), how the face index holds its templates: half the memory of
 * float32. A unit template's components lose at most 2^-11 of their value when rounded, so a cosine
 * between two of them moves by at most 2^-11 (about 0.0005, Cauchy-Schwarz) and in practice by about
 * 10^-5 (tests), far below what separates a decision. Node 20 has no Float16Array: the bits are packed
 * here and read back through a 65,536-entry table.
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The float16 bits nearest to `value` (round half to even; overflow gives infinity). */
export function toHalf(value: number): number {
  f32[0] = value;
  const bits = u32[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
  const mantissa = bits & 0x7fffff;
  if (((bits >>> 23) & 0xff) === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  if (exponent >= 0x1f) return sign | 0x7c00;
  if (exponent <= 0) {
    // A subnormal half (or zero): the implicit 1 becomes explicit and the rest is shifted out.
    if (exponent < -10) return sign;
    const full = mantissa | 0x800000;
    const shift = 14 - exponent;
    const rest = full & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    let half = full >>> shift;
    if (rest > halfway || (rest === halfway && half & 1)) half++;
    return sign | half;
  }
  let half = sign | (exponent << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  // A carry out of the mantissa moves into the exponent, which is the right rounding too.
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half++;
  return half;
}

/**
 * The value of every float16 bit pattern: `HALF_VALUES[bits]`. Built from the bits (a float16 widens
 * exactly to a float32: same sign, exponent rebased, mantissa shifted) rather than with powers of two,
 * which took about 8 ms at start-up here.
 */
export const HALF_VALUES = (() => {
  const wide = new Uint32Array(0x10000);
  for (let bits = 0; bits < 0x10000; bits++) {
    const sign = (bits & 0x8000) << 16;
    const exponent = (bits >>> 10) & 0x1f;
    const mantissa = bits & 0x3ff;
    if (exponent === 0x1f) wide[bits] = sign | 0x7f800000 | (mantissa << 13);
    else if (exponent !== 0) wide[bits] = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
    else {
      // Zero and the subnormals: mantissa * 2^-24, exact in float32.
      f32[0] = (bits & 0x8000 ? -1 : 1) * mantissa * 2 ** -24;
      wide[bits] = u32[0]!;
    }
  }
  return new Float32Array(wide.buffer);
})();
