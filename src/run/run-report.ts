import type { RunResult } from './report.js';

/** Wall-clock figures: differ run to run, kept apart from `result`. */
export interface RunPerf {
  wallMs: number;
  loadMs: number;
  simulatedMs: number;
  /** Simulated time per wall time. */
  speedup: number;
  ticks: number;
  sensorSecondsPerWallSecond: number;
  packetsPerWallSecond: number;
  peakRssMb: number;
  /** True when the run was stopped (`signal`) before the scenario's end. */
  interrupted: boolean;
}

export interface RunReport {
  scenario: string;
  seed: number;
  /** Deterministic: byte-identical for the same scenario and seed at `--speed max`. */
  result: RunResult;
  perf: RunPerf;
  /** The SQLite file holding the cloud's store after the run. */
  db: string;
}
