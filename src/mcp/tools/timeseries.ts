import { z } from 'zod';
import { DAY_MS, HOUR_MS, MINUTE_MS, isoUtc } from '../../core/time.js';
import type { Asset } from '../catalog.js';
import { cancelled } from '../call.js';
import { invalid } from '../errors.js';
import {
  FILTER_KEY,
  PRESENCE_MEASUREMENT,
  TRAFFIC_MEASUREMENT,
  occupancySpaces,
  pointId,
  type ReportPoint,
} from '../occupancy.js';
import { fmt, table } from '../render.js';
import { assetIdsAlias, defineTool, idList, pathOf } from '../tool.js';

/**
 * service_get_occupancy_timeseries: historical occupancy of floors, rooms and zones from the
 * reporting API at 1m, 1h or 1d. Ranges are capped per interval (1m: 24 h, 1h: 31 days, 1d:
 * 366 days) — tighter than the API's own limits, so one answer stays readable. `start` and
 * `stop` take RFC 3339 or a relative offset (`-6h`, `-2d`, `now`) from the platform's present,
 * resolved here because the API takes absolute times only.
 */
const EVERY = { '1m': MINUTE_MS, '1h': HOUR_MS, '1d': DAY_MS } as const;
export const MAX_RANGE_MS = { '1m': DAY_MS, '1h': 31 * DAY_MS, '1d': 366 * DAY_MS } as const;
const TIME = /^(now|-\d{1,4}[mhd]|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))$/;

const input = z
  .object({
    ids: idList('floor, room or zone'),
    start: z
      .string()
      .regex(TIME, 'an RFC 3339 time with offset, or -<n>m|h|d, or now')
      .describe("RFC 3339 (e.g. 2026-03-02T08:00:00Z) or relative to the platform's present (-6h, -2d)"),
    stop: z
      .string()
      .regex(TIME, 'an RFC 3339 time with offset, or -<n>m|h|d, or now')
      .default('now')
      .describe('as start; default now'),
    interval: z
      .enum(['1m', '1h', '1d'])
      .default('1h')
      .describe('window: 1m (range ≤ 24 h), 1h (≤ 31 days), 1d (≤ 366 days)'),
    function: z
      .enum(['max', 'mean', 'median', 'min'])
      .default('max')
      .describe('aggregate over the minutes of a window (default max)'),
    source: z
      .enum(['presence', 'traffic'])
      .default('presence')
      .describe('presence (default) or calibrated traffic-based occupancy (floors and rooms)'),
  })
  .strict();

const series = z.object({
  id: z.string(),
  type: z.enum(['floor', 'room', 'zone']),
  name: z.string(),
  path: z.string(),
  measurement: z.string(),
  points: z.array(z.object({ time: z.string(), value: z.number().nullable() })),
});
const output = z.object({
  start: z.string(),
  stop: z.string(),
  interval: z.string(),
  function: z.string(),
  series: z.array(series),
  total_points: z.number().int(),
});

export function resolveTime(text: string, presentMs: number): number {
  if (text === 'now') return presentMs;
  const rel = /^-(\d+)([mhd])$/.exec(text);
  if (rel) return presentMs - Number(rel[1]) * { m: MINUTE_MS, h: HOUR_MS, d: DAY_MS }[rel[2] as 'm' | 'h' | 'd'];
  const t = Date.parse(text);
  if (!Number.isFinite(t)) throw invalid(`${JSON.stringify(text)} is not a valid time`);
  return t;
}

const aliases = [assetIdsAlias('floor, room or zone')];

/**
 * Points (windows × ids) one reporting request is asked for. A day of 1m windows for 50 rooms
 * is 72,000 points: read in batches of ids, so one upstream answer stays small, the call
 * reports progress per batch and a cancelled call stops between them (issue 28, item 5).
 */
export const POINTS_PER_REQUEST = 5_000;

type Space = Asset & { kind: 'floor' | 'room' | 'zone' };

/** One reporting request per kind and time zone (the API's filter and window), each of at most POINTS_PER_REQUEST points. */
export function batchesOf<S extends Space>(spaces: readonly S[], windows: number): S[][] {
  const perRequest = Math.max(1, Math.floor(POINTS_PER_REQUEST / Math.max(1, windows)));
  const groups = new Map<string, S[]>();
  for (const s of spaces) groups.set(`${s.kind}|${s.timezone}`, [...(groups.get(`${s.kind}|${s.timezone}`) ?? []), s]);
  const out: S[][] = [];
  for (const group of groups.values())
    for (let i = 0; i < group.length; i += perRequest) out.push(group.slice(i, i + perRequest));
  return out;
}

export const getOccupancyTimeseries = defineTool({
  name: 'service_get_occupancy_timeseries',
  title: 'Occupancy time series',
  description:
    'Historical occupancy of up to 50 floors, rooms or zones at 1m, 1h or 1d windows over a time range (1m ≤ 24 h, 1h ≤ 31 days, 1d ≤ 366 days), presence or traffic-based.',
  input,
  output,
  aliases,
  async run(args, ctx, call) {
    const spaces = await occupancySpaces(ctx.catalog, args.ids, call);
    if (args.source === 'traffic' && spaces.some((s) => s.kind === 'zone'))
      throw invalid('traffic-based occupancy exists for floors and rooms only, not zones');
    const present = await ctx.occupancy.present(call);
    const start = resolveTime(args.start, present);
    const stop = resolveTime(args.stop, present);
    if (stop <= start) throw invalid(`stop (${isoUtc(stop)}) must be after start (${isoUtc(start)})`);
    if (stop - start > MAX_RANGE_MS[args.interval])
      throw invalid(
        `at interval ${args.interval} the range is at most ${MAX_RANGE_MS[args.interval] / HOUR_MS} h; got ${((stop - start) / HOUR_MS).toFixed(1)} h — use a coarser interval`,
      );
    if (stop - start < EVERY[args.interval]) throw invalid(`the range is shorter than one ${args.interval} window`);
    const batches = batchesOf(spaces, Math.ceil((stop - start) / EVERY[args.interval]));
    const points = new Map<string, Array<{ time: string; value: number | null }>>();
    const measurementOf = (s: Asset & { kind: 'floor' | 'room' | 'zone' }): string =>
      args.source === 'traffic' ? TRAFFIC_MEASUREMENT[s.kind as 'floor' | 'room'] : PRESENCE_MEASUREMENT[s.kind];
    call.progress.plan(batches.length);
    for (const [i, group] of batches.entries()) {
      // Between batches: a cancelled call reads no further one.
      if (call.signal.aborted) throw cancelled(call.signal);
      const first = group[0] as (typeof spaces)[number];
      const got = await ctx.platform.report<ReportPoint>(
        {
          window: { every: args.interval, function: args.function, timezone: first.timezone },
          filter: {
            measurements: [measurementOf(first)],
            [FILTER_KEY[first.kind]]: { eq: group.map((s) => s.id) },
            start: isoUtc(start),
            stop: isoUtc(stop),
            ...(args.source === 'traffic' ? { calibrated: true } : {}),
          },
        },
        call,
      );
      call.progress.step(`batch ${i + 1} of ${batches.length} read: ${group.length} ${first.kind}(s)`);
      for (const p of got) {
        const id = pointId(p, first.kind);
        if (id !== undefined) points.set(id, [...(points.get(id) ?? []), { time: p.start ?? p.time, value: p.value }]);
      }
    }
    const out = spaces.map((s) => ({
      id: s.id,
      type: s.kind,
      name: s.name,
      path: pathOf(s),
      measurement: measurementOf(s),
      points: points.get(s.id) ?? [],
    }));
    return {
      start: isoUtc(start),
      stop: isoUtc(stop),
      interval: args.interval,
      function: args.function,
      series: out,
      total_points: out.reduce((a, s) => a + s.points.length, 0),
    };
  },
  render(r) {
    const parts = r.series.map(
      (s) =>
        `${s.type} ${s.name} (${s.id}), ${s.measurement}, ${s.points.length} point(s):\n${
          s.points.length > 0
            ? table(
                ['time', 'value'],
                s.points.map((p) => [p.time, fmt(p.value, 2)]),
              )
            : '  no data in the range'
        }`,
    );
    return [`Occupancy ${r.start} → ${r.stop}, ${r.interval} windows, ${r.function}:`, ...parts].join('\n\n');
  },
});
