/**
 * Fast per-sensor noise for frame synthesis. The seeded `Rng` of core/rng.ts is too slow to
 * draw one Gaussian per pixel per frame (the kernel budget is ~1 µs per 8×8 frame), so each
 * sensor owns a xorshift128 state seeded once from `rngFor(seed, sensorId)`; the state lives
 * in the sensor's state buffer and travels with it, so draws never depend on the worker.
 */

/** Gaussian quantiles at (i + 0.5) / TABLE_SIZE: a draw is one table lookup. */
const TABLE_BITS = 12;
const TABLE_SIZE = 1 << TABLE_BITS;
const GAUSS = buildGaussTable();
/** Bits of a draw that index the Gaussian table. */
export const GAUSS_BITS = TABLE_BITS;

/** The shared Gaussian quantile table (TABLE_SIZE entries; do not write to it). */
export function gaussTable(): Float32Array {
  return GAUSS;
}

/** Seeds a xorshift128 state from four uniform draws in [0, 1); never all zero. */
export function seedState(s: Uint32Array, draws: readonly number[]): void {
  for (let i = 0; i < 4; i++) s[i] = Math.floor((draws[i] ?? 0.5) * 0x1_0000_0000) >>> 0;
  if (((s[0] as number) | (s[1] as number) | (s[2] as number) | (s[3] as number)) === 0) s[0] = 0x9e3779b9;
}

function buildGaussTable(): Float32Array {
  const t = new Float32Array(TABLE_SIZE);
  for (let i = 0; i < TABLE_SIZE; i++) t[i] = inverseNormal((i + 0.5) / TABLE_SIZE);
  return t;
}

/** Acklam's rational approximation of the normal quantile (relative error < 1.2e-9). */
export function inverseNormal(p: number): number {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const [a0, a1, a2, a3, a4, a5] = a as [number, number, number, number, number, number];
  const [b0, b1, b2, b3, b4] = b as [number, number, number, number, number];
  const [c0, c1, c2, c3, c4, c5] = c as [number, number, number, number, number, number];
  const [d0, d1, d2, d3] = d as [number, number, number, number];
  const tail = (q: number): number =>
    (((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) / ((((d0 * q + d1) * q + d2) * q + d3) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q) /
    (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1)
  );
}
