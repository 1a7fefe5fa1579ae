import { localMinuteOfDay } from '../core/time.js';
import type { CalibrationPointModel, ScenarioModel } from './model.js';

const DAY_MIN = 24 * 60;

/**
 * The scenario's timeline moved to start at `startMs` (`--start now`): what happened at the
 * scenario's start happens at the new one. Instants (faults, calibration points) move by the
 * difference; daily clock times (arrivals, departures, meetings) by the difference in local
 * time of day of the first site, so a feed started in the afternoon sees people arrive as
 * they would at the scenario's 08:00, not an empty building until the next morning.
 * Credentials do not change: they were derived from the file's own start and the seed.
 */
export function retimeModel(model: ScenarioModel, startMs: number): ScenarioModel {
  const deltaMs = startMs - model.startMs;
  if (deltaMs === 0) return model;
  const zone = model.sites[0]?.timezone ?? 'UTC';
  const deltaMin = localMinuteOfDay(startMs, zone) - localMinuteOfDay(model.startMs, zone);
  const clock = (min: number): number => (((min + deltaMin) % DAY_MIN) + DAY_MIN) % DAY_MIN;
  const points = (ps: CalibrationPointModel[] | undefined): { calibrationPoints?: CalibrationPointModel[] } =>
    ps === undefined ? {} : { calibrationPoints: ps.map((p) => ({ ...p, timestampMs: p.timestampMs + deltaMs })) };
  return {
    ...model,
    startMs,
    populations: model.populations.map((p) => ({
      ...p,
      arrival: { ...p.arrival, meanMin: clock(p.arrival.meanMin) },
      departure: { ...p.departure, meanMin: clock(p.departure.meanMin) },
    })),
    meetings: model.meetings.map((m) => ({ ...m, atMin: clock(m.atMin) })),
    floors: model.floors.map((f) => ({ ...f, ...points(f.calibrationPoints) })),
    rooms: model.rooms.map((r) => ({ ...r, ...points(r.calibrationPoints) })),
    ...(model.faults === undefined ? {} : { faults: model.faults.map((f) => ({ ...f, atMs: f.atMs + deltaMs })) }),
  };
}
