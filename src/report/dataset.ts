import type { Verdict } from '../run/expectations.js';
import { LocalDays } from '../cloud/local-day.js';
import { zoneOfSpace } from '../cloud/assets.js';
import { floorToMinute, MINUTE_MS } from '../core/time.js';
import type { ReportData } from '../platform/reads.js';
import type { RunResult } from '../run/report.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { TruthRecorder } from '../sim/truth.js';
import { truthSpaces, type TruthSpace } from './truth-file.js';

/**
 * The numbers behind the HTML report, per minute, as plain JSON: what the plots draw and what
 * the page embeds (`<script id="occusim-report-data">`) so a reader, or a test, can check the
 * plots against `--truth` and the store. Built once at the end of a run, deterministic.
 */
export interface SpaceSeries extends TruthSpace {
  floor: string;
  zone: string;
  /** Minute starts (epoch ms), ascending: the minutes the truth observed. */
  minutes: number[];
  truth: number[];
  /** The platform's presence occupancy; null where no sample reached it. */
  presence: Array<number | null> | null;
  /** Traffic occupancy (rooms with counted doors, floors with counted entrances), raw and calibrated. */
  trafficRaw: Array<number | null> | null;
  trafficCalibrated: Array<number | null> | null;
  /** First instants of local days inside the run (traffic occupancy resets to 0 there). */
  resets: number[];
}

export interface DoorSeries {
  sensor: string;
  name: string;
  door: string;
  /** Minute starts, ascending: every minute of the run. */
  minutes: number[];
  measuredIn: number[];
  measuredOut: number[];
  /** True crossings per minute in the sensor's sense. */
  trueIn: number[];
  trueOut: number[];
}

export interface ReportDataset {
  scenario: { name: string; seed: number; start: number; durationMs: number; zone: string };
  /** The first MAX_SPACE_SERIES spaces in report order (all of a building-sized run). */
  spaces: SpaceSeries[];
  /** Spaces in the run: more than `spaces.length` when the series were capped. */
  spacesTotal: number;
  /** The first MAX_DOOR_SERIES traffic sensors. */
  doors: DoorSeries[];
  doorsTotal: number;
  /** Sensing → processed latency histogram, seconds: bucket upper bounds and counts (last: above). */
  latency: { boundsS: number[]; counts: number[] };
  result: RunResult;
  /** The run's thresholds judged against `result` (none: null). */
  verdicts: readonly Verdict[] | null;
}

/**
 * A fleet has thousands of spaces: beyond these the per-minute series stay out of the page
 * (it would weigh hundreds of MB); their figures are in the tables and in --truth.
 */
export const MAX_SPACE_SERIES = 400;
export const MAX_DOOR_SERIES = 200;

const LATENCY_BOUNDS_S = [1, 2, 5, 10, 15, 20, 30, 45, 60, 90, 120, 300];

export function reportDataset(
  model: ScenarioModel,
  truth: TruthRecorder,
  data: ReportData,
  result: RunResult,
  verdicts: readonly Verdict[] | null = null,
): ReportDataset {
  const zoneOf = zoneOfSpace(model);
  const floorNames = new Map(model.floors.map((f) => [f.id, f.name]));
  const all = truthSpaces(model);
  const spaces = all.slice(0, MAX_SPACE_SERIES).map((s): SpaceSeries => {
    const series = [...truth.minuteSeries(s.id)].sort((a, b) => a[0] - b[0]);
    const minutes = series.map(([m]) => m);
    const presence = data.presence[s.id] ?? [];
    const traffic = data.trafficOccupancy[s.id];
    const on = (points: ReadonlyArray<{ minuteMs: number; value: number }>): Array<number | null> => {
      const byMinute = new Map(points.map((p) => [p.minuteMs, p.value]));
      return minutes.map((m) => byMinute.get(m) ?? null);
    };
    const zone = zoneOf(s.id);
    return {
      ...s,
      floor: floorNames.get(s.floorId) ?? '',
      zone,
      minutes,
      truth: series.map(([, v]) => v),
      presence: presence.length > 0 ? on(presence) : null,
      trafficRaw: traffic ? on(traffic.raw) : null,
      trafficCalibrated: traffic ? on(traffic.calibrated) : null,
      resets: resetsIn(zone, minutes),
    };
  });
  return {
    scenario: {
      name: model.name,
      seed: model.seed,
      start: model.startMs,
      durationMs: model.durationMs,
      zone: model.sites[0]?.timezone ?? 'UTC',
    },
    spaces,
    spacesTotal: all.length,
    doors: doorSeries(model, truth, data).slice(0, MAX_DOOR_SERIES),
    doorsTotal: model.sensors.filter((s) => s.mode === 'traffic' && s.doorId !== null).length,
    latency: histogram(data.latenciesMs, LATENCY_BOUNDS_S),
    result,
    verdicts,
  };
}

function resetsIn(zone: string, minutes: readonly number[]): number[] {
  const first = minutes[0];
  const last = minutes.at(-1);
  if (first === undefined || last === undefined) return [];
  const days = new LocalDays(zone);
  const out: number[] = [];
  for (let t = days.nextDayStartOf(first); t <= last; t = days.nextDayStartOf(t)) out.push(t);
  return out;
}

function doorSeries(model: ScenarioModel, truth: TruthRecorder, data: ReportData): DoorSeries[] {
  const doors = new Map(model.doors.map((d) => [d.id, d]));
  const start = floorToMinute(model.startMs);
  const n = Math.ceil((model.startMs + model.durationMs - start) / MINUTE_MS);
  const minutes = Array.from({ length: n }, (_, i) => start + i * MINUTE_MS);
  const out: DoorSeries[] = [];
  for (const s of model.sensors) {
    if (out.length >= MAX_DOOR_SERIES) break;
    const door = s.doorId === null ? undefined : doors.get(s.doorId);
    if (s.mode !== 'traffic' || !door) continue;
    const row = {
      sensor: s.id,
      name: s.name,
      door: door.name,
      minutes,
      measuredIn: new Array<number>(n).fill(0),
      measuredOut: new Array<number>(n).fill(0),
      trueIn: new Array<number>(n).fill(0),
      trueOut: new Array<number>(n).fill(0),
    };
    for (const m of data.traffic[s.id] ?? []) {
      const i = (m.minuteMs - start) / MINUTE_MS;
      if (i < 0 || i >= n) continue;
      row.measuredIn[i] = (row.measuredIn[i] as number) + m.in;
      row.measuredOut[i] = (row.measuredOut[i] as number) + m.out;
    }
    // The sensor counts "in" towards its own room: the door's sense when that room is the door's toRoomId.
    const sameSense = s.roomId === door.toRoomId;
    for (const c of truth.crossings(door.id)) {
      const i = Math.floor((c.atMs - start) / MINUTE_MS);
      if (i < 0 || i >= n) continue;
      const arr = (c.direction === 'in') === sameSense ? row.trueIn : row.trueOut;
      arr[i] = (arr[i] as number) + 1;
    }
    out.push(row);
  }
  return out;
}

/** Latencies held as distinct values and how often each occurred (core/value-counts.ts). */
function histogram(
  latencies: { values: ArrayLike<number>; counts: ArrayLike<number> },
  boundsS: readonly number[],
): ReportDataset['latency'] {
  const counts = new Array<number>(boundsS.length + 1).fill(0);
  for (let i = 0; i < latencies.values.length; i++) {
    const s = (latencies.values[i] as number) / 1000;
    let b = boundsS.findIndex((x) => s <= x);
    if (b < 0) b = boundsS.length;
    counts[b] = (counts[b] as number) + (latencies.counts[i] as number);
  }
  return { boundsS: [...boundsS], counts };
}
