/**
 * Wall-clock measurement for the report's `perf` section: the only place in the run that
 * reads real time, so `result` stays a pure function of (scenario, seed).
 */
export interface Stopwatch {
  elapsedMs(): number;
  /** CPU time of the whole process (every thread) per wall time since the start, in percent: 200 = both of 2 cores busy. */
  cpuPercent(): number;
  /** CPU time of the whole process (every thread) since the start, ms: unlike wall time, not stretched by other processes sharing the cores. */
  cpuMs(): number;
}

export function startStopwatch(): Stopwatch {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  return {
    elapsedMs: () => performance.now() - t0,
    cpuPercent: () => {
      const c = process.cpuUsage(cpu0);
      return Math.round((c.user + c.system) / 10 / Math.max(1, performance.now() - t0));
    },
    cpuMs: () => {
      const c = process.cpuUsage(cpu0);
      return (c.user + c.system) / 1000;
    },
  };
}

/** Resolves after `ms` wall milliseconds (real-time pacing only). */
export function sleepWall(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The process's peak resident set so far (every thread), MB. */
export function peakRssMb(): number {
  return Math.round((process.resourceUsage().maxRSS * 1024) / 1e6);
}

/** Wall and CPU (every thread) ms of one phase: CPU above wall means other threads worked alongside. */
export interface PhaseTime {
  wallMs: number;
  cpuMs: number;
}

/** Consecutive phases from the stopwatch's start: each `end` closes the phase that began where the previous one ended. */
export function phaseTimer(watch: Stopwatch): { end(): PhaseTime } {
  let wall0 = 0;
  let cpu0 = 0;
  return {
    end() {
      const wall = watch.elapsedMs();
      const cpu = watch.cpuMs();
      const phase = { wallMs: Math.round(wall - wall0), cpuMs: Math.round(cpu - cpu0) };
      wall0 = wall;
      cpu0 = cpu;
      return phase;
    },
  };
}
