import type { AssetCatalogue } from '../../assets/catalogue.js';
import { applyFunction, r4 } from './aggregate.js';
import { columnsOf, type MinuteColumns } from './columns.js';
import { labelledWindows, passes, readOccupancy, trafficWindowValue, type LabelledWindow } from './report.js';
import { isTrafficOccupancy, type Measurement, type ReportingQuery, type WindowFunction } from './request.js';
import type { MinuteTraffic, SeriesPort } from './series.js';
import { resolveTargets, type Target } from './targets.js';

/**
 * The reporting points of a query in columns: per (measurement, target) one run of points,
 * each point a window index, a field and a value (plus the cumulative traffic fields). The
 * same computation as `computePoints` in report.ts — same order, same arithmetic in the same
 * order, so the same numbers — without one object per point; report-text.ts turns runs into
 * JSON or CSV text. test/api/reporting/point-columns.test.ts holds the two paths equal.
 */
export interface Run {
  measurement: Measurement;
  target: Target;
  /** Number of points in the run. */
  n: number;
  /** Window index of each point. */
  win: Int32Array;
  /** Value of each point; NaN stands for null (a window function never yields NaN). */
  val: Float64Array;
  /** Traffic only: 0 = `in`, 1 = `out` per point, and `in_csum, out_csum, delta_sum, delta_csum` (4 per point). */
  traffic: { field: Uint8Array; cum: Float64Array } | null;
}

export interface ColumnReport {
  windows: LabelledWindow[];
  runs: Run[];
  /** Total number of points over all runs. */
  total: number;
}

export async function computeRuns(
  assets: AssetCatalogue,
  series: SeriesPort,
  orgId: string,
  q: ReportingQuery,
): Promise<ColumnReport> {
  const windows = labelledWindows(q);
  const runs: Run[] = [];
  if (windows.length === 0) return { windows, runs, total: 0 };
  const from = windows[0]!.startMs;
  const to = windows[windows.length - 1]!.stopMs;
  let total = 0;
  for (const m of q.measurements) {
    for (const target of resolveTargets(assets, orgId, q, m)) {
      const run =
        m === 'traffic'
          ? trafficRun(q, windows, target, await series.trafficMinutes(target.seriesId, from, to))
          : occupancyRun(q, windows, m, target, await readColumns(series, q, m, target.seriesId, from, to));
      total += run.n;
      runs.push(run);
    }
  }
  return { windows, runs, total };
}

async function readColumns(
  series: SeriesPort,
  q: ReportingQuery,
  m: Measurement,
  id: string,
  from: number,
  to: number,
): Promise<MinuteColumns> {
  const direct = !isTrafficOccupancy(m) && !(q.fn === 'max' && q.every !== '1m' && series.presenceRollupMax);
  if (direct && series.presenceColumns) return series.presenceColumns(id, from, to);
  return columnsOf(await readOccupancy(series, q, m, id, from, to));
}

const scratch = { buf: new Float64Array(64) };

/** `applyFunction` over `v[a..b)` (b > a) without copying, except for the median's sort. */
function fnRange(fn: WindowFunction, v: Float64Array, a: number, b: number): number {
  if (b - a === 1) return fn === 'mean' || fn === 'sum' ? 0 + (v[a] as number) : (v[a] as number);
  if (fn === 'first') return v[a] as number;
  if (fn === 'last') return v[b - 1] as number;
  if (fn === 'median') return median(v, a, b);
  if (fn === 'max' || fn === 'min') return applyFunction(fn, Array.from(v.subarray(a, b)));
  let s = 0;
  for (let i = a; i < b; i++) s += v[i] as number;
  return fn === 'mean' ? s / (b - a) : s;
}

function median(v: Float64Array, a: number, b: number): number {
  const n = b - a;
  if (scratch.buf.length < n) scratch.buf = new Float64Array(n * 2);
  const s = scratch.buf.subarray(0, n);
  s.set(v.subarray(a, b));
  s.sort();
  const m = n >> 1;
  return n % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

function occupancyRun(
  q: ReportingQuery,
  windows: readonly LabelledWindow[],
  m: Measurement,
  target: Target,
  cols: MinuteColumns,
): Run {
  const win = new Int32Array(windows.length);
  const val = new Float64Array(windows.length);
  const { minuteMs: t, value: v } = cols;
  let n = 0;
  let i = 0;
  let previous: number | null = null;
  for (let k = 0; k < windows.length; k++) {
    const w = windows[k] as LabelledWindow;
    while (i < t.length && (t[i] as number) < w.startMs) i++;
    const a = i;
    while (i < t.length && (t[i] as number) < w.stopMs) i++;
    let value: number | null = i > a ? r4(fnRange(q.fn, v, a, i)) : null;
    if (value === null) {
      if (!q.createEmpty) continue;
      value = q.fill.value ?? (q.fill.usePrevious ? previous : null);
    }
    previous = value;
    if (!passes(q, value)) continue;
    win[n] = k;
    val[n++] = value ?? Number.NaN;
  }
  return { measurement: m, target, n, win, val, traffic: null };
}

function trafficRun(
  q: ReportingQuery,
  windows: readonly LabelledWindow[],
  target: Target,
  rows: readonly MinuteTraffic[],
): Run {
  const win = new Int32Array(windows.length * 2);
  const val = new Float64Array(windows.length * 2);
  const field = new Uint8Array(windows.length * 2);
  const cum = new Float64Array(windows.length * 8);
  let n = 0;
  const push = (k: number, f: number, v: number, c: readonly number[]): void => {
    win[n] = k;
    val[n] = v;
    field[n] = f;
    cum.set(c, n * 4);
    n++;
  };
  // Same walk and cumulative sums as trafficPoints in report.ts (docs/api.md).
  let inCsum = 0;
  let outCsum = 0;
  let r = 0;
  for (let k = 0; k < windows.length; k++) {
    const w = windows[k] as LabelledWindow;
    while (r < rows.length && (rows[r] as MinuteTraffic).minuteMs < w.startMs) r++;
    const b: MinuteTraffic[] = [];
    while (r < rows.length && (rows[r] as MinuteTraffic).minuteMs < w.stopMs) b.push(rows[r++] as MinuteTraffic);
    if (b.length === 0 && !q.createEmpty) continue;
    const vin = trafficWindowValue(q, b, 'in');
    const vout = trafficWindowValue(q, b, 'out');
    inCsum += vin;
    outCsum += vout;
    const c = [r4(inCsum), r4(outCsum), r4(vin - vout), r4(inCsum - outCsum)];
    if (passes(q, vin)) push(k, 0, vin, c);
    if (passes(q, vout)) push(k, 1, vout, c);
  }
  return { measurement: 'traffic', target, n, win, val, traffic: { field, cum } };
}
