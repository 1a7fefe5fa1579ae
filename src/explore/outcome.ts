import type { RunResult } from '../run/report.js';

/**
 * What one explore run sends back (from a worker thread or in place): the run's result, what an
 * outside judge said of it, and where its wall time went. The shapes crossing the thread
 * boundary live here, used by both sides (src/explore/worker.ts, src/explore/pool.ts).
 */
export interface RunOutcome {
  result: RunResult;
  /** Violations found outside occusim (the user's invariant command); none when absent. */
  external?: string[];
  /** Absent when the runner does not measure (a test's planted runner). */
  cost?: RunCost;
}

/** Wall ms of one run: start-up (platform, hives, simulator built), simulation (the loop and drain), whole. */
export interface RunCost {
  startupMs: number;
  simulationMs: number;
  wallMs: number;
}
