import { catalogueFromScenario } from '../assets/from-scenario.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { storedReads } from '../cloud/cloud.js';
import { storedLatencies } from '../cloud/stored-latency.js';
import type { CloudCounters } from '../cloud/pipeline.js';
import { RETENTION_MS } from '../cloud/rollup.js';
import type { Store } from '../store/port.js';
import { reportData, type ReportReads } from '../platform/reads.js';
import { formatDiagnostic } from '../scenario/diagnostics.js';
import { loadScenarioFile, loadScenarioObject, type LoadResult } from '../scenario/load.js';
import type { ScenarioModel } from '../scenario/model.js';
import { createTruthRecorder, type TruthRecorder } from '../sim/truth.js';
import { createWorld } from '../sim/world.js';
import { buildResult, type RunResult } from './report.js';
import { reportRequest, reportSource } from './report-source.js';
import type { RunReport } from './run-report.js';

/**
 * The whole run's accuracy from the store the ingest processes shared (`report merge --store`,
 * docs/scale-out.md): a run whose shards published with `--external-ingest` holds its measured
 * series in that store, not in any shard's report. The ground truth is the world's, replayed
 * from the scenario with the reports' seed, start and duration (the world is deterministic and
 * every shard ran it whole), so no shard has to carry it.
 *
 * The figures are computed by the run's own path: the cloud's reads of its store
 * (`storedReads`, the same function the run's cloud answers with), the platform's report
 * request and answer (`reportRequest`, `reportData`) and the run's `buildResult`; only the
 * counters a process keeps in memory are not read, except the events it emitted, which the
 * outbox holds.
 */
export interface StoreAccuracy {
  presence: RunResult['presence'];
  traffic: RunResult['traffic'];
  /** Traffic-based occupancy from every counter's stored minutes, raw and calibrated, against truth. */
  trafficOccupancy: RunResult['trafficOccupancy'];
  /**
   * Occupancy events in the outbox for the run's minutes: `result.pipeline.eventsEmitted` of a
   * process that emitted them all. Null when the run is longer than the outbox's retention
   * (RETENTION_MS '1m': the recompute prunes older events as the run goes on, so a count would fall short).
   */
  eventsEmitted: number | null;
  /**
   * Sensing → stored latency percentiles of every stored packet (`storedLatencies`): the run's
   * `latencyMs` when its ingest processes stamped batches with their send instant. Null when the
   * run is longer than the payloads' retention (pruned with the '1m' data).
   */
  latencyMs: RunResult['latencyMs'] | null;
}

/** The scenario the shards ran: the file, with the reports' seed, start, duration and fidelity; refused when it is another scenario. */
export function scenarioOfReports(scenario: string | object, report: RunReport): ScenarioModel {
  const s = report.result.scenario;
  const overrides = {
    seed: report.seed,
    durationMs: s.durationMs,
    fidelity: s.fidelity as ScenarioModel['fidelity'],
    start: s.start,
  };
  const loaded: LoadResult =
    typeof scenario === 'string'
      ? loadScenarioFile(scenario, overrides)
      : loadScenarioObject(scenario, '<inline>', overrides);
  if (!loaded.ok)
    throw new AppError(
      ErrorCodes.SCENARIO_INVALID,
      `report merge --scenario: invalid scenario:\n${loaded.diagnostics.map(formatDiagnostic).join('\n')}`,
    );
  const m = loaded.model;
  if (m.name !== report.scenario)
    throw new AppError(
      ErrorCodes.USAGE,
      `report merge: --scenario is ${m.name}, the reports are of ${report.scenario}`,
    );
  if (m.hives.length !== report.shard?.totalHives)
    throw new AppError(
      ErrorCodes.USAGE,
      `report merge: --scenario has ${m.hives.length} hive(s), the reports' shards ${report.shard?.totalHives}`,
    );
  return m;
}

/** The world's truth over the whole run, without sensors, hives or a platform. */
export function replayTruth(model: ScenarioModel): TruthRecorder {
  const world = createWorld(model);
  const truth = createTruthRecorder(model);
  const endMs = model.startMs + model.durationMs;
  for (let t = model.startMs; t < endMs; t += model.tickMs) truth.observe(world.step(t), world);
  return truth;
}

/**
 * Accuracy of every space, counter and traffic space of `model`, measured as stored in `store`,
 * for the scenario's assets (the catalogue the ingest processes built from the same file).
 */
export async function storeAccuracy(model: ScenarioModel, truth: TruthRecorder, store: Store): Promise<StoreAccuracy> {
  const request = reportRequest(model);
  const events = await store.eventCount(request.fromMs, request.toMs);
  const catalogue = catalogueFromScenario(model);
  const latencies = await storedLatencies(catalogue, store);
  const reads: ReportReads = {
    ...storedReads(catalogue, store),
    counters: () => ({ ...NO_COUNTERS, eventsEmitted: events }),
    latenciesMs: () => latencies,
  };
  const r = buildResult(model, truth, reportSource(await reportData(reads, request)), {
    ticks: 0,
    packetsSent: 0,
    batchesSent: 0,
    sensorSeconds: 0,
    interrupted: false,
  });
  return {
    presence: r.presence,
    traffic: r.traffic,
    trafficOccupancy: r.trafficOccupancy,
    eventsEmitted: model.durationMs <= RETENTION_MS['1m'] ? r.pipeline.eventsEmitted : null,
    latencyMs: model.durationMs <= RETENTION_MS['1m'] ? r.latencyMs : null,
  };
}

const NO_COUNTERS: CloudCounters = {
  batchesReceived: 0,
  batchesProcessed: 0,
  duplicateBatches: 0,
  packetsProcessed: 0,
  packetsStoredBefore: 0,
  deadLettered: 0,
  eventsEmitted: 0,
  lateInWindow: 0,
  lateBeyondWindow: 0,
};
