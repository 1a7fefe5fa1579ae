import { VirtualClock } from '../core/clock.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { round } from '../core/stats.js';
import { createEdgeStage } from '../edge/sensors.js';
import { availableParallelism } from 'node:os';
import { brokerRestartHook, createDelivery } from '../hive/mesh-delivery.js';
import { startRunHives, type RunHives } from '../hive/hive-startup.js';
import { formatDiagnostic } from '../scenario/diagnostics.js';
import { loadScenarioFile, loadScenarioObject, type LoadOverrides, type LoadResult } from '../scenario/load.js';
import type { ScenarioModel } from '../scenario/model.js';
import { retimeModel } from '../scenario/retime.js';
import { faultsOnModel } from '../scenario/resolve-network.js';
import { createTruthRecorder } from '../sim/truth.js';
import { createWorld } from '../sim/world.js';
import { simulate } from './loop.js';
import { resolveRunOptions, type ResolvedRunOptions, type RunOptions } from './options.js';
import { LagMonitor } from './lag.js';
import { endpointFigures } from './webhook-endpoints.js';
import { webhookKeepUp } from './webhook-keep-up.js';
import { peakRssMb, phaseTimer, startStopwatch } from './perf.js';
import { organisationsFromScenario } from '../assets/from-scenario.js';
import { ackTimeoutForFleet } from '../hive/mqtt-hive.js';
import { rampSchedule } from '../scenario/ramp.js';
import { platformOptionsOf, startPlatform, type Platform, type PlatformWebhookOptions } from '../platform/platform.js';
import { startPlatformThread } from '../platform/thread.js';
import type { PlatformThreadInit } from '../platform/thread-messages.js';
import { recorderFor } from '../capture/recorder.js';
import { buildResult } from './report.js';
import { liveTruthAt, liveTruthStepper } from './live-truth.js';
import { evaluateExpectations } from './expectations.js';
import { MAX_EXPECTATIONS, parseExpectation, type Expectation } from '../scenario/expectations.js';
import { reportRequest, reportSource } from './report-source.js';
import type { RunReport, StartupBreakdown } from './run-report.js';
import { countersFromAcks, shardModel } from './shard.js';
import { platformRestartsOf, runWithPlatformRestarts } from './platform-restarts.js';
import { startShardClockPlatform } from '../platform/shard-clock-platform.js';
import type { PlatformFaultCounts, PlatformFaultTimes } from '../platform/platform-faults.js';

export type { RunPerf, RunReport } from './run-report.js';

/**
 * Runs a scenario end to end — world, sensors, hives, MQTT broker, cloud ingest and store —
 * and returns measured-vs-truth figures. Accepts a scenario file path, a parsed scenario
 * document, or an already loaded model.
 *
 * @example
 * const report = await runScenario('scenarios/quickstart.yaml', { seed: 7 });
 * expect(report.result.presence.rooms.mae).toBeLessThan(1);
 */
export async function runScenario(
  scenario: string | ScenarioModel | object,
  options: RunOptions = {},
): Promise<RunReport> {
  const opts = resolveRunOptions(options);
  const extraExpectations = parseExpectations(options.expect ?? []);
  const wall = startStopwatch();
  const phases = phaseTimer(wall);
  const whole = loadModel(scenario, options);
  const restarts = platformRestartsOf(whole);
  if (restarts.length > 0) return runWithPlatformRestarts(whole, options, restarts, runScenario);
  // A shard simulates its hives and their sensors (`model`); the world and its truth stay whole.
  const sharded = options.shard ? shardModel(whole, options.shard) : null;
  if (sharded && options.brokerUrl === undefined)
    throw new AppError(
      ErrorCodes.USAGE,
      `--shard ${options.shard?.index}/${options.shard?.count} needs --broker mqtt://…: the broker every shard publishes to`,
    );
  // The shared store is the ingest processes': the shard cannot forget its previous end's drain
  // there, so a longer resumed run would store less than an uninterrupted one (docs/scale-out.md).
  if (options.externalIngest === true && options.storePolicy === 'resume') {
    throw new AppError(
      ErrorCodes.USAGE,
      '--resume with --external-ingest is not supported: run the whole sharded run again into a new database (serve --shards on an empty store)',
    );
  }
  // The ingest and its store are the ingest processes' (serve): kill or restart those instead.
  const onPlatform = platformFaultTimes(whole);
  if (onPlatform && options.externalIngest === true)
    throw new AppError(
      ErrorCodes.USAGE,
      'store_restart and ingest_kill need the run’s own ingest: not with --external-ingest (kill or restart the ingest processes and their store instead)',
    );
  const model = sharded?.model ?? whole;
  const load = phases.end();
  const loadMs = load.wallMs;
  const threads = hiveThreadsFor(model, options, options.record !== undefined);
  const clock = new VirtualClock(model.startMs);
  const recorder = recorderFor(options, model);
  const ackTimeoutMs = ackTimeoutForFleet((model.sensors.length * model.batchIntervalMs) / 1000);
  // The platform's thread and the hive threads start now and build their parts (catalogue,
  // store, broker, ingest tables; meshes) while this thread builds the simulator's; each is
  // awaited only once that is done. An in-thread platform starts when this thread next waits.
  // Async, so that a throw is a rejection too: `finally` below closes whatever did start.
  const starting = (async () => startRunPlatform(model, opts, options, recorder))();
  let platformUpMs = 0;
  // Awaited below (or closed in `finally`); a failure meanwhile is not an unhandled rejection.
  void starting.then(
    () => (platformUpMs = wall.elapsedMs()),
    () => undefined,
  );
  let runHives: RunHives | null = null;
  let platform: Platform | null = null;
  let edge: ReturnType<typeof createEdgeStage> | null = null;
  try {
    runHives = startRunHives(model, { threads, ackTimeoutMs });
    edge = createEdgeStage(model, options.workers === undefined ? {} : { workers: options.workers });
    const world = createWorld(whole);
    const truth = createTruthRecorder(whole);
    const simulator = phases.end();
    platform = await starting;
    const platformWait = phases.end();
    // The simulator's side: each hive logs in over MQTT like a device would.
    const groups = await runHives.connect(platform.brokerUrl);
    const hives = phases.end();
    await options.onPlatform?.({
      model,
      dbPath: platform.dbPath,
      brokerUrl: platform.brokerUrl,
      apiUrl: platform.apiUrl,
    });
    const started = platform;
    const delivery = createDelivery(model, groups, clock, {
      ...brokerRestartHook(model, started.restartBroker),
      beforeFlush: (t) => started.setTime(t),
    });
    const live = platform.publishLive ? liveTruthStepper(model, platform.publishLive) : null;
    let lastStepMs = model.startMs;
    const onStep = live
      ? (t: number, w: typeof world): void => {
          lastStepMs = t;
          live(t, w);
        }
      : null;
    const startup: StartupBreakdown = {
      load,
      simulator,
      platform: platformWait,
      hives,
      wiring: phases.end(),
      platformUpMs: Math.round(platformUpMs),
    };
    const startupMs = wall.elapsedMs();
    const startupCpuMs = wall.cpuMs();
    const lag = opts.speed === 'max' ? null : new LagMonitor(opts.speed);
    options.onSimulationStart?.();
    const loop = await simulate({
      model,
      clock,
      world,
      truth,
      edge,
      delivery,
      platform,
      speed: opts.speed,
      onProgress: opts.onProgress,
      onStep,
      signal: options.signal ?? null,
      lag,
      onWarning: options.onWarning ?? null,
    });
    // Stopped early: what the platform receives after the last whole batch interval (the stop's
    // off-grid flush, then the drain) is not what a longer run sends; not the planned end.
    if (loop.interrupted)
      await platform.stoppedAt(
        model.startMs + Math.floor((loop.ticks * model.tickMs) / model.batchIntervalMs) * model.batchIntervalMs,
      );
    await delivery.drain();
    const loopMs = wall.elapsedMs() - startupMs;
    const loopCpuMs = wall.cpuMs() - startupCpuMs;
    loop.batchesSent = delivery.stats().batchesPublished;
    await platform.finish();
    // The live view's last state, with every minute finalised: what a finished run shows.
    if (platform.publishLive)
      platform.publishLive({
        ...liveTruthAt(
          lastStepMs,
          world,
          model.floors.map((f) => f.id),
          (v) => Math.round(v * 100) / 100,
        ),
        final: true,
      });
    const data = await platform.reads.report(reportRequest(model));
    // Ingested elsewhere: an ack means stored, so the hives' acks are this shard's ledger.
    const deliveryReport = await delivery.report();
    if (options.externalIngest === true) data.counters = { ...data.counters, ...countersFromAcks(deliveryReport) };
    const result = buildResult(model, truth, reportSource(data), loop, edge.accuracy?.());
    result.delivery = { ...deliveryReport, ...faultCounts(data.platformFaults) };
    const hooks = await platform.reads.webhookStats();
    if (hooks) result.webhooks = hooks.subscriptions;
    const endpoints = hooks ? endpointFigures(hooks) : null;
    const expectations = [...(model.expect ?? []), ...extraExpectations];
    const verdicts =
      expectations.length > 0
        ? evaluateExpectations(
            expectations,
            result,
            hooks && endpoints
              ? {
                  webhookLatencyMs: { p50: round(hooks.latencyP50Ms, 2), p99: round(hooks.latencyP99Ms, 2) },
                  webhookEndpoints: endpoints,
                }
              : {},
          )
        : null;
    // --truth / --html: what the report was computed from, read-only (results do not depend on it).
    await options.onArtefacts?.({
      model,
      truth,
      data,
      result,
      verdicts,
      ...(hooks?.consumer ? { consumer: hooks.consumer } : {}),
    });
    const wallMs = wall.elapsedMs();
    const simSeconds = wallMs / 1000;
    const report: RunReport = {
      scenario: model.name,
      seed: model.seed,
      ...(sharded ? { shard: sharded.info } : {}),
      result,
      perf: {
        wallMs: Math.round(wallMs),
        loadMs: Math.round(loadMs),
        startupMs: Math.round(startupMs),
        loopMs: Math.round(loopMs),
        startupCpuMs: Math.round(startupCpuMs),
        loopCpuMs: Math.round(loopCpuMs),
        startup,
        simulatedMs: model.durationMs,
        speedup: round(model.durationMs / Math.max(1, wallMs), 1),
        ticks: loop.ticks,
        sensorSecondsPerWallSecond: Math.round(loop.sensorSeconds / simSeconds),
        packetsPerWallSecond: Math.round(loop.packetsSent / simSeconds),
        peakRssMb: peakRssMb(),
        cpuPercent: wall.cpuPercent(),
        platformThread: platform.inOwnThread,
        hiveThreads: threads,
        interrupted: loop.interrupted,
        ...(lag ? { realTime: lag.summary() } : {}),
        ...(hooks
          ? {
              webhookLatencyMs: { p50: round(hooks.latencyP50Ms, 2), p99: round(hooks.latencyP99Ms, 2) },
              ...(endpoints ? { webhooks: endpoints } : {}),
              webhookKeepUp: webhookKeepUp(hooks, model.durationMs, opts.speed),
              webhookTimestamps: hooks.timestamps,
            }
          : {}),
      },
      db: platform.dbPath,
      dbKept: !(options.keepStore === false && opts.store === null),
    };
    if (verdicts) report.expectations = verdicts;
    await options.beforeClose?.(report);
    return report;
  } finally {
    await edge?.close();
    await runHives?.close();
    // A platform that came up after the simulator's build failed is closed all the same.
    const up = platform ?? (await starting.catch(() => null));
    await up?.close();
    recorder?.close();
  }
}

/**
 * The run's platform: in its own worker thread by default (the simulator keeps this thread),
 * in this thread when asked (`platformThread: false`) or when a capture records what the
 * embedded broker accepts (the recorder's callback cannot cross threads). Same results either way.
 */
/** From this many sensors on, `platformThread: 'auto'` runs the platform in its own thread. */
export const AUTO_THREAD_SENSORS = 1000;

function startRunPlatform(
  model: ScenarioModel,
  opts: ResolvedRunOptions,
  options: RunOptions,
  recorder: ReturnType<typeof recorderFor>,
): Promise<Platform> {
  if (options.externalIngest === true && options.shard && options.brokerUrl !== undefined)
    return startShardClockPlatform({ brokerUrl: options.brokerUrl, shard: options.shard, store: opts.store });
  const init: PlatformThreadInit = {
    organisations: organisationsFromScenario(model),
    startMs: model.startMs,
    tickMs: model.tickMs,
    store: opts.store,
    removeTemporaryStore: options.keepStore === false,
    storePolicy: options.storePolicy ?? 'new',
    // A shard's store holds its slice only: resumed by another slice (or unsharded) it would mix runs.
    runKey: `${model.name}|${model.seed}|${model.startMs}${options.shard ? `|shard ${options.shard.index}/${options.shard.count}` : ''}`,
    // A resumed run sends every batch again from its start: its store forgets the previous end's drain.
    runEndMs: model.startMs + model.durationMs,
    mqttPort: opts.mqttPort,
    ...(options.mqttHost !== undefined ? { mqttHost: options.mqttHost } : {}),
    brokerUrl: options.brokerUrl ?? null,
    ...(options.shard ? { ownHivesOnly: true } : {}),
    api: options.api ?? null,
    webhooks: webhookOptions(model, options),
    ...faultsOf(model),
  };
  const thread = options.platformThread ?? 'auto';
  if ((thread === true || (thread === 'auto' && model.sensors.length >= AUTO_THREAD_SENSORS)) && !recorder)
    return startPlatformThread(init);
  return startPlatform({ ...platformOptionsOf(init), onPublish: recorder?.onPublish });
}

/** The schedule's faults on the platform itself (platform-faults.ts), or null when it has none. */
function platformFaultTimes(model: ScenarioModel): PlatformFaultTimes | null {
  const faults = model.faults ?? [];
  const storeAway = faults.flatMap((f) =>
    f.kind === 'store_restart' ? [{ fromMs: f.atMs, toMs: f.atMs + f.durationMs }] : [],
  );
  const ingestKills = faults.flatMap((f) => (f.kind === 'ingest_kill' ? [f.atMs] : []));
  return storeAway.length + ingestKills.length > 0 ? { storeAway, ingestKills } : null;
}

function faultsOf(model: ScenarioModel): { faults?: PlatformFaultTimes } {
  const faults = platformFaultTimes(model);
  return faults ? { faults } : {};
}

/** The faults the platform applied, as the delivery report counts them (none: nothing). */
function faultCounts(c: PlatformFaultCounts | undefined): { storeRestarts?: number; ingestKills?: number } {
  if (!c) return {};
  return {
    ...(c.storeRestarts > 0 ? { storeRestarts: c.storeRestarts } : {}),
    ...(c.ingestKills > 0 ? { ingestKills: c.ingestKills } : {}),
  };
}

/** Hive threads of a run (RunOptions.hiveThreads); a capture's message order must not depend on thread timing. */
function hiveThreadsFor(model: ScenarioModel, options: RunOptions, recording: boolean): number {
  const asked = options.hiveThreads ?? 'auto';
  if (asked !== 'auto') {
    if (!Number.isInteger(asked) || asked < 0 || asked > MAX_HIVE_THREADS)
      throw new AppError(
        ErrorCodes.USAGE,
        `hive threads must be an integer in 0..${MAX_HIVE_THREADS} or 'auto', got ${String(asked)}`,
      );
    return Math.min(asked, model.hives.length);
  }
  if (recording || model.sensors.length < AUTO_THREAD_SENSORS) return 0;
  return Math.min(model.hives.length, Math.max(1, Math.min(4, availableParallelism() - 1)));
}

/** Most hive threads a run starts. */
export const MAX_HIVE_THREADS = 64;

/** The scenario's `webhooks:` entries as the platform creates them, each named by its place in the file. */
export function declaredWebhooks(model: ScenarioModel): NonNullable<PlatformWebhookOptions['declared']> {
  return (model.webhooks ?? []).map((w, i) => ({
    orgId: model.org.id,
    src: `${model.file} webhooks[${i}]`,
    input: {
      name: w.name,
      eventTypes: w.eventTypes,
      url: w.url,
      filters: w.filters,
      secret: w.secret,
      sendOnValueChange: w.sendOnValueChange,
      httpTimeoutS: w.httpTimeoutS,
    },
    ...(w.concurrency !== undefined ? { concurrency: w.concurrency } : {}),
    ...(w.faults !== undefined ? { faults: w.faults } : {}),
    ...(w.storm !== undefined ? { storm: w.storm } : {}),
  }));
}

/**
 * The scenario's `webhooks:` and the caller's webhook options together; the retry jitter and
 * derived secrets follow the run's seed unless the caller pins them. Null: no webhooks.
 */
function webhookOptions(model: ScenarioModel, options: RunOptions): Omit<PlatformWebhookOptions, 'wallTime'> | null {
  const declared = declaredWebhooks(model);
  if (!options.webhooks && declared.length === 0) return null;
  const down = (model.faults ?? []).flatMap((f) =>
    f.kind === 'webhook_down' ? [{ fromMs: f.atMs, toMs: f.atMs + f.durationMs, webhook: f.webhook, src: f.src }] : [],
  );
  return {
    seed: model.seed,
    ...options.webhooks,
    ...(down.length > 0 ? { down } : {}),
    allow: [...(model.webhookAllow ?? []), ...(options.webhooks?.allow ?? [])],
    declared: [...declared, ...(options.webhooks?.declared ?? [])],
  };
}

/** `RunOptions.expect` as thresholds; a bad one is the caller's mistake (USAGE), found before the run. */
function parseExpectations(texts: readonly string[]): Expectation[] {
  if (texts.length > MAX_EXPECTATIONS)
    throw new AppError(ErrorCodes.USAGE, `at most ${MAX_EXPECTATIONS} thresholds, got ${texts.length}`);
  return texts.map((text) => {
    const r = parseExpectation(text);
    if (!r.ok) throw new AppError(ErrorCodes.USAGE, `--expect: ${r.message}`);
    return r.expectation;
  });
}

function loadModel(scenario: string | ScenarioModel | object, options: RunOptions): ScenarioModel {
  const written = loadModelAsWritten(scenario, options);
  const ramped = options.ramp === undefined ? written : { ...written, ramp: [...options.ramp] };
  // Resolved over the whole fleet before hive threads take their shares (ramp.ts).
  const model = ramped.ramp?.length ? { ...ramped, rampSchedule: rampSchedule(ramped) } : ramped;
  return options.timelineStartMs === undefined ? model : retimeModel(model, options.timelineStartMs);
}

function loadModelAsWritten(scenario: string | ScenarioModel | object, options: RunOptions): ScenarioModel {
  if (isModel(scenario)) return applyOverrides(scenario, options);
  const overrides: LoadOverrides = {};
  if (options.seed !== undefined) overrides.seed = options.seed;
  if (options.durationMs !== undefined) overrides.durationMs = options.durationMs;
  if (options.fidelity !== undefined) overrides.fidelity = options.fidelity;
  if (options.start !== undefined) overrides.start = options.start;
  if (options.faults !== undefined) overrides.faults = options.faults;
  const loaded: LoadResult =
    typeof scenario === 'string'
      ? loadScenarioFile(scenario, overrides)
      : loadScenarioObject(scenario, '<inline>', overrides);
  if (!loaded.ok) {
    const lines = loaded.diagnostics.map(formatDiagnostic);
    throw new AppError(ErrorCodes.SCENARIO_INVALID, `invalid scenario:\n${lines.join('\n')}`, {
      details: loaded.diagnostics,
    });
  }
  return loaded.model;
}

function isModel(x: unknown): x is ScenarioModel {
  return typeof x === 'object' && x !== null && 'startMs' in x && 'sensors' in x && 'floors' in x;
}

function applyOverrides(model: ScenarioModel, options: RunOptions): ScenarioModel {
  // A schedule given with a loaded model replaces its faults, as it does a file's (resolved on the model).
  const faults = options.faults === undefined ? null : faultsOnModel(model, options.faults);
  if (faults !== null && !faults.ok)
    throw new AppError(ErrorCodes.SCENARIO_INVALID, `invalid faults:\n${faults.messages.join('\n')}`);
  return {
    ...model,
    ...(faults?.ok ? { faults: faults.faults } : {}),
    seed: options.seed ?? model.seed,
    durationMs: options.durationMs ?? model.durationMs,
    fidelity: options.fidelity ?? model.fidelity,
  };
}
