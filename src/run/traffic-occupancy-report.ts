import type { ReportSource } from './report-source.js';
import { LocalDays } from '../cloud/local-day.js';
import { round } from '../core/stats.js';
import { MINUTE_MS } from '../core/time.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { TruthRecorder } from '../sim/truth.js';

/**
 * Traffic occupancy (raw and calibrated) against true occupancy, for the run report: error
 * per minute, and the drift at the end of each local day (last minute before the reset).
 */
export interface TrafficOccupancyAccuracy {
  id: string;
  name: string;
  kind: 'room' | 'floor';
  minutes: number;
  /** Daily resets (first instants of local days) inside the run. */
  resets: number;
  maeRaw: number;
  maeCalibrated: number;
  /** Σ |value − truth| over the last minute of every local day that ends inside the run. */
  endOfDayDriftRaw: number;
  endOfDayDriftCalibrated: number;
}

export interface TrafficOccupancyResult {
  spaces: TrafficOccupancyAccuracy[];
  /** 1 − Σ calibrated drift / Σ raw drift at ends of day; null when raw has no end-of-day drift to reduce. */
  endOfDayDriftReduction: number | null;
}

export function trafficOccupancyAccuracy(
  model: ScenarioModel,
  truth: TruthRecorder,
  cloud: ReportSource,
  zoneOf: (id: string) => string,
): TrafficOccupancyResult {
  const names = new Map([...model.rooms, ...model.floors].map((s) => [s.id, s.name] as const));
  const spaces = cloud.trafficSpaces().map((space): TrafficOccupancyAccuracy => {
    const days = new LocalDays(zoneOf(space.spaceId));
    const trueSeries = truth.minuteSeries(space.spaceId);
    const raw = cloud.trafficOccupancy(space.spaceId, false);
    const cal = cloud.trafficOccupancy(space.spaceId, true);
    let minutes = 0;
    let errRaw = 0;
    let errCal = 0;
    let eodRaw = 0;
    let eodCal = 0;
    let resets = 0;
    raw.forEach((p, i) => {
      const t = trueSeries.get(p.minuteMs);
      const c = cal[i]?.value ?? 0;
      if (i > 0 && days.dayStartOf(p.minuteMs) !== days.dayStartOf(p.minuteMs - MINUTE_MS)) resets++;
      if (t === undefined) return;
      minutes++;
      errRaw += Math.abs(p.value - t);
      errCal += Math.abs(c - t);
      if (days.nextDayStartOf(p.minuteMs) === p.minuteMs + MINUTE_MS) {
        eodRaw += Math.abs(p.value - t);
        eodCal += Math.abs(c - t);
      }
    });
    return {
      id: space.spaceId,
      name: names.get(space.spaceId) ?? space.spaceId,
      kind: space.kind,
      minutes,
      resets,
      maeRaw: minutes ? round(errRaw / minutes) : 0,
      maeCalibrated: minutes ? round(errCal / minutes) : 0,
      endOfDayDriftRaw: round(eodRaw),
      endOfDayDriftCalibrated: round(eodCal),
    };
  });
  const raw = spaces.reduce((a, s) => a + s.endOfDayDriftRaw, 0);
  const cal = spaces.reduce((a, s) => a + s.endOfDayDriftCalibrated, 0);
  return { spaces, endOfDayDriftReduction: raw === 0 ? null : round(1 - cal / raw) };
}
