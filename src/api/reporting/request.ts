import { RETENTION_MS } from '../../cloud/rollup.js';
import { isValidZone } from '../../core/time.js';
import { invalidRequest } from '../errors.js';
import { refuseUnknownKeys } from './known-keys.js';
import { durationMs, parseInstant } from './times.js';

/**
 * The reporting request (platform-reference §3; spec §4.4, §8), validated whole before any
 * data is read: unknown values, `window.offset`, and ranges beyond an interval's limit are
 * 400s with a message that says the rule.
 */
export const EVERY_MS = {
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '30m': 1_800_000,
  '1h': 3_600_000,
  '1d': 86_400_000,
} as const;
export type Every = keyof typeof EVERY_MS;

const DAY = 86_400_000;
/** Longest `stop - start` per interval (docs/api.md): finer data is kept for shorter spans. */
export const MAX_RANGE_MS: Record<Every, number> = {
  '1m': 2 * DAY,
  '5m': 14 * DAY,
  '15m': 31 * DAY,
  '30m': 62 * DAY,
  '1h': 93 * DAY,
  '1d': 1096 * DAY,
};

export const FUNCTIONS = ['mean', 'max', 'min', 'sum', 'first', 'last', 'median'] as const;
export type WindowFunction = (typeof FUNCTIONS)[number];

export const MEASUREMENTS = [
  'floor_occupancy',
  'room_occupancy',
  'zone_occupancy',
  'traffic',
  'traffic_floor_occupancy',
  'traffic_room_occupancy',
] as const;
export type Measurement = (typeof MEASUREMENTS)[number];

/** The occupancies counted from door lines (calibration applies to these only). */
export const isTrafficOccupancy = (m: Measurement): m is 'traffic_floor_occupancy' | 'traffic_room_occupancy' =>
  m === 'traffic_floor_occupancy' || m === 'traffic_room_occupancy';

export const ID_FILTERS = ['spaces', 'rooms', 'zones', 'buildings', 'sensors', 'hives', 'tags'] as const;
export type IdFilter = (typeof ID_FILTERS)[number];

/** The keys each object of the body may carry (platform-reference §3); any other is a 400. */
const KNOWN = {
  body: ['window', 'filter', 'group_by', 'paginate', 'options', 'calibration_points', 'calibrationPoints'],
  // offset is known so that it gets its own answer (spec §9: no longer supported).
  window: ['every', 'function', 'timezone', 'create_empty', 'fill', 'offset'],
  fill: ['use_previous', 'value'],
  filter: [
    'measurements',
    'start',
    'stop',
    ...ID_FILTERS,
    'value',
    'calibrated',
    'calibration_points',
    'calibrationPoints',
    'time_constraints',
  ],
  idList: ['eq'],
  value: ['gte', 'lte', 'gt', 'lt'],
  constraints: ['time_ranges', 'exclude_days_of_week'],
  range: ['start', 'stop'],
  point: ['timestamp', 'occupancy', 'type'],
  groupBy: ['order', 'raw'],
  paginate: ['page', 'limit'],
  options: ['format', 'timestamp'],
} as const;

const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

export interface ValueFilter {
  gte?: number;
  lte?: number;
  gt?: number;
  lt?: number;
}

export interface ReportingQuery {
  every: Every;
  fn: WindowFunction;
  timezone: string;
  createEmpty: boolean;
  fill: { usePrevious: boolean; value: number | null };
  measurements: Measurement[];
  startMs: number;
  stopMs: number;
  ids: Partial<Record<IdFilter, string[]>>;
  value: ValueFilter | null;
  calibrated: 'calibrated' | 'raw';
  calibrationPoints: Array<{ timestampMs: number; occupancy: number }>;
  /** Local wall-clock ranges in minutes after midnight, [start, stop). */
  timeRanges: Array<{ startMin: number; stopMin: number }>;
  /** ISO weekday numbers (1 = Monday) to leave out. */
  excludeDays: number[];
  groupBy: { order: string[]; raw: boolean } | null;
  page: { page: number; limit: number } | null;
  format: 'json' | 'csv';
}

type Obj = Record<string, unknown>;

/** An object of the body, whose keys must be among `known` (`path` names it in messages). */
function obj(x: unknown, path: string, known: readonly string[]): Obj {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) throw invalidRequest(`${path} must be an object`);
  refuseUnknownKeys(x as Obj, known, path === 'the body' ? '' : path);
  return x as Obj;
}

function optObj(x: unknown, path: string, known: readonly string[]): Obj | null {
  return x === undefined || x === null ? null : obj(x, path, known);
}

function oneOf<T extends string>(x: unknown, allowed: readonly T[], path: string): T {
  if (typeof x !== 'string' || !(allowed as readonly string[]).includes(x))
    throw invalidRequest(`${path} must be one of ${allowed.join(', ')}`);
  return x as T;
}

/**
 * `window.every`: one of the allowed intervals (spec §8) in any spelling of the same length
 * (`60s` = `1m`, `60m` = `1h`, `24h` = `1d`, platform-reference §3); every other interval,
 * `7m` among them, is refused.
 */
function parseEvery(x: unknown): Every {
  const allowed = Object.keys(EVERY_MS) as Every[];
  const ms = typeof x === 'string' ? durationMs(x.trim()) : null;
  const every = allowed.find((k) => EVERY_MS[k] === ms);
  if (every === undefined)
    throw invalidRequest(
      `window.every must be one of ${allowed.join(', ')} (or the same interval spelled otherwise, such as 60s), got ${JSON.stringify(x)}`,
    );
  return every;
}

function idList(x: unknown, path: string): string[] {
  const eq = obj(x, path, KNOWN.idList).eq;
  if (!Array.isArray(eq) || eq.length === 0 || !eq.every((v) => typeof v === 'string'))
    throw invalidRequest(`${path}.eq must be a non-empty array of ids`);
  return eq as string[];
}

function clockMinutes(x: unknown, path: string): number {
  const m = typeof x === 'string' ? /^([01]\d|2[0-4]):([0-5]\d)$/.exec(x) : null;
  if (!m) throw invalidRequest(`${path} must be HH:MM`);
  return Number(m[1]) * 60 + Number(m[2]);
}

function parseWindow(w: Obj): Pick<ReportingQuery, 'every' | 'fn' | 'timezone' | 'createEmpty' | 'fill'> {
  if (w.offset !== undefined) throw invalidRequest('window.offset is no longer supported');
  const every = parseEvery(w.every);
  const fn =
    w.function === undefined ? (every === '1m' ? 'median' : 'max') : oneOf(w.function, FUNCTIONS, 'window.function');
  const timezone = w.timezone === undefined ? 'UTC' : String(w.timezone);
  if (!isValidZone(timezone))
    throw invalidRequest(`window.timezone ${JSON.stringify(timezone)} is not an IANA time zone`);
  const fill = optObj(w.fill, 'window.fill', KNOWN.fill);
  const value = fill?.value;
  if (value !== undefined && value !== null && typeof value !== 'number')
    throw invalidRequest('window.fill.value must be a number');
  return {
    every,
    fn,
    timezone,
    createEmpty: w.create_empty === true,
    fill: { usePrevious: fill?.use_previous === true, value: typeof value === 'number' ? value : null },
  };
}

function parseCalibrated(x: unknown): 'calibrated' | 'raw' {
  if (x === undefined || x === false || x === 'false' || x === 'raw') return 'raw';
  if (x === true || x === 'true') return 'calibrated';
  throw invalidRequest('filter.calibrated must be true, "true", "raw" or false');
}

function parseConstraints(x: unknown): Pick<ReportingQuery, 'timeRanges' | 'excludeDays'> {
  const c = optObj(x, 'filter.time_constraints', KNOWN.constraints);
  if (!c) return { timeRanges: [], excludeDays: [] };
  const ranges = c.time_ranges === undefined ? [] : c.time_ranges;
  if (!Array.isArray(ranges)) throw invalidRequest('filter.time_constraints.time_ranges must be an array');
  const timeRanges = ranges.map((r, i) => {
    const o = obj(r, `filter.time_constraints.time_ranges[${i}]`, KNOWN.range);
    const range = {
      startMin: clockMinutes(o.start, `time_ranges[${i}].start`),
      stopMin: clockMinutes(o.stop, `time_ranges[${i}].stop`),
    };
    if (range.stopMin <= range.startMin) throw invalidRequest(`time_ranges[${i}]: stop must be after start`);
    return range;
  });
  const days = c.exclude_days_of_week === undefined ? [] : c.exclude_days_of_week;
  if (!Array.isArray(days)) throw invalidRequest('filter.time_constraints.exclude_days_of_week must be an array');
  const excludeDays = days.map((d, i) => {
    const n = DAYS.indexOf(String(d).toLowerCase() as (typeof DAYS)[number]);
    if (n < 0) throw invalidRequest(`exclude_days_of_week[${i}] must be a day name like "Wednesday"`);
    return n + 1;
  });
  return { timeRanges, excludeDays };
}

/**
 * `nowMs`: the platform's present, which relative times and an omitted `stop` are read
 * against (docs/api.md, "now"); null: both are refused.
 */
export function parseReportingRequest(body: unknown, nowMs: number | null = null): ReportingQuery {
  const b = obj(body, 'the body', KNOWN.body);
  const window = parseWindow(obj(b.window, 'window', KNOWN.window));
  const f = obj(b.filter, 'filter', KNOWN.filter);
  if (!Array.isArray(f.measurements) || f.measurements.length === 0)
    throw invalidRequest('filter.measurements must be a non-empty array');
  const measurements = f.measurements.map((m, i) => oneOf(m, MEASUREMENTS, `filter.measurements[${i}]`));
  const startMs = parseInstant(f.start, 'filter.start', nowMs);
  // An omitted stop is now (platform-reference §3): "from start up to now".
  if ((f.stop === undefined || f.stop === null) && nowMs === null)
    throw invalidRequest('filter.stop is required here (no platform clock to read "now" from)');
  const stopMs =
    f.stop === undefined || f.stop === null ? (nowMs as number) : parseInstant(f.stop, 'filter.stop', nowMs);
  if (stopMs <= startMs) throw invalidRequest('filter.stop must be after filter.start');
  const limit = MAX_RANGE_MS[window.every];
  if (stopMs - startMs > limit) {
    throw invalidRequest(
      `the time range for window.every=${window.every} is at most ${limit / DAY} day(s); got ${((stopMs - startMs) / DAY).toFixed(2)} days — use a coarser interval`,
    );
  }
  if (nowMs !== null) refuseBeyondRetention(window.every, startMs, nowMs);
  const ids: ReportingQuery['ids'] = {};
  for (const key of ID_FILTERS) if (f[key] !== undefined) ids[key] = idList(f[key], `filter.${key}`);
  const calibrated = parseCalibrated(f.calibrated);
  if (f.calibrated !== undefined && f.calibrated !== false && !measurements.every(isTrafficOccupancy)) {
    throw invalidRequest('filter.calibrated applies only to traffic_floor_occupancy and traffic_room_occupancy');
  }
  // Both spellings, in the body or in the filter (published clients send either).
  const points = b.calibration_points ?? f.calibration_points ?? b.calibrationPoints ?? f.calibrationPoints;
  const calibrationPoints = points === undefined || points === null ? [] : parsePoints(points, nowMs);
  const g = optObj(b.group_by, 'group_by', KNOWN.groupBy);
  const p = optObj(b.paginate, 'paginate', KNOWN.paginate);
  const options = optObj(b.options, 'options', KNOWN.options);
  return {
    ...window,
    measurements,
    startMs,
    stopMs,
    ids,
    value: parseValue(f.value),
    calibrated,
    calibrationPoints,
    ...parseConstraints(f.time_constraints),
    groupBy: g ? { order: Array.isArray(g.order) ? g.order.map(String) : [], raw: g.raw === true } : null,
    page: p ? parsePage(p) : null,
    format: options?.format === undefined ? 'json' : oneOf(options.format, ['json', 'csv'] as const, 'options.format'),
  };
}

/**
 * Spec §8: "older data is available only at coarser intervals". A start older than the
 * interval's retention (cloud/rollup.ts RETENTION_MS, measured back from the platform's
 * present) would answer nothing where the data was pruned, which reads as "nobody was there":
 * a 400 instead, naming the coarser intervals that reach that far back.
 */
function refuseBeyondRetention(every: Every, startMs: number, nowMs: number): void {
  const keep = RETENTION_MS[every];
  if (startMs >= nowMs - keep) return;
  const age = nowMs - startMs;
  const reaching = (Object.keys(EVERY_MS) as Every[])
    .filter((e) => RETENTION_MS[e] >= age)
    .map((e) =>
      Number.isFinite(RETENTION_MS[e]) ? `${e} (kept ${RETENTION_MS[e] / DAY} days)` : `${e} (kept for ever)`,
    );
  throw invalidRequest(
    `window.every=${every} data is kept for ${keep / DAY} days, back to ${new Date(nowMs - keep).toISOString()}; filter.start ${new Date(startMs).toISOString()} is ${(age / DAY).toFixed(2)} days before the platform's present — intervals that reach that far: ${reaching.join(', ')}, with window.function max`,
  );
}

/** `[{timestamp, occupancy, type?}]`; `type` (the reference's kind of point, e.g. manual) is accepted and not used. */
function parsePoints(x: unknown, nowMs: number | null): ReportingQuery['calibrationPoints'] {
  if (!Array.isArray(x)) throw invalidRequest('calibration_points must be an array');
  return x.map((p, i) => {
    const o = obj(p, `calibration_points[${i}]`, KNOWN.point);
    if (typeof o.occupancy !== 'number' || o.occupancy < 0)
      throw invalidRequest(`calibration_points[${i}].occupancy must be a number >= 0`);
    if (o.type !== undefined && typeof o.type !== 'string')
      throw invalidRequest(`calibration_points[${i}].type must be a string`);
    return {
      timestampMs: parseInstant(o.timestamp, `calibration_points[${i}].timestamp`, nowMs),
      occupancy: o.occupancy,
    };
  });
}

function parseValue(x: unknown): ValueFilter | null {
  const v = optObj(x, 'filter.value', KNOWN.value);
  if (!v) return null;
  const out: ValueFilter = {};
  for (const k of ['gte', 'lte', 'gt', 'lt'] as const) {
    if (v[k] === undefined) continue;
    if (typeof v[k] !== 'number') throw invalidRequest(`filter.value.${k} must be a number`);
    out[k] = v[k];
  }
  return out;
}

function parsePage(p: Obj): { page: number; limit: number } {
  const page = p.page ?? 1;
  const limit = p.limit ?? 1000;
  if (!Number.isInteger(page) || (page as number) < 1) throw invalidRequest('paginate.page must be an integer >= 1');
  if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > 10_000)
    throw invalidRequest('paginate.limit must be an integer in 1..10000');
  return { page: page as number, limit: limit as number };
}
