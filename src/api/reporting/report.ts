import type { AssetCatalogue } from '../../assets/catalogue.js';
import { applyFunction, r4 } from './aggregate.js';
import { isTrafficOccupancy, type Measurement, type ReportingQuery } from './request.js';
import type { MinuteTraffic, MinuteValue, SeriesPort } from './series.js';
import { resolveTargets, type Target } from './targets.js';
import { localParts, offsetText, rfc3339, windowsBetween, type Window } from './windows.js';

/**
 * Computes the flat list of reporting points for a validated query: per measurement, per
 * target, per window, the window function over the minutes inside it; then empty windows,
 * fill, value filter and time constraints. Grouping, paging and formats come after.
 */
export type Point = Record<string, string | number | null>;

/** A window with its labels formatted once (formatting per point would dominate large reports). */
export interface LabelledWindow extends Window {
  labels: { time: string; start: string; stop: string; timezone_offset: string };
}

/** The query's windows after time constraints, labels formatted. @internal */
export function labelledWindows(q: ReportingQuery): LabelledWindow[] {
  return windowsBetween(q.startMs, q.stopMs, q.every, q.timezone)
    .filter((w) => keepWindow(q, w))
    .map((w) => {
      const start = rfc3339(w.startMs, q.timezone);
      return {
        ...w,
        labels: {
          time: start,
          start,
          stop: rfc3339(w.stopMs, q.timezone),
          timezone_offset: offsetText(w.startMs, q.timezone),
        },
      };
    });
}

export async function computePoints(
  assets: AssetCatalogue,
  series: SeriesPort,
  orgId: string,
  q: ReportingQuery,
): Promise<Point[]> {
  const windows = labelledWindows(q);
  if (windows.length === 0) return [];
  const from = windows[0]!.startMs;
  const to = windows[windows.length - 1]!.stopMs;
  const points: Point[] = [];
  for (const m of q.measurements) {
    for (const target of resolveTargets(assets, orgId, q, m)) {
      // One read per target, awaited in turn: the points keep the query's order.
      if (m === 'traffic')
        trafficPoints(points, q, windows, target, await series.trafficMinutes(target.seriesId, from, to));
      else occupancyPoints(points, q, windows, m, target, await readOccupancy(series, q, m, target.seriesId, from, to));
    }
  }
  return points;
}

/** Where an occupancy measurement's minutes (or coarse rollup rows) come from. @internal */
export async function readOccupancy(
  series: SeriesPort,
  q: ReportingQuery,
  m: Measurement,
  id: string,
  from: number,
  to: number,
): Promise<readonly MinuteValue[]> {
  if (isTrafficOccupancy(m)) return series.trafficOccupancyMinutes(id, from, to, q.calibrated, q.calibrationPoints);
  // max over a coarse window is the store's rollup of that window: read one row per window
  // (and windows older than the minutes' retention exist only there).
  if (q.fn === 'max' && q.every !== '1m' && series.presenceRollupMax) {
    const rows = await series.presenceRollupMax(id, q.every, q.timezone, from, to);
    if (rows !== null) return rows;
  }
  return series.presenceMinutes(id, from, to);
}

/** A window's in or out count: `q.fn` over its minutes, the fill value for a window without any. @internal */
export function trafficWindowValue(q: ReportingQuery, minutes: readonly MinuteTraffic[], side: 'in' | 'out'): number {
  if (minutes.length === 0) return q.fill.value ?? 0;
  return r4(
    applyFunction(
      q.fn,
      minutes.map((m) => m[side]),
    ),
  );
}

function keepWindow(q: ReportingQuery, w: Window): boolean {
  if (q.timeRanges.length === 0 && q.excludeDays.length === 0) return true;
  const { minute, weekday } = localParts(w.startMs, q.timezone);
  if (q.excludeDays.includes(weekday)) return false;
  return q.timeRanges.length === 0 || q.timeRanges.some((r) => minute >= r.startMin && minute < r.stopMin);
}

/** `create_empty` and the value filter: whether a window's point is returned. @internal */
export function passes(q: ReportingQuery, v: number | null): boolean {
  if (v === null || !q.value) return v !== null || q.createEmpty;
  const f = q.value;
  return (
    (f.gte === undefined || v >= f.gte) &&
    (f.lte === undefined || v <= f.lte) &&
    (f.gt === undefined || v > f.gt) &&
    (f.lt === undefined || v < f.lt)
  );
}

function base(m: Measurement, w: LabelledWindow, target: Target, field: string): Point {
  return { field, measurement: m, ...w.labels, ...target.meta };
}

/** Walks sorted minute rows once across sorted windows. */
function bucket<T extends { minuteMs: number }>(rows: readonly T[], windows: readonly Window[]): T[][] {
  const out: T[][] = windows.map(() => []);
  let i = 0;
  for (let k = 0; k < windows.length; k++) {
    const w = windows[k] as Window;
    while (i < rows.length && (rows[i] as T).minuteMs < w.startMs) i++;
    while (i < rows.length && (rows[i] as T).minuteMs < w.stopMs) (out[k] as T[]).push(rows[i++] as T);
  }
  return out;
}

function occupancyPoints(
  out: Point[],
  q: ReportingQuery,
  windows: readonly LabelledWindow[],
  m: Measurement,
  target: Target,
  rows: readonly MinuteValue[],
): void {
  let previous: number | null = null;
  const buckets = bucket(rows, windows);
  windows.forEach((w, k) => {
    const values = (buckets[k] as MinuteValue[]).map((r) => r.value);
    let value: number | null = values.length > 0 ? r4(applyFunction(q.fn, values)) : null;
    if (value === null) {
      if (!q.createEmpty) return;
      value = q.fill.value ?? (q.fill.usePrevious ? previous : null);
    }
    previous = value;
    if (passes(q, value)) out.push({ ...base(m, w, target, 'value'), value });
  });
}

function trafficPoints(
  out: Point[],
  q: ReportingQuery,
  windows: readonly LabelledWindow[],
  target: Target,
  rows: readonly MinuteTraffic[],
): void {
  // Cumulative fields run from the start of the requested range (docs/api.md).
  let inCsum = 0;
  let outCsum = 0;
  const buckets = bucket(rows, windows);
  windows.forEach((w, k) => {
    const b = buckets[k] as MinuteTraffic[];
    if (b.length === 0 && !q.createEmpty) return;
    const vin = trafficWindowValue(q, b, 'in');
    const vout = trafficWindowValue(q, b, 'out');
    inCsum += vin;
    outCsum += vout;
    const cum = {
      in_csum: r4(inCsum),
      out_csum: r4(outCsum),
      delta_sum: r4(vin - vout),
      delta_csum: r4(inCsum - outCsum),
    };
    if (passes(q, vin)) out.push({ ...base('traffic', w, target, 'in'), value: vin, ...cum });
    if (passes(q, vout)) out.push({ ...base('traffic', w, target, 'out'), value: vout, ...cum });
  });
}
