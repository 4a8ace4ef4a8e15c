/**
 * A vector as a query parameter in pgvector's text form (`[0.1,-2,3]`), for the halfvec columns.
 * The statement casts it (`${vectorLiteral(v)}::halfvec(768)`), so the same text works on
 * node-postgres and PGlite, and the cast matches the HNSW indexes' expression.
 *
 * Each element is written as the shortest decimal that Postgres reads back as the same half-precision
 * value it would have stored from the full number: halfvec_in reads a float (strtof) and rounds it to
 * the nearest half, ties to even; this does the same rounding here and writes that half's text, kept
 * per half value (at most 65,536 short strings). So the stored vector is the one the full number gave,
 * digit for digit as before (test/vector-literal.test.ts checks every half value on both backends),
 * while the text is a third as long: a 768-D vector was ~15 KB of 17-digit numbers. Formatting those
 * and parsing them back was the embedding worker's largest cost in the service and in Postgres
 * (a batch of 32 vectors: ~3.5 ms of the event loop to format, ~0.5 MB for the backend to parse).
 *
 * The values are finite (the embedder's answer is checked, see embeddings/provider.ts). One beyond
 * halfvec's range (±65,504) is written in full, for halfvec_in to refuse as it always did.
 */
export function vectorLiteral(vector: readonly number[]): string {
  let text = '[';
  for (let i = 0; i < vector.length; i++) {
    const x = vector[i]!;
    const h = toHalf(x);
    if (i > 0) text += ',';
    // -0 itself was written "0" (JSON's text for it), so it stays 0; a tiny negative number rounds to -0.
    if (h === 0x8000) text += x === 0 ? '0' : '-0';
    else text += (h & 0x7c00) === 0x7c00 ? String(x) : (HALF_TEXT[h] ??= halfText(h));
  }
  return text + ']';
}

/** The shortest text of each half value met so far, by its bits. */
const HALF_TEXT: Array<string | undefined> = new Array<string | undefined>(0x10000);

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/**
 * The bits of the half nearest to `x` read as a float, as halfvec_in stores it: to float first
 * (strtof), then to half, rounding to nearest with ties to even; beyond the range, infinity.
 */
export function toHalf(x: number): number {
  f32[0] = x;
  const bits = u32[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant === 0 ? 0 : 0x200);
  const e = exp - 112; // the half's biased exponent: 127 - 15
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // A subnormal half (or zero): its units are 2^-24.
    if (e < -10) return sign;
    const m = mant | 0x800000;
    const shift = 14 - e;
    let h = m >>> shift;
    const rest = m & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && (h & 1) === 1)) h++;
    return sign | h;
  }
  // A carry out of the mantissa raises the exponent, up to infinity: the right answer in both cases.
  let h = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1) === 1)) h++;
  return sign | h;
}

/** The value of a half, by its bits (finite). */
export function halfValue(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  return sign * (exp === 0 ? mant * 2 ** -24 : (1024 + mant) * 2 ** (exp - 25));
}

/** The shortest decimal that reads back (strtof, then to half) as the half `h`. */
function halfText(h: number): string {
  const value = halfValue(h);
  for (let digits = 1; digits < 17; digits++) {
    const text = String(Number(value.toPrecision(digits)));
    if (toHalf(Number(text)) === h) return text;
  }
  return String(value);
}
