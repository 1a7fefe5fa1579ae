import { VirtualClock } from '../core/clock.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { startSteps } from '../core/start-steps.js';
import { round } from '../core/stats.js';
import { formatDiagnostic } from '../scenario/diagnostics.js';
import { loadScenarioFile, loadScenarioObject, type LoadOverrides, type LoadResult } from '../scenario/load.js';
import type { ScenarioModel } from '../scenario/model.js';
import { retimeModel } from '../scenario/retime.js';
import { faultsOnModel } from '../scenario/resolve-network.js';
import { rampSchedule } from '../scenario/ramp.js';
import { ackTimeoutForFleet } from '../hive/mqtt-hive.js';
import { simulate, type LoopStats } from './loop.js';
import type { RunOptions } from './options.js';
import { simulatorConfig, type SimulatorConfig } from './config.js';
import { LagMonitor } from './lag.js';
import { endpointFigures } from './webhook-endpoints.js';
import { webhookKeepUp } from './webhook-keep-up.js';
import { peakRssMb, phaseTimer, startStopwatch, type PhaseTime, type Stopwatch } from './perf.js';
import { buildResult, type RunResult } from './report.js';
import { liveTruthAt } from './live-truth.js';
import { evaluateExpectations, type Verdict } from './expectations.js';
import { reportRequest, reportSource } from './report-source.js';
import type { RunPerf, RunReport, StartupBreakdown } from './run-report.js';
import { countersFromAcks, shardModel } from './shard.js';
import { platformRestartsOf, runWithPlatformRestarts } from './platform-restarts.js';
import type { PlatformFaultCounts } from '../platform/platform-faults.js';
import type { ReportData, WebhookStats } from '../platform/reads.js';
import { hiveThreadsFor, RUN_STEPS, type RunParts } from './run-start.js';
import { platformFaultTimes } from './run-platform.js';

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
  const config = simulatorConfig(options);
  const wall = startStopwatch();
  const phases = phaseTimer(wall);
  const whole = loadModel(scenario, options);
  const restarts = platformRestartsOf(whole);
  if (restarts.length > 0) return runWithPlatformRestarts(whole, options, restarts, runScenario);
  // A shard simulates its hives and their sensors (`model`); the world and its truth stay whole.
  const sharded = config.shard ? shardModel(whole, config.shard) : null;
  // The ingest and its store are the ingest processes' (serve): kill or restart those instead.
  if (config.externalIngest && platformFaultTimes(whole))
    throw new AppError(
      ErrorCodes.USAGE,
      'store_restart and ingest_kill need the run’s own ingest: not with --external-ingest (kill or restart the ingest processes and their store instead)',
    );
  const parts = newParts(whole, sharded?.model ?? whole, config, options, wall);
  const startup: StartupBreakdown = { load: phases.end(), steps: [], platformUpMs: 0 };
  // perf.startup is the step list itself: each step's wall and CPU time under its name.
  const onStarted = (name: string): void => void startup.steps.push({ name, ...phases.end() });
  const started = await startSteps(RUN_STEPS, parts, { onStarted });
  try {
    startup.platformUpMs = Math.round(parts.platformUpMs);
    const report = await runAndReport(parts, startup, sharded?.info);
    await options.beforeClose?.(report);
    return report;
  } finally {
    await started.stop();
  }
}

/** The run's parts before its steps start them: each step fills in its own (run-start.ts). */
function newParts(
  whole: ScenarioModel,
  model: ScenarioModel,
  config: SimulatorConfig,
  options: RunOptions,
  wall: Stopwatch,
): RunParts {
  const partial: Partial<RunParts> = {
    whole,
    model,
    config,
    options,
    wall,
    clock: new VirtualClock(model.startMs),
    ackTimeoutMs: ackTimeoutForFleet((model.sensors.length * model.batchIntervalMs) / 1000),
    threads: hiveThreadsFor(model, config),
    recorder: null,
    platformUpMs: 0,
    onStep: null,
    lastStepMs: model.startMs,
  };
  return partial as RunParts;
}

/** The simulation from the first tick to the drain, then the report. */
async function runAndReport(
  p: RunParts,
  startup: StartupBreakdown,
  shard: RunReport['shard'] | undefined,
): Promise<RunReport> {
  const { wall, config, model } = p;
  const atStart = { wallMs: wall.elapsedMs(), cpuMs: wall.cpuMs() };
  const lag = config.speed === 'max' ? null : new LagMonitor(config.speed);
  const loop = await runLoop(p, lag);
  const loopTime = { wallMs: wall.elapsedMs() - atStart.wallMs, cpuMs: wall.cpuMs() - atStart.cpuMs };
  const ended = await endOfRun(p, loop);
  const report: RunReport = {
    scenario: model.name,
    seed: model.seed,
    ...(shard ? { shard } : {}),
    result: ended.result,
    perf: {
      ...perfOf(p, loop, startup, atStart, loopTime),
      ...(lag ? { realTime: lag.summary() } : {}),
      ...ended.webhookPerf,
    },
    db: p.platform.dbPath,
    dbKept: config.keepStore || config.store !== null,
  };
  if (ended.verdicts) report.expectations = ended.verdicts;
  return report;
}

/** The run's wall-clock figures (`perf`): they differ run to run and are kept apart from `result`. */
function perfOf(
  p: RunParts,
  loop: LoopStats,
  startup: StartupBreakdown,
  atStart: PhaseTime,
  loopTime: PhaseTime,
): RunPerf {
  const { wall, model } = p;
  const wallMs = wall.elapsedMs();
  return {
    wallMs: Math.round(wallMs),
    loadMs: startup.load.wallMs,
    startupMs: Math.round(atStart.wallMs),
    loopMs: Math.round(loopTime.wallMs),
    startupCpuMs: Math.round(atStart.cpuMs),
    loopCpuMs: Math.round(loopTime.cpuMs),
    startup,
    simulatedMs: model.durationMs,
    speedup: round(model.durationMs / Math.max(1, wallMs), 1),
    ticks: loop.ticks,
    sensorSecondsPerWallSecond: Math.round(loop.sensorSeconds / (wallMs / 1000)),
    packetsPerWallSecond: Math.round(loop.packetsSent / (wallMs / 1000)),
    peakRssMb: peakRssMb(),
    cpuPercent: wall.cpuPercent(),
    platformThread: p.platform.inOwnThread,
    hiveThreads: p.threads,
    interrupted: loop.interrupted,
  };
}

/** The loop over simulated time, and the drain of what is still on its way. */
async function runLoop(p: RunParts, lag: LagMonitor | null): Promise<LoopStats> {
  const { model, platform, delivery, options } = p;
  options.onSimulationStart?.();
  const loop = await simulate({
    model,
    clock: p.clock,
    world: p.world,
    truth: p.truth,
    edge: p.edge,
    delivery,
    platform,
    speed: p.config.speed,
    onProgress: options.onProgress ?? null,
    onStep: p.onStep,
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
  loop.batchesSent = delivery.stats().batchesPublished;
  return loop;
}

interface Ended {
  result: RunResult;
  verdicts: Verdict[] | null;
  webhookPerf: Partial<RunPerf>;
}

/** Every minute finalised, the platform's answer read back and judged against the truth. */
async function endOfRun(p: RunParts, loop: LoopStats): Promise<Ended> {
  const { model, platform } = p;
  await platform.finish();
  // The live view's last state, with every minute finalised: what a finished run shows.
  if (platform.publishLive) {
    const floors = model.floors.map((f) => f.id);
    const truth = liveTruthAt(p.lastStepMs, p.world, floors, (v) => Math.round(v * 100) / 100);
    platform.publishLive({ ...truth, final: true });
  }
  const data = await platform.reads.report(reportRequest(model));
  // Ingested elsewhere: an ack means stored, so the hives' acks are this shard's ledger.
  const deliveryReport = await p.delivery.report();
  if (p.config.externalIngest) data.counters = { ...data.counters, ...countersFromAcks(deliveryReport) };
  const result = buildResult(model, p.truth, reportSource(data), loop, p.edge.accuracy?.());
  result.delivery = { ...deliveryReport, ...faultCounts(data.platformFaults) };
  const hooks = await platform.reads.webhookStats();
  if (hooks) result.webhooks = hooks.subscriptions;
  // Computed once: the thresholds judge the same figures the report's perf shows.
  const perf = hooks ? webhookPerf(p, hooks) : {};
  const verdicts = judge(p, result, perf);
  await artefacts(p, data, result, verdicts, hooks);
  return { result, verdicts, webhookPerf: perf };
}

/** Wall-time figures of webhook delivery (perf): enqueue → 2xx, per endpoint, keeping up. */
function webhookPerf(p: RunParts, hooks: WebhookStats): Partial<RunPerf> {
  const endpoints = endpointFigures(hooks);
  return {
    webhookLatencyMs: { p50: round(hooks.latencyP50Ms, 2), p99: round(hooks.latencyP99Ms, 2) },
    ...(endpoints ? { webhooks: endpoints } : {}),
    webhookKeepUp: webhookKeepUp(hooks, p.model.durationMs, p.config.speed),
    webhookTimestamps: hooks.timestamps,
  };
}

/** The scenario's `expect:` and the caller's thresholds against the result; null without any. */
function judge(p: RunParts, result: RunResult, perf: Partial<RunPerf>): Verdict[] | null {
  const expectations = [...(p.model.expect ?? []), ...p.config.expectations];
  if (expectations.length === 0) return null;
  const { webhookLatencyMs, webhooks } = perf;
  return evaluateExpectations(
    expectations,
    result,
    webhookLatencyMs && webhooks ? { webhookLatencyMs, webhookEndpoints: webhooks } : {},
  );
}

/** --truth / --html: what the report was computed from, read-only (results do not depend on it). */
async function artefacts(
  p: RunParts,
  data: ReportData,
  result: RunResult,
  verdicts: Verdict[] | null,
  hooks: WebhookStats | null,
): Promise<void> {
  await p.options.onArtefacts?.({
    model: p.model,
    truth: p.truth,
    data,
    result,
    verdicts,
    ...(hooks?.consumer ? { consumer: hooks.consumer } : {}),
  });
}

/** The faults the platform applied, as the delivery report counts them (none: nothing). */
function faultCounts(c: PlatformFaultCounts | undefined): { storeRestarts?: number; ingestKills?: number } {
  if (!c) return {};
  return {
    ...(c.storeRestarts > 0 ? { storeRestarts: c.storeRestarts } : {}),
    ...(c.ingestKills > 0 ? { ingestKills: c.ingestKills } : {}),
  };
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
