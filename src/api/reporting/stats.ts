import type { FastifyInstance } from 'fastify';
import { DateTime } from 'luxon';
import type { AssetCatalogue } from '../../assets/catalogue.js';
import { authenticate } from '../auth/guard.js';
import type { TokenService } from '../auth/tokens.js';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { invalidRequest } from '../errors.js';
import { refuseInvalid, routeOptions } from '../route-schemas.js';
import { refuseUnknownKeys } from './known-keys.js';
import { medianOf, r4 } from './aggregate.js';
import type { MinuteValue, SeriesPort } from './series.js';
import { isRelative, parseInstant } from './times.js';
import { localParts } from './windows.js';

/**
 * `POST /api/v4/reporting/stats` (platform-reference §3): aggregate occupancy of floors,
 * rooms and zones over local dates. Measurements `occupancy_{avg|median|used_avg|used_median}_
 * {presence|traffic}` over per-minute values; `used_` leaves out unoccupied minutes (value 0);
 * traffic statistics use calibrated traffic occupancy; items must share one time zone;
 * start and stop are local dates (`YYYY-MM-DD`) or RFC 3339 timestamps, stop exclusive;
 * relative times are refused.
 */
const STAT = /^occupancy_(avg|median|used_avg|used_median)_(presence|traffic)$/;
const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const MAX_DAYS = 366;
/** The keys the body and its filters may carry (platform-reference §3); any other is a 400. */
const KNOWN = {
  body: ['measurements', 'items', 'start', 'stop', 'filters'],
  filters: ['time_ranges', 'exclude_days_of_week'],
  range: ['start', 'stop'],
} as const;

interface StatsDeps {
  assets: AssetCatalogue;
  tokens: TokenService;
  series: SeriesPort;
}

type Obj = Record<string, unknown>;

/**
 * `start`/`stop`: a date (the local day's first instant in the items' zone) or any RFC 3339
 * timestamp (published clients send `2026-10-27T14:36:00.000Z`); relative times are refused
 * (platform-reference §3).
 */
function statsInstant(x: unknown, field: string, zone: string): number {
  if (typeof x === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(x)) {
    const d = DateTime.fromISO(x, { zone });
    if (!d.isValid) throw invalidRequest(`${field} is not a valid date`);
    return d.startOf('day').toMillis();
  }
  if (typeof x === 'string' && isRelative(x))
    throw invalidRequest(
      `${field}: relative times are not supported by stats; give a date YYYY-MM-DD or an RFC 3339 timestamp`,
    );
  if (typeof x !== 'string') throw invalidRequest(`${field} must be a date YYYY-MM-DD or an RFC 3339 timestamp`);
  return parseInstant(x, field, null);
}

function floorOf(assets: AssetCatalogue, orgId: string, id: string): string | undefined {
  if (assets.get('floor', orgId, id)) return id;
  return assets.get('room', orgId, id)?.floorId ?? assets.get('zone', orgId, id)?.floorId;
}

function filterMinutes(rows: readonly MinuteValue[], zone: string, filters: Obj | null): number[] {
  const ranges = Array.isArray(filters?.time_ranges) ? (filters.time_ranges as Obj[]) : [];
  const parsed = ranges.map((r, i) => {
    const m = (v: unknown): number => {
      const t = typeof v === 'string' ? /^([01]\d|2[0-4]):([0-5]\d)$/.exec(v) : null;
      if (!t) throw invalidRequest(`filters.time_ranges[${i}] start and stop must be HH:MM`);
      return Number(t[1]) * 60 + Number(t[2]);
    };
    return { start: m(r.start), stop: m(r.stop) };
  });
  const excluded = (
    Array.isArray(filters?.exclude_days_of_week) ? (filters.exclude_days_of_week as unknown[]) : []
  ).map((d) => {
    const n = DAYS.indexOf(String(d).toLowerCase());
    if (n < 0) throw invalidRequest(`filters.exclude_days_of_week: ${JSON.stringify(d)} is not a day name`);
    return n + 1;
  });
  const out: number[] = [];
  for (const r of rows) {
    if (parsed.length === 0 && excluded.length === 0) {
      out.push(r.value);
      continue;
    }
    const { minute, weekday } = localParts(r.minuteMs, zone);
    if (excluded.includes(weekday)) continue;
    if (parsed.length > 0 && !parsed.some((p) => minute >= p.start && minute < p.stop)) continue;
    out.push(r.value);
  }
  return out;
}

function knownFilters(x: unknown): Obj {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) throw invalidRequest('filters must be an object');
  const f = x as Obj;
  refuseUnknownKeys(f, KNOWN.filters, 'filters');
  if (f.time_ranges !== undefined && !Array.isArray(f.time_ranges))
    throw invalidRequest('filters.time_ranges must be an array');
  if (f.exclude_days_of_week !== undefined && !Array.isArray(f.exclude_days_of_week))
    throw invalidRequest('filters.exclude_days_of_week must be an array');
  for (const [i, r] of ((f.time_ranges as unknown[] | undefined) ?? []).entries()) {
    if (typeof r !== 'object' || r === null || Array.isArray(r))
      throw invalidRequest(`filters.time_ranges[${i}] must be an object`);
    refuseUnknownKeys(r as Obj, KNOWN.range, `filters.time_ranges[${i}]`);
  }
  return f;
}

function statistic(kind: string, values: number[]): number | null {
  const used = kind.startsWith('used_') ? values.filter((v) => v > 0) : values;
  if (used.length === 0) return null;
  return r4(kind.endsWith('median') ? medianOf(used) : used.reduce((a, b) => a + b, 0) / used.length);
}

export function registerStatsRoutes(app: FastifyInstance, deps: StatsDeps): void {
  app.post('/api/v4/reporting/stats', routeOptions('POST /api/v4/reporting/stats'), async (req) => {
    const p = await authenticate(req, deps.tokens);
    refuseInvalid(req);
    const b = req.body as Obj | null;
    if (typeof b !== 'object' || b === null) throw invalidRequest('the body must be a JSON object');
    refuseUnknownKeys(b, KNOWN.body, '');
    const filters = b.filters === undefined ? null : knownFilters(b.filters);
    const measurements = b.measurements;
    if (!Array.isArray(measurements) || measurements.length === 0)
      throw invalidRequest('measurements must be a non-empty array');
    for (const m of measurements)
      if (typeof m !== 'string' || !STAT.test(m))
        throw invalidRequest(
          `unknown measurement ${JSON.stringify(m)}: use occupancy_{avg|median|used_avg|used_median}_{presence|traffic}`,
        );
    const items = b.items;
    if (!Array.isArray(items) || items.length === 0 || !items.every((i) => typeof i === 'string'))
      throw invalidRequest('items must be a non-empty array of floor, room or zone ids');
    const floors = (items as string[]).map((id) => {
      const f = floorOf(deps.assets, p.orgId, id);
      if (!f) throw new AppError(ErrorCodes.NOT_FOUND, `floor, room or zone ${id} does not exist`);
      return f;
    });
    const zones = new Set(floors.map((f) => deps.assets.timezoneOf(f)));
    if (zones.size > 1) throw invalidRequest(`items must share one time zone; got ${[...zones].join(', ')}`);
    const zone = [...zones][0] as string;
    const start = statsInstant(b.start, 'start', zone);
    const stop = statsInstant(b.stop, 'stop', zone);
    if (stop <= start) throw invalidRequest('stop must be after start');
    if (stop - start > MAX_DAYS * 86_400_000 + 3_600_000) throw invalidRequest(`the range is at most ${MAX_DAYS} days`);
    const data: Record<string, Record<string, number | null>> = {};
    for (const id of items as string[]) {
      const row: Record<string, number | null> = {};
      for (const m of measurements as string[]) {
        const [, kind, source] = STAT.exec(m) as unknown as [string, string, string];
        const rows =
          source === 'presence'
            ? await deps.series.presenceMinutes(id, start, stop)
            : await deps.series.trafficOccupancyMinutes(id, start, stop, 'calibrated', []);
        row[m] = statistic(kind, filterMinutes(rows, zone, filters));
      }
      data[id] = row;
    }
    return { data };
  });
}
