import { parseDuration } from '../core/time.js';
import type { FaultFile } from '../scenario/network-schema.js';

/**
 * Shrinking a failing schedule (docs/explore.md): drop faults one at a time, then halve
 * durations, keeping each step that still fails, until no step does. Greedy and bounded by
 * `maxRuns`, as delta debugging: a few faults that fail beat the many that were drawn.
 */
export async function shrinkSchedule(
  faults: readonly FaultFile[],
  fails: (candidate: FaultFile[]) => Promise<boolean>,
  maxRuns = 40,
): Promise<{ faults: FaultFile[]; runs: number }> {
  let current = [...faults];
  let runs = 0;
  let progress = true;
  while (progress && runs < maxRuns) {
    progress = false;
    for (const candidate of smaller(current)) {
      if (runs >= maxRuns) break;
      runs++;
      if (await fails(candidate)) {
        current = candidate;
        progress = true;
        break;
      }
    }
  }
  return { faults: current, runs };
}

/** Candidates one step smaller: each fault left out, then each duration halved (whole seconds). */
function* smaller(faults: readonly FaultFile[]): Generator<FaultFile[]> {
  for (let i = 0; i < faults.length; i++) if (faults.length > 1) yield faults.filter((_, j) => j !== i);
  for (let i = 0; i < faults.length; i++) {
    const f = faults[i]!;
    if (f.duration === undefined) continue;
    const ms = parseDuration(f.duration) ?? 0;
    const half = Math.floor(ms / 2000);
    if (half < 1) continue;
    yield faults.map((g, j) => (j === i ? { ...g, duration: `${half}s` } : g));
  }
}
