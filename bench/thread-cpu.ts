/**
 * Reads what bench/thread-cpu.cjs (a `node -r` preload) recorded: each thread's CPU time and
 * GC pauses over a run's loop (`perf.startupMs` to `startupMs + loopMs` after the run's
 * stopwatch started), interpolated between the 500 ms samples. What no JavaScript thread
 * accounts for (V8's GC helper threads, libuv's pool) is the process's loop CPU minus theirs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const THREAD_CPU_PRELOAD = 'bench/thread-cpu.cjs';

export interface Recorded {
  role: string;
  threadId: number;
  wall0: number | null;
  /** [epoch ms, thread CPU ms, GC pause ms so far, the whole process's CPU ms] */
  series: Array<[number, number, number, number]>;
}

export interface ThreadLoop {
  /** main, platform, hive, worker (frame pool), or `other` (the process's CPU no JavaScript thread accounts for). */
  role: string;
  cpuMs: number;
  gcMs: number;
}

/** The series' value (column `k`) at instant `t`, linear between samples, clamped at the ends. */
export function at(series: Recorded['series'], t: number, k: 1 | 2 | 3): number {
  const first = series[0];
  if (first === undefined || t <= first[0]) return first?.[k] ?? 0;
  for (let i = 1; i < series.length; i++) {
    const b = series[i] as [number, number, number, number];
    if (t <= b[0]) {
      const a = series[i - 1] as [number, number, number, number];
      return a[k] + ((b[k] - a[k]) * (t - a[0])) / Math.max(1, b[0] - a[0]);
    }
  }
  return (series[series.length - 1] as [number, number, number, number])[k];
}

/** Every thread's recorded series in `dir` (the preload's `thread-<pid>-<threadId>.json` files). */
export function readRecorded(dir: string): Recorded[] {
  return readdirSync(dir)
    .filter((f) => /^thread-\d+-\d+\.json$/.test(f))
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Recorded);
}

/**
 * Each thread's loop CPU and GC, threads of one role summed (e.g. several hive threads), in the
 * order main, platform, hive, worker, other. Empty when the preload left nothing (or no
 * stopwatch start was seen).
 */
export function readThreadLoop(
  dir: string,
  perf: { startupMs: number; loopMs: number; loopCpuMs: number },
): ThreadLoop[] {
  const recorded = readRecorded(dir);
  const wall0 = recorded.find((r) => r.role === 'main')?.wall0;
  if (wall0 === undefined || wall0 === null) return [];
  const from = wall0 + perf.startupMs;
  const to = from + perf.loopMs;
  const byRole = new Map<string, ThreadLoop>();
  for (const r of recorded) {
    const t = byRole.get(r.role) ?? { role: r.role, cpuMs: 0, gcMs: 0 };
    t.cpuMs += at(r.series, to, 1) - at(r.series, from, 1);
    t.gcMs += at(r.series, to, 2) - at(r.series, from, 2);
    byRole.set(r.role, t);
  }
  const order = ['main', 'platform', 'hive', 'worker'];
  const threads = [...byRole.values()].sort((a, b) => order.indexOf(a.role) - order.indexOf(b.role));
  const js = threads.reduce((sum, t) => sum + t.cpuMs, 0);
  threads.push({ role: 'other', cpuMs: Math.max(0, perf.loopCpuMs - js), gcMs: 0 });
  return threads;
}
