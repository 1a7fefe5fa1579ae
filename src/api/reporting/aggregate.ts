import type { WindowFunction } from './request.js';

/** Window functions over a window's per-minute values (non-empty). */
export function applyFunction(fn: WindowFunction, values: readonly number[]): number {
  switch (fn) {
    case 'mean':
      return values.reduce((a, b) => a + b, 0) / values.length;
    case 'max':
      return maxOf(values);
    case 'min':
      return minOf(values);
    case 'sum':
      return values.reduce((a, b) => a + b, 0);
    case 'first':
      return values[0] as number;
    case 'last':
      return values[values.length - 1] as number;
    case 'median':
      return medianOf(values);
  }
}

// Loops, not Math.max(...values): a raw group can hold more values than the engine's argument limit.
function maxOf(values: readonly number[]): number {
  let m = -Infinity;
  for (const v of values) if (v > m) m = v;
  return m;
}

function minOf(values: readonly number[]): number {
  let m = Infinity;
  for (const v of values) if (v < m) m = v;
  return m;
}

export function medianOf(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

export interface GroupStats {
  sum: number;
  min: number;
  max: number;
  count: number;
  mean: number;
  median: number;
  stddev: number;
  first: number;
  last: number;
}

/** The statistics `group_by.order` returns per group (population standard deviation). */
export function groupStats(values: readonly number[]): GroupStats {
  const count = values.length;
  const sum = values.reduce((a, b) => a + b, 0);
  const mean = count ? sum / count : 0;
  const variance = count ? values.reduce((a, b) => a + (b - mean) ** 2, 0) / count : 0;
  return {
    sum,
    min: count ? minOf(values) : 0,
    max: count ? maxOf(values) : 0,
    count,
    mean,
    median: count ? medianOf(values) : 0,
    stddev: Math.sqrt(variance),
    first: values[0] ?? 0,
    last: values[count - 1] ?? 0,
  };
}

/** Rounds for output: reports print the same bytes everywhere. */
export function r4(x: number): number {
  const v = Math.round(x * 1e4) / 1e4;
  return Object.is(v, -0) ? 0 : v;
}
