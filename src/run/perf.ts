/**
 * Wall-clock measurement for the report's `perf` section: the only place in the run that
 * reads real time, so `result` stays a pure function of (scenario, seed).
 */
export interface Stopwatch {
  elapsedMs(): number;
}

export function startStopwatch(): Stopwatch {
  const t0 = performance.now();
  return { elapsedMs: () => performance.now() - t0 };
}

/** Resolves after `ms` wall milliseconds (real-time pacing only). */
export function sleepWall(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function peakRssMb(): number {
  return Math.round(process.memoryUsage().rss / 1e6);
}
