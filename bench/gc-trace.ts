/**
 * V8's own account of each isolate's collections (`node --trace-gc --trace-incremental-marking`
 * on stdout; worker isolates inherit the flags), placed per thread over a window of the run.
 *
 * Lines are `[pid:isolate]  <ms since the isolate started>  ms: …`. An isolate is matched to
 * its thread by its collections' total pause, which the `bench/thread-cpu.cjs` preload records
 * per thread from `gc` performance entries (the same pauses, so the match is unambiguous in
 * practice: the threads' totals differ by tens of ms at least); its clock starts at the
 * thread's first preload sample (within a few ms of the isolate's start).
 *
 * What it counts per thread: scavenges, mark-compacts by the reason their incremental marking
 * started (`allocation limit`: the old space grew to its limit, a multiple of the live set;
 * `external memory pressure`: 64 MB of ArrayBuffer/Buffer memory allocated since the last
 * mark-compact and still unreleased — V8's fixed `kExternalAllocationSoftLimit`, independent of
 * the heap's size; `task`: an idle-time start), and the heap marked (the size before each
 * mark-compact, MB) — the concurrent marking V8's helper threads do, the bulk of `other`.
 */
import { at, type Recorded } from './thread-cpu.js';

export interface IsolateGc {
  scavenges: number;
  markCompacts: number;
  /** Mark-compacts per the reason their marking started. */
  starts: Record<string, number>;
  /** Heap size before each mark-compact, summed (MB). */
  markedMb: number;
  /** Heap size after the last mark-compact in the window (MB). */
  liveAfterMb: number | null;
}

interface GcLine {
  ms: number;
  text: string;
}

const LINE = /^\[\d+:(0x[0-9a-f]+)\]\s+(\d+) ms: (.*)$/;
const PAUSE = /MB, ([\d.]+) \/ [\d.]+ ms/;
const START = /^\[IncrementalMarking\] Start \(([^)]*)\)/;
const MARK_COMPACT = /^Mark-Compact ([\d.]+) \([\d.]+\) -> ([\d.]+)/;

/** Collects trace lines per isolate. */
export class GcTrace {
  readonly #isolates = new Map<string, GcLine[]>();

  line(line: string): boolean {
    const m = LINE.exec(line);
    if (!m) return false;
    const list = this.#isolates.get(m[1] as string) ?? [];
    list.push({ ms: Number(m[2]), text: m[3] as string });
    this.#isolates.set(m[1] as string, list);
    return true;
  }

  /** Per thread id: its isolate's collections between the walls `from` and `to` (epoch ms). */
  byThread(recorded: readonly Recorded[], from: number, to: number): Map<number, IsolateGc> {
    const isolates = [...this.#isolates].map(([id, lines]) => ({
      id,
      lines,
      pause: lines.reduce((s, l) => s + Number(PAUSE.exec(l.text)?.[1] ?? 0), 0),
    }));
    // Closest totals first, each isolate to one thread.
    const pairs = recorded
      .flatMap((r) =>
        isolates.map((iso) => ({ r, iso, d: Math.abs(iso.pause - at(r.series, Number.MAX_SAFE_INTEGER, 2)) })),
      )
      .sort((a, b) => a.d - b.d);
    const out = new Map<number, IsolateGc>();
    const taken = new Set<string>();
    for (const { r, iso } of pairs) {
      const start = r.series[0]?.[0];
      if (start === undefined || out.has(r.threadId) || taken.has(iso.id)) continue;
      taken.add(iso.id);
      out.set(r.threadId, summarise(iso.lines.filter((l) => l.ms >= from - start && l.ms <= to - start)));
    }
    return out;
  }
}

function summarise(lines: readonly GcLine[]): IsolateGc {
  const g: IsolateGc = { scavenges: 0, markCompacts: 0, starts: {}, markedMb: 0, liveAfterMb: null };
  for (const { text } of lines) {
    const start = START.exec(text);
    if (start) g.starts[start[1] as string] = (g.starts[start[1] as string] ?? 0) + 1;
    const mc = MARK_COMPACT.exec(text);
    if (mc) {
      g.markCompacts++;
      g.markedMb += Number(mc[1]);
      g.liveAfterMb = Number(mc[2]);
    }
    if (text.startsWith('Scavenge')) g.scavenges++;
  }
  return g;
}

/** `2 mark-compacts (external memory pressure 2), 322 MB marked = 180 B per sensor-s, 75 scavenges`. */
export function describeGc(g: IsolateGc, sensorS: number): string {
  const starts = Object.entries(g.starts)
    .map(([why, n]) => `${why} ${n}`)
    .join(', ');
  return `${g.markCompacts} mark-compacts${starts ? ` (started by: ${starts})` : ''}, heap marked ${Math.round(g.markedMb)} MB = ${Math.round((g.markedMb * 1e6) / sensorS)} B per sensor-s${g.liveAfterMb === null ? '' : `, live after ${Math.round(g.liveAfterMb)} MB`}; ${g.scavenges} scavenges`;
}
