import { availableParallelism } from 'node:os';
import type { VirtualClock } from '../core/clock.js';
import type { StartStep } from '../core/start-steps.js';
import { createEdgeStage } from '../edge/sensors.js';
import type { EdgeStage } from '../edge/stage.js';
import { brokerRestartHook, createDelivery, type HiveGroups, type MeshDeliveryStage } from '../hive/mesh-delivery.js';
import { startRunHives, type RunHives } from '../hive/hive-startup.js';
import type { ScenarioModel } from '../scenario/model.js';
import { createTruthRecorder, type TruthRecorder } from '../sim/truth.js';
import type { World } from '../sim/types.js';
import { createWorld } from '../sim/world.js';
import { startPlatform, type Platform } from '../platform/platform.js';
import { startPlatformThread } from '../platform/thread.js';
import { startShardClockPlatform } from '../platform/shard-clock-platform.js';
import { startRecording, type Recorder } from '../capture/recorder.js';
import type { SimulatorConfig } from './config.js';
import type { RunOptions } from './options.js';
import type { Stopwatch } from './perf.js';
import { liveTruthStepper } from './live-truth.js';
import { runPlatformConfig } from './run-platform.js';

/**
 * What the start-up steps of a run share: the settings, then each part as its step starts it.
 * The simulation loop and the report read the same object.
 */
export interface RunParts {
  /** The whole world (a shard simulates `model`'s hives; people move through all of it). */
  readonly whole: ScenarioModel;
  readonly model: ScenarioModel;
  readonly config: SimulatorConfig;
  /** The caller's callbacks (`onPlatform`, `onProgress`, …). */
  readonly options: RunOptions;
  readonly wall: Stopwatch;
  readonly clock: VirtualClock;
  /** The hives' ack timeout, from the fleet's uplink volume (mqtt-hive.ts). */
  readonly ackTimeoutMs: number;
  /** Hive threads this run starts (0: hives in the run's thread). */
  threads: number;
  recorder: Recorder | null;
  /** The platform as it starts, alongside the simulator's own build; awaited by `platform up`. */
  starting: Promise<Platform>;
  /** Wall ms from the run's start until the platform was up. */
  platformUpMs: number;
  /** The hives: their threads spawned at once, logged in once the platform is up (hive/hive-startup.ts). */
  hives: RunHives;
  edge: EdgeStage;
  world: World;
  truth: TruthRecorder;
  platform: Platform;
  groups: HiveGroups;
  delivery: MeshDeliveryStage;
  /** Sees the world after each tick for the live view (null: the platform serves no `/live`). */
  onStep: ((t: number, world: World) => void) | null;
  /** The last instant the live view was given. */
  lastStepMs: number;
}

/** From this many sensors on, `platformThread: 'auto'` runs the platform in its own thread. */
export const AUTO_THREAD_SENSORS = 1000;

/**
 * A run's start-up, in order (core/start-steps.ts): each step starts one part and says how to
 * stop it; a failure stops what started, last first, and so does the end of the run. The
 * platform's thread and the hive threads start first and build their parts (catalogue, store,
 * broker, ingest tables; meshes) while this thread builds the simulator's; each is awaited only
 * once that is done. The report's `perf.startup` times each step by its name.
 */
export const RUN_STEPS: readonly StartStep<RunParts>[] = [
  {
    name: 'recorder',
    start: (p) => {
      const r = p.config.record === null ? null : startRecording(p.config.record, p.model);
      p.recorder = r;
      return r ? () => r.close() : undefined;
    },
  },
  {
    name: 'platform start',
    start: (p) => {
      // Async, so that a throw is a rejection too, closed below like a platform that did start.
      p.starting = (async () => startRunPlatform(p))();
      // Awaited by `platform up` (or closed below); a failure meanwhile is not an unhandled rejection.
      void p.starting.then(
        () => (p.platformUpMs = p.wall.elapsedMs()),
        () => undefined,
      );
      // A platform that comes up after a later step failed is closed all the same.
      return async () => (await p.starting.catch(() => null))?.close();
    },
  },
  {
    // Spawned now: each thread builds its meshes while the platform starts. Its stop also ends
    // threads never connected, and closes every hive link `hives` opened.
    name: 'hive threads',
    start: (p) => {
      const hives = startRunHives(p.model, { threads: p.threads, ackTimeoutMs: p.ackTimeoutMs });
      p.hives = hives;
      return () => hives.close();
    },
  },
  {
    name: 'edge',
    start: (p) => {
      const edge = createEdgeStage(p.model, p.config.workers === null ? {} : { workers: p.config.workers });
      p.edge = edge;
      return () => edge.close();
    },
  },
  {
    name: 'world',
    start: (p) => {
      p.world = createWorld(p.whole);
      p.truth = createTruthRecorder(p.whole);
    },
  },
  {
    name: 'platform up',
    start: async (p) => {
      p.platform = await p.starting;
    },
  },
  {
    // The simulator's side: each hive logs in over MQTT like a device would.
    name: 'hives',
    start: async (p) => {
      p.groups = await p.hives.connect(p.platform.brokerUrl);
    },
  },
  { name: 'wiring', start: wire },
];

/** The rest up to the first tick: the caller's `onPlatform`, delivery, the live view. */
async function wire(p: RunParts): Promise<void> {
  const platform = p.platform;
  await p.options.onPlatform?.({
    model: p.model,
    dbPath: platform.dbPath,
    brokerUrl: platform.brokerUrl,
    apiUrl: platform.apiUrl,
  });
  p.delivery = createDelivery(p.model, p.groups, p.clock, {
    ...brokerRestartHook(p.model, platform.restartBroker),
    beforeFlush: (t) => platform.setTime(t),
  });
  const live = platform.publishLive ? liveTruthStepper(p.model, platform.publishLive) : null;
  p.onStep = live
    ? (t, w) => {
        p.lastStepMs = t;
        live(t, w);
      }
    : null;
}

/**
 * The run's platform: in its own worker thread by default (the simulator keeps this thread),
 * in this thread when asked (`platformThread: false`) or when a capture records what the
 * embedded broker accepts (the recorder's callback cannot cross threads). Same results either way.
 */
function startRunPlatform(p: RunParts): Promise<Platform> {
  const { config, model, recorder } = p;
  if (config.externalIngest && config.shard && config.brokerUrl !== null)
    return startShardClockPlatform({ brokerUrl: config.brokerUrl, shard: config.shard, store: config.store });
  const platformConfig = runPlatformConfig(model, config);
  const thread = config.platformThread;
  if ((thread === true || (thread === 'auto' && model.sensors.length >= AUTO_THREAD_SENSORS)) && !recorder)
    return startPlatformThread(platformConfig);
  return startPlatform(platformConfig, recorder ? { onPublish: recorder.onPublish } : {});
}

/** Hive threads of a run (`hiveThreads`); a capture's message order must not depend on thread timing. */
export function hiveThreadsFor(model: ScenarioModel, config: SimulatorConfig): number {
  const asked = config.hiveThreads;
  if (asked !== 'auto') return Math.min(asked, model.hives.length);
  if (config.record !== null || model.sensors.length < AUTO_THREAD_SENSORS) return 0;
  return Math.min(model.hives.length, Math.max(1, Math.min(4, availableParallelism() - 1)));
}
