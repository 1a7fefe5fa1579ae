import { rngFor } from '../core/rng.js';
import type { RunResult } from '../run/report.js';
import { startStopwatch } from '../run/perf.js';
import { formatFaultSchedule } from '../scenario/fault-schedule.js';
import type { FaultFile } from '../scenario/network-schema.js';
import { drawSchedule, type DrawTargets, type ExploreFaultKind } from './draw.js';
import { DEFAULT_INVARIANTS } from './invariants.js';
import { shrinkSchedule } from './shrink.js';

/**
 * `occusim explore` (docs/explore.md): runs the scenario under fault schedules drawn from one
 * seed, checks the invariants after each run against a fault-free baseline, and for each
 * failure re-runs it (same bytes, or it is not a replayable failure), shrinks the schedule and
 * prints the command that replays it. Runs go one after another in this process; the runner
 * is a parameter so tests can plant a defect and the CLI can run each in a fresh platform.
 */
export type ScheduleRunner = (faults: FaultFile[]) => Promise<RunOutcome>;

/** A run's result, and what an outside judge (`--invariant-cmd`) said of it. */
export interface RunOutcome {
  result: RunResult;
  /** Violations found outside occusim (the user's invariant command); none when absent. */
  external?: string[];
}

export interface ExploreOptions {
  scenario: string;
  runs: number;
  /** Stop drawing new runs after this much wall time (ms); the run under way finishes. */
  timeBudgetMs?: number;
  durationMs: number;
  seed: number;
  kinds: readonly ExploreFaultKind[];
  maxFaults?: number;
  targets: DrawTargets;
  run: ScheduleRunner;
  onProgress?: (p: ExploreProgress) => void;
}

export interface ExploreProgress {
  done: number;
  runs: number;
  failures: number;
  runsPerHour: number;
}

export interface ExploreFailure {
  index: number;
  faults: FaultFile[];
  violations: string[];
  /** The failing run re-run gave the same result, byte for byte. */
  deterministic: boolean;
  shrunk: FaultFile[];
  shrunkViolations: string[];
  shrinkRuns: number;
  replay: string;
}

export interface ExploreReport {
  scenario: string;
  seed: number;
  durationMs: number;
  runs: number;
  failures: ExploreFailure[];
  wallMs: number;
  runsPerHour: number;
}

/** A shell-safe argument (single quotes, as a user pastes it). */
const shellQuoted = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

export function replayCommand(scenario: string, seed: number | null, durationMs: number, faults: readonly FaultFile[]): string {
  return `occusim run ${shellQuoted(scenario)}${seed === null ? '' : ` --seed ${seed}`} --duration ${Math.round(durationMs / 1000)}s --faults ${shellQuoted(formatFaultSchedule(faults))}`;
}

function violationsOf(run: RunOutcome, faults: readonly FaultFile[], baseline: RunResult): string[] {
  const own = DEFAULT_INVARIANTS.flatMap((inv) => inv.check(run.result, faults, baseline).map((v) => `${inv.name}: ${v}`));
  return [...own, ...(run.external ?? []).map((v) => `invariant-cmd: ${v}`)];
}

export async function explore(o: ExploreOptions): Promise<ExploreReport> {
  const wall = startStopwatch();
  const baseline = (await o.run([])).result;
  const failures: ExploreFailure[] = [];
  let done = 0;
  for (let i = 0; i < o.runs; i++) {
    if (o.timeBudgetMs !== undefined && wall.elapsedMs() > o.timeBudgetMs) break;
    // One stream per run index: run i draws the same schedule whatever ran before it.
    const faults = drawSchedule(rngFor(o.seed, `explore/${i}`), o.targets, o.durationMs, o.kinds, o.maxFaults);
    const result = await o.run(faults);
    const violations = violationsOf(result, faults, baseline);
    done++;
    if (violations.length > 0) failures.push(await investigate(o, i, faults, result, violations, baseline));
    o.onProgress?.({ done, runs: o.runs, failures: failures.length, runsPerHour: rate(done, wall.elapsedMs()) });
  }
  return { scenario: o.scenario, seed: o.seed, durationMs: o.durationMs, runs: done, failures, wallMs: Math.round(wall.elapsedMs()), runsPerHour: rate(done, wall.elapsedMs()) };
}

async function investigate(o: ExploreOptions, index: number, faults: FaultFile[], first: RunOutcome, violations: string[], baseline: RunResult): Promise<ExploreFailure> {
  const again = await o.run(faults);
  const deterministic = JSON.stringify(again.result) === JSON.stringify(first.result);
  let shrunkViolations = violations;
  const shrunk = await shrinkSchedule(faults, async (candidate) => {
    const v = violationsOf(await o.run(candidate), candidate, baseline);
    if (v.length > 0) shrunkViolations = v;
    return v.length > 0;
  });
  return { index, faults, violations, deterministic, shrunk: shrunk.faults, shrunkViolations, shrinkRuns: shrunk.runs, replay: replayCommand(o.scenario, null, o.durationMs, shrunk.faults) };
}

function rate(done: number, ms: number): number {
  return ms > 0 ? Math.round((done * 3_600_000) / ms) : 0;
}
