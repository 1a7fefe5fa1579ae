import { AppError, ErrorCodes } from '../core/errors.js';
import { ValueCounts } from '../core/value-counts.js';
import type { CloudCounters } from '../cloud/pipeline.js';
import type { Store } from '../cloud/store/port.js';
import { formatDiagnostic } from '../scenario/diagnostics.js';
import { loadScenarioFile, loadScenarioObject, type LoadResult } from '../scenario/load.js';
import type { ScenarioModel } from '../scenario/model.js';
import { createTruthRecorder, type TruthRecorder } from '../sim/truth.js';
import { createWorld } from '../sim/world.js';
import { buildResult, type RunResult } from './report.js';
import type { ReportSource } from './report-source.js';
import type { RunReport } from './run-report.js';

/**
 * The whole run's accuracy from the store the ingest processes shared (`report merge --store`,
 * docs/scale-out.md): a run whose shards published with `--external-ingest` holds its measured
 * series in that store, not in any shard's report. The ground truth is the world's, replayed
 * from the scenario with the reports' seed, start and duration (the world is deterministic and
 * every shard ran it whole), so no shard has to carry it.
 */
export interface StoreAccuracy {
  presence: RunResult['presence'];
  traffic: RunResult['traffic'];
}

/** The scenario the shards ran: the file, with the reports' seed, start, duration and fidelity; refused when it is another scenario. */
export function scenarioOfReports(scenario: string | object, report: RunReport): ScenarioModel {
  const s = report.result.scenario;
  const overrides = { seed: report.seed, durationMs: s.durationMs, fidelity: s.fidelity as ScenarioModel['fidelity'], start: s.start };
  const loaded: LoadResult = typeof scenario === 'string' ? loadScenarioFile(scenario, overrides) : loadScenarioObject(scenario, '<inline>', overrides);
  if (!loaded.ok) throw new AppError(ErrorCodes.SCENARIO_INVALID, `report merge --scenario: invalid scenario:\n${loaded.diagnostics.map(formatDiagnostic).join('\n')}`);
  const m = loaded.model;
  if (m.name !== report.scenario) throw new AppError(ErrorCodes.USAGE, `report merge: --scenario is ${m.name}, the reports are of ${report.scenario}`);
  if (m.hives.length !== report.shard?.totalHives) throw new AppError(ErrorCodes.USAGE, `report merge: --scenario has ${m.hives.length} hive(s), the reports' shards ${report.shard?.totalHives}`);
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

/** Presence and traffic accuracy of every space and counter of `model`, measured as stored in `store`. */
export async function storeAccuracy(model: ScenarioModel, truth: TruthRecorder, store: Store): Promise<StoreAccuracy> {
  const presence = new Map<string, Awaited<ReturnType<Store['presenceMinutes']>>>();
  for (const s of [...model.floors, ...model.rooms, ...model.zones]) presence.set(s.id, await store.presenceMinutes(s.id));
  const traffic = new Map<string, Awaited<ReturnType<Store['trafficMinutes']>>>();
  for (const s of model.sensors) if (s.mode === 'traffic') traffic.set(s.id, await store.trafficMinutes(s.id));
  const source: ReportSource = {
    counters: () => NO_COUNTERS,
    latenciesMs: () => new ValueCounts(),
    presenceMinutes: (id) => (presence.get(id) ?? []).map(({ minuteMs, value, samples }) => ({ minuteMs, value, samples })),
    trafficMinutes: (id) => (traffic.get(id) ?? []).map(({ minuteMs, in: i, out }) => ({ minuteMs, in: i, out })),
    // Traffic-based occupancy needs the platform's traffic spaces and calibration: not from the store alone.
    trafficSpaces: () => [],
    trafficOccupancy: () => [],
  };
  const r = buildResult(model, truth, source, { ticks: 0, packetsSent: 0, batchesSent: 0, sensorSeconds: 0, interrupted: false });
  return { presence: r.presence, traffic: r.traffic };
}

const NO_COUNTERS: CloudCounters = { batchesReceived: 0, batchesProcessed: 0, duplicateBatches: 0, packetsProcessed: 0, packetsStoredBefore: 0, deadLettered: 0, eventsEmitted: 0, lateInWindow: 0, lateBeyondWindow: 0 };
