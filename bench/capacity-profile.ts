/**
 * Where a capacity run's time went, from the `.cpuprofile` files that `node --cpu-prof` writes
 * per thread (main thread, the platform's thread, frame workers — whatever the thread layout):
 * per thread its busy share of the run's wall time, the garbage collector's share of that busy
 * time, and the busiest areas of the code (src folders along the data path, dependencies by
 * package). The limit a fleet reaches first is read off these shares (see `limitOf`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ThreadShare {
  /** The area with the most self time: names the thread (sim, cloud, edge, …). */
  name: string;
  wallMs: number;
  busyMs: number;
  gcMs: number;
  /** Self time per area, ms, busiest first (idle excluded). */
  areas: Array<[string, number]>;
}

/** The place a function belongs to: a src folder on the data path, a dependency, or V8's own buckets. */
function areaOf(frame: ProfileNode['callFrame']): string {
  // A pool worker waiting for its next task blocks in Atomics.wait: idle, not busy.
  if (frame.functionName === 'atomicsWaitLoop' || (frame.url === '' && frame.functionName === 'wait')) return 'idle';
  if (frame.url === '') {
    if (frame.functionName === '(garbage collector)') return 'GC';
    if (frame.functionName === '(idle)') return 'idle';
    return frame.functionName === '(program)' ? 'V8/native' : 'native';
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url);
  if (pkg) return pkg[1] as string;
  const src = /\/(?:src|dist)\/([^/]+)\//.exec(frame.url);
  if (src) return src[1] as string;
  if (frame.url.startsWith('node:')) return 'node';
  return 'other';
}

/** Shares over the last `windowMs` of the profile (the loop: start-up excluded), or all of it. */
/** A thread's role, from the areas its time went to: whichever role's areas took the most. */
const ROLES: Array<[string, readonly string[]]> = [
  ['simulator', ['sim', 'mesh', 'hive', 'run', 'scenario']],
  ['platform', ['cloud', 'platform', 'broker', 'api', 'webhooks', 'aedes', 'mqemitter', 'better-sqlite3', 'pg']],
  ['edge', ['edge', 'piscina']],
];

function roleOf(ms: ReadonlyMap<string, number>): string {
  let best = ['other', 0] as [string, number];
  for (const [role, areas] of ROLES) {
    const total = areas.reduce((sum, a) => sum + (ms.get(a) ?? 0), 0);
    if (total > best[1]) best = [role, total];
  }
  return best[0];
}

function summarise(profile: CpuProfile, windowMs: number, main: boolean): ThreadShare {
  const areaById = new Map<number, string>();
  for (const n of profile.nodes) areaById.set(n.id, areaOf(n.callFrame));
  const fromUs = Math.max(profile.startTime, profile.endTime - windowMs * 1000);
  const ms = new Map<string, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    // timeDeltas[i] is the time before sample i; attribute it to that sample (V8's convention).
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at < fromUs) continue;
    const area = areaById.get(profile.samples[i] as number) ?? 'other';
    ms.set(area, (ms.get(area) ?? 0) + delta / 1000);
  }
  const wallMs = (profile.endTime - fromUs) / 1000;
  const idle = ms.get('idle') ?? 0;
  ms.delete('idle');
  const areas = [...ms].sort((a, b) => b[1] - a[1]);
  const busyMs = Math.max(0, wallMs - idle);
  return { name: main ? `main: ${roleOf(ms)}` : roleOf(ms), wallMs, busyMs, gcMs: ms.get('GC') ?? 0, areas };
}

/** Every thread's share over its last `windowMs`, busiest first, from the profiles in `dir`. */
export function readProfiles(dir: string, windowMs: number): ThreadShare[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  // CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile: thread 0 is the main thread.
  return files
    .map((f) =>
      summarise(JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile, windowMs, f.split('.')[4] === '0'),
    )
    .sort((a, b) => b.busyMs - a.busyMs);
}

const pct = (part: number, whole: number): string => `${Math.round((100 * part) / Math.max(1, whole))} %`;

/** One line per thread: busy share of wall time, GC share of busy time, top areas. */
export function formatShares(threads: readonly ThreadShare[]): string[] {
  return threads.map((t) => {
    const top = t.areas
      .slice(0, 4)
      .map(([a, v]) => `${a} ${pct(v, t.busyMs)}`)
      .join(', ');
    return `      thread "${t.name}": busy ${pct(t.busyMs, t.wallMs)} of wall, of which ${top}`;
  });
}

/** Packages that are the MQTT broker or client (the broker path between hives and the cloud). */
const BROKER = new Set(['aedes', 'aedes-packet', 'aedes-persistence', 'mqtt', 'mqtt-packet', 'mqemitter']);

/**
 * Which limit a run that fell behind reached first, from its profile and its figures: memory
 * (the run died of it or came within 10 % of the machine's); else, when no thread was
 * saturated (≥ 90 % busy) and the process did not use both cores (≥ 180 %), the machine's
 * other load (load average ≥ cores) or waiting; else, for the busiest thread, GC (a quarter
 * of its time), the broker (its packages the largest area), both cores, or that one thread
 * (the work does not spread over the cores).
 */
export function limitOf(
  threads: readonly ThreadShare[],
  f: { cpuPercent: number; peakRssMb: number; totalMemMb: number; outOfMemory: boolean; load: number; cores: number },
): string {
  if (f.outOfMemory || f.peakRssMb > 0.9 * f.totalMemMb)
    return `memory (peak RSS ${Math.round(f.peakRssMb)} MB of ${Math.round(f.totalMemMb)} MB)`;
  const hot = threads[0];
  if (!hot)
    return f.cpuPercent >= 90 * f.cores
      ? `CPU: every core (${f.cpuPercent} %), no profile`
      : `unknown (CPU ${f.cpuPercent} %, no profile)`;
  const busy = hot.busyMs / Math.max(1, hot.wallMs);
  const busiest = `busiest thread "${hot.name}" ${pct(hot.busyMs, hot.wallMs)} busy`;
  const share = (area: string): string => pct(hot.areas.find(([a]) => a === area)?.[1] ?? 0, hot.busyMs);
  if (busy < 0.9 && f.cpuPercent < 90 * f.cores) {
    if (f.load >= f.cores)
      return `the machine's other load (load average ${f.load.toFixed(1)} on ${f.cores} cores; ${busiest}, process CPU ${f.cpuPercent} %): not the fleet's own limit`;
    return `not CPU-bound (${busiest}, process CPU ${f.cpuPercent} %): waiting (I/O, acks)`;
  }
  if (hot.gcMs > 0.25 * hot.busyMs) return `GC: ${share('GC')} of the ${busiest}`;
  const top = hot.areas[0];
  if (top && BROKER.has(top[0])) return `the broker: ${top[0]} ${share(top[0])} of the ${busiest}`;
  if (f.cpuPercent >= 90 * f.cores)
    return `CPU: every core (process CPU ${f.cpuPercent} %); ${busiest}, ${top?.[0] ?? '?'} ${top ? share(top[0]) : ''}`;
  return `CPU: one thread saturated, ${busiest} (${top?.[0] ?? '?'} ${top ? share(top[0]) : ''}), process CPU ${f.cpuPercent} %: the work does not spread over the cores`;
}
