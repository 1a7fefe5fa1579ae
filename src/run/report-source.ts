import { MINUTE_MS } from '../core/time.js';
import { ValueCounts } from '../core/value-counts.js';
import type { ReportData, ReportRequest } from '../platform/reads.js';
import type { ScenarioModel } from '../scenario/model.js';

/** What the report reads from the platform: the spaces and traffic sensors of the scenario, over its whole period. */
export function reportRequest(model: ScenarioModel): ReportRequest {
  return {
    spaceIds: [...model.floors, ...model.rooms, ...model.zones].map((s) => s.id),
    trafficSensorIds: model.sensors.filter((s) => s.mode === 'traffic').map((s) => s.id),
    fromMs: Math.floor(model.startMs / MINUTE_MS) * MINUTE_MS,
    toMs: model.startMs + model.durationMs,
  };
}

/** The platform's answer to `reportRequest`, read the way the accuracy figures read it. */
export interface ReportSource {
  counters(): ReportData['counters'];
  latenciesMs(): ValueCounts;
  presenceMinutes(spaceId: string): ReportData['presence'][string];
  trafficMinutes(sensorId: string): ReportData['traffic'][string];
  trafficSpaces(): ReportData['trafficSpaces'];
  trafficOccupancy(spaceId: string, calibrated: boolean): ReportData['trafficOccupancy'][string]['raw'];
}

export function reportSource(d: ReportData): ReportSource {
  const latencies = ValueCounts.fromArrays(d.latenciesMs);
  return {
    counters: () => d.counters,
    latenciesMs: () => latencies,
    presenceMinutes: (id) => d.presence[id] ?? [],
    trafficMinutes: (id) => d.traffic[id] ?? [],
    trafficSpaces: () => d.trafficSpaces,
    trafficOccupancy: (id, calibrated) =>
      (calibrated ? d.trafficOccupancy[id]?.calibrated : d.trafficOccupancy[id]?.raw) ?? [],
  };
}
