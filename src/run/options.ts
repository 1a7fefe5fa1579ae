import type { RampStep } from '../scenario/ramp.js';
import type { Fidelity, ScenarioModel } from '../scenario/model.js';
import type { FaultFile } from '../scenario/network-schema.js';
import type { RunReport } from './run-report.js';
import type { ServedApi } from '../platform/platform.js';
import type { PlatformWebhookOptions } from '../platform/platform.js';
import type { StorePolicy } from '../store/guard.js';
import type { ReportData } from '../platform/reads.js';
import type { TruthRecorder } from '../sim/truth.js';
import type { ConsumerStateRow } from '../platform/reads.js';
import type { RunResult } from './report.js';
import type { Verdict } from './expectations.js';
import type { ShardSpec } from './shard.js';
import type { StoreLocation } from '../store/location.js';
import type { PlatformSettings } from '../platform/config.js';

/** Options of `runScenario` (and of `occusim run`, which maps its flags onto these). */
export interface RunOptions {
  /** Overrides the scenario's seed. */
  seed?: number;
  /** 'max' (default): virtual time, as fast as possible, deterministic. A number: that many times real time. */
  speed?: 'max' | number;
  /** Overrides the scenario's duration. */
  durationMs?: number;
  /** Overrides the scenario's start (e.g. an ISO instant with Z: a real-time feed that starts now). */
  start?: string;
  /** Replaces the scenario's `faults:` block (`--faults '<schedule>'`; scenario/fault-schedule.ts). */
  faults?: readonly FaultFile[];
  /** Replaces the scenario's `ramp:` (`--ramp 0:10%,5m:100%`; scenario/ramp.ts). */
  ramp?: readonly RampStep[];
  /**
   * Moves the scenario's timeline to start at this instant (epoch ms; `--start now`): arrivals,
   * meetings and faults keep their place relative to the start (scenario/retime.ts), where
   * `start` keeps the scenario's clock times.
   */
  timelineStartMs?: number;
  fidelity?: Fidelity;
  /** Worker threads for frame fidelity (0: in the main thread); default min(4, cores). Results do not depend on it. */
  workers?: number;
  /**
   * The store: a SQLite file path, `sqlite:PATH`, a `postgres://` URL, or a location already
   * parsed (store/location.ts); default a new SQLite file in a temporary directory.
   */
  dbPath?: string | StoreLocation;
  /** Port of the embedded MQTT broker; default 0 (a free port). */
  mqttPort?: number;
  /** Interface the embedded broker binds; default 127.0.0.1 (`0.0.0.0` for devices on the network). */
  mqttHost?: string;
  /** Use this external MQTT broker (mqtt://host:port) instead of the embedded one. */
  brokerUrl?: string;
  /**
   * Simulate only slice `index` of `count` of the hives (src/run/shard.ts; docs/scale-out.md), on
   * an external broker (`brokerUrl`) the other shards share. People move through the whole world.
   */
  shard?: ShardSpec;
  /**
   * With `shard`: no platform of its own; `occusim serve --shards n` processes on the broker
   * ingest its hives and follow its clock (platform/shard-clock-platform.ts). Its report's
   * ledger comes from its hives' acks and holds no occupancy (that is in the shared store).
   */
  externalIngest?: boolean;
  /** Write every MQTT message the embedded broker accepts to this capture file (.occap). */
  record?: string;
  /** Paced runs: a warning while the run falls behind real time (rate-limited: at most one per 10 s of wall time). */
  onWarning?: (message: string) => void;
  /** Called as the run advances, at most about 200 times a run. */
  onProgress?: (doneMs: number, totalMs: number, packetsSent: number) => void;
  /**
   * Called once start-up is over, as simulated time starts: a progress display counts its
   * wall time (rate, ETA, lag behind the pace) from here, as the run's own lag figures do.
   */
  onSimulationStart?: () => void;
  /**
   * Called once the platform (broker, cloud, store) is up and before simulated time starts:
   * `--serve` starts the HTTP API here, so a real-time run can be queried while it runs.
   */
  onPlatform?: (ready: PlatformReady) => Promise<void> | void;
  /** Called with the finished report while the platform still runs: `--serve` keeps serving here until stopped. */
  beforeClose?: (report: RunReport) => Promise<void> | void;
  /**
   * Called once with what the report was computed from (the truth recorder, the platform's
   * answer) while the platform still runs: `--truth` and `--html` write their files here.
   */
  onArtefacts?: (a: RunArtefacts) => Promise<void> | void;
  /** Aborting stops the simulation at the next tick; the run then finishes with what was simulated. */
  signal?: AbortSignal;
  /** Without `dbPath`: false deletes the temporary store when the run ends (default true: the report's `db` can be opened). */
  keepStore?: boolean;
  /** A store (`dbPath`) that already holds a run: refused (`new`, default), emptied (`fresh`) or continued (`resume`). */
  storePolicy?: StorePolicy;
  /**
   * Run the platform (broker, ingest, store, API) in its own worker thread, so simulator and
   * platform use a core each; false keeps it in this thread. Default `auto`: its own thread from
   * AUTO_THREAD_SENSORS sensors on, where the work per batch interval outweighs the thread
   * round trips (bench/README.md). Results are byte-identical either way.
   */
  platformThread?: boolean | 'auto';
  /**
   * Worker threads that simulate the hives (meshes, batching, MQTT links), so the run's thread
   * keeps only the world and the edge: 0 simulates them in the run's thread. Default `auto`:
   * from AUTO_THREAD_SENSORS sensors on, one per core beyond the first (at most 4), none when
   * recording a capture (its message order would then depend on thread timing). Results are
   * byte-identical at any number.
   */
  hiveThreads?: number | 'auto';
  /** Serve the platform's HTTP API from the run's start (`--serve`). */
  api?: ServedApi;
  /** Thresholds judged against the result at the end, besides the scenario's `expect:` (e.g. `rooms.mae<0.5`; docs/cli.md). */
  expect?: readonly string[];
  /** The platform's settings (`--lookback`, …), passed to it unchanged (platform/config.ts). */
  platform?: PlatformSettings;
  /** Webhook delivery from the run's platform (docs/webhooks.md), in whichever thread it runs. */
  webhooks?: Partial<Omit<PlatformWebhookOptions, 'wallTime'>>;
}

/** What a run's report was computed from (`RunOptions.onArtefacts`). */
export interface RunArtefacts {
  model: ScenarioModel;
  truth: TruthRecorder;
  data: ReportData;
  result: RunResult;
  /** The thresholds' verdicts (the scenario's `expect:` and `--expect`), null without thresholds. */
  verdicts: readonly Verdict[] | null;
  /** The state a correct consumer of each subscription must hold (`webhooks.consumerExpect`; webhooks/expected-state.ts). */
  consumer?: readonly ConsumerStateRow[];
}

/** What a caller needs to serve a running platform. */
export interface PlatformReady {
  model: ScenarioModel;
  /** The cloud store's SQLite file (WAL: other connections may read while the cloud writes). */
  dbPath: string;
  brokerUrl: string;
  /** The HTTP API's address when the run serves it. */
  apiUrl: string | null;
}
