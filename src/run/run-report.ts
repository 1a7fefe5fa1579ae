import type { Verdict } from './expectations.js';
import type { RealTimeSummary } from './lag.js';
import type { RunResult } from './report.js';
import type { ShardInfo } from './shard.js';
import type { WebhookKeepUp } from './webhook-keep-up.js';
import type { EndpointFigures } from './webhook-endpoints.js';
import type { PlatformReads } from '../platform/reads.js';

/** What `webhook-timestamp` carried (webhooks/timestamps.ts), as the platform's reads say it. */
type WebhookTimestamps = NonNullable<Awaited<ReturnType<PlatformReads['webhookStats']>>>['timestamps'];
import type { PhaseTime } from './perf.js';

/**
 * The start-up's phases as the run's thread sees them, in order. The platform's thread and the
 * hive threads start right after `load` and work alongside `simulator`: a phase's CPU (every
 * thread) above its wall time is that overlap; `platform` and `hives` are what was left to wait for.
 */
export interface StartupBreakdown {
  /** Reading, validating and expanding the scenario (the run's thread alone). */
  load: PhaseTime;
  /**
   * The run's start-up steps, in order, each timed from the end of the one before
   * (run/run-start.ts, RUN_STEPS): `recorder`, `platform start`, `hive threads` (their own
   * threads build alongside), `edge`, `world`, `platform up` (waiting for the platform: its
   * catalogue, store, broker and ingest tables), `hives` (logins and meshes), `wiring`.
   */
  steps: Array<PhaseTime & { name: string }>;
  /** Wall ms from the run's start until the platform was up (it started after `load`). */
  platformUpMs: number;
}

/** Wall-clock figures: differ run to run, kept apart from `result`. */
export interface RunPerf {
  wallMs: number;
  loadMs: number;
  /** Wall ms from the start to the first tick: load, world, edge, platform (catalogue, ingest tables), hive logins, meshes. */
  startupMs: number;
  /** Wall ms of the simulation loop and the final drain (what `sensorSecondsPerWallSecond` spreads over the whole wall time). */
  loopMs: number;
  /** CPU ms (every thread) of the start-up and of the loop: growth measures that other processes on the machine do not stretch. */
  startupCpuMs: number;
  loopCpuMs: number;
  /** Where the start-up went, phase by phase in the run's thread (they add up to `startupMs`). */
  startup?: StartupBreakdown;
  simulatedMs: number;
  /** Simulated time per wall time. */
  speedup: number;
  ticks: number;
  sensorSecondsPerWallSecond: number;
  packetsPerWallSecond: number;
  peakRssMb: number;
  /** CPU time of every thread per wall time, percent (200 = two cores busy). */
  cpuPercent: number;
  /** Where the platform ran: in the run's thread or its own. */
  platformThread: boolean;
  /** Worker threads that simulated the hives (0: the run's thread). */
  hiveThreads: number;
  /** True when the run was stopped (`signal`) before the scenario's end. */
  interrupted: boolean;
  /** Paced runs (`--speed F`): lag behind the wall clock and sensing → stored latency, wall ms (src/run/lag.ts). */
  realTime?: RealTimeSummary;
  /** Wall ms from a webhook delivery's enqueue to its 2xx (runs with webhooks). */
  webhookLatencyMs?: { p50: number; p99: number };
  /** Per endpoint (subscription): enqueue → 2xx p50/p99, error rate, deliveries per wall second (run/webhook-endpoints.ts). */
  webhooks?: EndpointFigures[];
  /** Whether webhook delivery kept up with real time: produced vs delivered, backlog, capacity, sensing → delivered (webhooks/keep-up.ts). */
  webhookKeepUp?: WebhookKeepUp;
  /** What `webhook-timestamp` carried (webhooks/timestamps.ts): wall time differs run to run, so it lives here. */
  webhookTimestamps?: WebhookTimestamps;
}

export interface RunReport {
  scenario: string;
  seed: number;
  /** Present on a shard's report (`--shard i/n`): its slice; `report merge` joins the slices. */
  shard?: ShardInfo;
  /** Deterministic: byte-identical for the same scenario and seed at `--speed max`. */
  result: RunResult;
  perf: RunPerf;
  /** The SQLite file holding the cloud's store after the run. */
  db: string;
  /** False when `db` was a temporary store deleted as the run ended (`keepStore: false`, the CLI without --keep). */
  dbKept: boolean;
  /** The thresholds of the scenario's `expect:` and of `RunOptions.expect`, judged against `result` (absent when there are none). */
  expectations?: Verdict[];
  /** `platform_restart` faults: the instants the run was stopped and resumed from its store (absent when none). */
  platformRestarts?: string[];
}
