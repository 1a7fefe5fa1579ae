import { rngFor } from '../core/rng.js';
import type { RunResult } from '../run/report.js';
import { startStopwatch } from '../run/perf.js';
import { formatFaultSchedule } from '../scenario/fault-schedule.js';
import type { FaultFile } from '../scenario/network-schema.js';
import { drawSchedule, type DrawTargets, type ExploreFaultKind } from './draw.js';
import { DEFAULT_INVARIANTS, type NamedInvariant } from './invariants.js';
import type { RunOutcome } from './outcome.js';
import { shrinkSchedule } from './shrink.js';

export type { RunOutcome } from './outcome.js';

/**
 * `occusim explore` (docs/explore.md): runs the scenario under fault schedules drawn from one
 * seed, checks the invariants after each run against a fault-free baseline, and for each
 * failure re-runs it (same bytes, or it is not a replayable failure), shrinks the schedule and
 * prints the command that replays it. Up to `jobs` runs are under way at once (the runner
 * hands them to worker threads); the runner is a parameter so tests can plant a defect.
 */
export type ScheduleRunner = (faults: FaultFile[]) => Promise<RunOutcome>;

export interface ExploreOptions {
  scenario: string;
  runs: number;
  /** Stop drawing new runs after this much wall time (ms); the runs under way finish. */
  timeBudgetMs?: number;
  durationMs: number;
  seed: number;
  kinds: readonly ExploreFaultKind[];
  maxFaults?: number;
  targets: DrawTargets;
  run: ScheduleRunner;
  /** Runs under way at once (default 1). */
  jobs?: number;
  /** Default: DEFAULT_INVARIANTS. */
  invariants?: readonly NamedInvariant[];
  /** Extra arguments of the printed replay command (`--expect …`), shell-quoted already. */
  replayArgs?: string;
  onProgress?: (p: ExploreProgress) => void;
}

export interface ExploreProgress {
  done: number;
  runs: number;
  failures: number;
  runsPerHour: number;
  /** Wall ms left of `--time-budget`; null without one. */
  leftMs: number | null;
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

/** Where the search's time went, summed over its runs (wall ms; runs overlap with `jobs` > 1). */
export interface ExploreCosts {
  /** Runs that reported their cost. */
  measuredRuns: number;
  startupMs: number;
  simulationMs: number;
  /** The invariants, in this thread. */
  checksMs: number;
  runWallMs: number;
}

export interface ExploreReport {
  scenario: string;
  seed: number;
  durationMs: number;
  jobs: number;
  runs: number;
  failures: ExploreFailure[];
  wallMs: number;
  runsPerHour: number;
  /** CPU ms of the whole process (every worker thread) over the search: unlike wall time, not stretched by other processes on the cores. */
  cpuMs: number;
  costs: ExploreCosts;
}

/** A shell-safe argument (single quotes, as a user pastes it). */
export const shellQuoted = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

export function replayCommand(
  scenario: string,
  seed: number | null,
  durationMs: number,
  faults: readonly FaultFile[],
  extra = '',
): string {
  return `occusim run ${shellQuoted(scenario)}${seed === null ? '' : ` --seed ${seed}`} --duration ${Math.round(durationMs / 1000)}s --faults ${shellQuoted(formatFaultSchedule(faults))}${extra === '' ? '' : ` ${extra}`}`;
}

/** A run's outcome, or what it crashed with: a run that throws breaks the "no crash" invariant. */
type Attempt = { ok: true; outcome: RunOutcome } | { ok: false; crash: string };

async function attempt(o: ExploreOptions, faults: FaultFile[]): Promise<Attempt> {
  try {
    return { ok: true, outcome: await o.run(faults) };
  } catch (err) {
    return { ok: false, crash: err instanceof Error ? err.message : String(err) };
  }
}

function violationsOf(
  o: ExploreOptions,
  a: Attempt,
  faults: readonly FaultFile[],
  baseline: RunResult,
  costs: ExploreCosts,
): string[] {
  if (!a.ok) return [`no-crash: ${a.crash}`];
  const checks = startStopwatch();
  const own = (o.invariants ?? DEFAULT_INVARIANTS).flatMap((inv) =>
    inv.check(a.outcome.result, faults, baseline).map((v) => `${inv.name}: ${v}`),
  );
  costs.checksMs += checks.elapsedMs();
  const c = a.outcome.cost;
  if (c) {
    costs.measuredRuns++;
    costs.startupMs += c.startupMs;
    costs.simulationMs += c.simulationMs;
    costs.runWallMs += c.wallMs;
  }
  return [...own, ...(a.outcome.external ?? []).map((v) => `invariant-cmd: ${v}`)];
}

export async function explore(o: ExploreOptions): Promise<ExploreReport> {
  const wall = startStopwatch();
  const costs: ExploreCosts = { measuredRuns: 0, startupMs: 0, simulationMs: 0, checksMs: 0, runWallMs: 0 };
  const first = await attempt(o, []);
  if (!first.ok) throw new Error(`the fault-free run failed: ${first.crash}`);
  const baseline = first.outcome.result;
  const failures: ExploreFailure[] = [];
  let next = 0;
  let done = 0;
  const out = (): boolean => o.timeBudgetMs !== undefined && wall.elapsedMs() > o.timeBudgetMs;
  // Each lane takes the next index until none is left: run i draws from its own stream, so
  // the schedules do not depend on which lane ran what or in what order runs finished.
  const lane = async (): Promise<void> => {
    while (next < o.runs && !out()) {
      const i = next++;
      const faults = drawSchedule(rngFor(o.seed, `explore/${i}`), o.targets, o.durationMs, o.kinds, o.maxFaults);
      const a = await attempt(o, faults);
      const violations = violationsOf(o, a, faults, baseline, costs);
      done++;
      if (violations.length > 0) failures.push(await investigate(o, i, faults, a, violations, baseline, costs));
      const elapsed = wall.elapsedMs();
      o.onProgress?.({
        done,
        runs: o.runs,
        failures: failures.length,
        runsPerHour: rate(done, elapsed),
        leftMs: o.timeBudgetMs === undefined ? null : Math.max(0, o.timeBudgetMs - elapsed),
      });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, o.jobs ?? 1) }, lane));
  failures.sort((a, b) => a.index - b.index);
  costs.checksMs = Math.round(costs.checksMs);
  const wallMs = wall.elapsedMs();
  return {
    scenario: o.scenario,
    seed: o.seed,
    durationMs: o.durationMs,
    jobs: Math.max(1, o.jobs ?? 1),
    runs: done,
    failures,
    wallMs: Math.round(wallMs),
    runsPerHour: rate(done, wallMs),
    cpuMs: Math.round(wall.cpuMs()),
    costs,
  };
}

const sameBytes = (a: Attempt, b: Attempt): boolean =>
  JSON.stringify(a.ok ? a.outcome.result : a.crash) === JSON.stringify(b.ok ? b.outcome.result : b.crash);

async function investigate(
  o: ExploreOptions,
  index: number,
  faults: FaultFile[],
  first: Attempt,
  violations: string[],
  baseline: RunResult,
  costs: ExploreCosts,
): Promise<ExploreFailure> {
  const deterministic = sameBytes(await attempt(o, faults), first);
  let shrunkViolations = violations;
  const shrunk = await shrinkSchedule(faults, async (candidate) => {
    const v = violationsOf(o, await attempt(o, candidate), candidate, baseline, costs);
    if (v.length > 0) shrunkViolations = v;
    return v.length > 0;
  });
  return {
    index,
    faults,
    violations,
    deterministic,
    shrunk: shrunk.faults,
    shrunkViolations,
    shrinkRuns: shrunk.runs,
    replay: replayCommand(o.scenario, null, o.durationMs, shrunk.faults, o.replayArgs),
  };
}

function rate(done: number, ms: number): number {
  return ms > 0 ? Math.round((done * 3_600_000) / ms) : 0;
}
