/**
 * Small order statistics shared by the cloud's per-minute aggregation and the ground truth,
 * so both sides of every comparison use the same definition.
 */

/** Median of a non-empty list (mean of the two middle values for an even length); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Nearest-rank percentile (p in [0, 100]) of a list; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

/** Rounds to `digits` decimals, so reports print the same bytes on every machine. */
export function round(value: number, digits = 4): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  const r = Math.round(value * f) / f;
  return Object.is(r, -0) ? 0 : r;
}
