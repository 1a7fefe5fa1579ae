import { DateTime } from 'luxon';
import { z } from 'zod';
import { isoUtc } from '../../core/time.js';
import type { Asset } from '../catalog.js';
import { invalid } from '../errors.js';
import type { ReportPoint } from '../occupancy.js';
import { table } from '../render.js';
import { defineTool, idList, spaceIdOrNameAlias, type AliasGroup } from '../tool.js';

/**
 * service_traffic_flow (platform-reference §5): the `traffic` measurement of the traffic-mode
 * sensors in the given spaces, in hourly `sum` windows from local midnight of the sites' time
 * zone (the day traffic counts reset, spec §1) up to the platform's present: totals, net flow
 * (in − out), the hourly breakdown and the peak hour (most crossings, earliest on a tie).
 */
const input = z
  .object({
    ids: idList('site, building, floor, room or traffic sensor'),
    date: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/)
      .optional()
      .describe("local date YYYY-MM-DD (default: today at the platform's present)"),
  })
  .strict();

const counts = { in: z.number(), out: z.number() };
const output = z.object({
  date: z.string(),
  timezone: z.string(),
  from: z.string(),
  to: z.string(),
  sensors: z.array(z.object({ id: z.string(), ...counts })),
  totals: z.object({ ...counts, net: z.number() }),
  hourly: z.array(z.object({ hour: z.string(), start: z.string(), ...counts, net: z.number() })),
  peak_hour: z.object({ hour: z.string(), ...counts, total: z.number() }).nullable(),
});

const FILTER = { building: 'buildings', floor: 'spaces', room: 'rooms', sensor: 'sensors' } as const;

/** Reporting filters for the assets: sites expand to their buildings (the API has no site filter). */
function filters(assets: readonly Asset[]): Record<string, { eq: string[] }> {
  const out: Record<string, { eq: string[] }> = {};
  const add = (key: string, id: string): void => void (out[key] ??= { eq: [] }).eq.push(id);
  for (const a of assets) {
    if (a.kind === 'site') for (const b of a.childIds) add('buildings', b);
    else if (a.kind === 'building' || a.kind === 'floor' || a.kind === 'room' || a.kind === 'sensor')
      add(FILTER[a.kind], a.id);
    else throw invalid(`${a.id} is a ${a.kind}: traffic flow takes sites, buildings, floors, rooms or traffic sensors`);
  }
  return out;
}

const DAY = /^\d{4}-\d{2}-\d{2}/;

/**
 * The reference's names (aliases.ts): one space by id or name, and its time window, of which
 * ours offers whole local days: `today`, or a `custom` start naming a day (its date part).
 * The reference's 20-minute and one-hour windows are refused, naming what is offered.
 */
const aliases: readonly AliasGroup[] = [
  spaceIdOrNameAlias(['site', 'building', 'floor', 'room']),
  {
    to: 'date',
    from: {
      time_window: z.enum(['20m', '1h', 'today', 'custom']).describe('today, or custom with custom_start naming a day'),
      custom_start: z.string().max(40).describe('the day (YYYY-MM-DD, or a time whose date part names it)'),
      custom_stop: z.string().max(40).describe('the same day, if given'),
    },
    convert(g) {
      const window = (g.time_window as string | undefined) ?? (g.custom_start !== undefined ? 'custom' : 'today');
      const start = g.custom_start as string | undefined;
      const stop = g.custom_stop as string | undefined;
      if (window === '20m' || window === '1h')
        throw invalid(
          `service_traffic_flow: time_window ${window} is not offered; this tool counts whole local days from midnight (date, default today)`,
        );
      if (window === 'today') {
        if (start !== undefined || stop !== undefined)
          throw invalid('service_traffic_flow: custom_start and custom_stop need time_window custom');
        return undefined;
      }
      if (start === undefined || !DAY.test(start))
        throw invalid(
          'service_traffic_flow: time_window custom needs custom_start naming a day (YYYY-MM-DD…); relative times are not offered',
        );
      if (stop !== undefined && stop !== 'now' && stop.slice(0, 10) !== start.slice(0, 10))
        throw invalid(
          'service_traffic_flow: custom_stop must be on the day of custom_start; this tool counts one local day',
        );
      return start.slice(0, 10);
    },
  },
];

export const trafficFlow = defineTool({
  name: 'service_traffic_flow',
  title: 'Traffic flow',
  description:
    'Entries and exits counted by traffic-mode sensors in the given spaces for a local day (default today): hourly in/out from local midnight, totals, net flow and the peak hour.',
  input,
  output,
  aliases,
  async run(args, ctx, call) {
    const withSensors = args.ids.some((id) => id.startsWith('sensor_'));
    const { assets } = await ctx.catalog.resolve(
      args.ids,
      ['site', 'building', 'floor', 'room', 'sensor'],
      withSensors,
      call,
    );
    const zones = new Set(assets.map((a) => a.timezone));
    if (zones.size > 1) throw invalid(`the spaces must share one time zone; got ${[...zones].join(', ')}`);
    const zone = [...zones][0] as string;
    const present = await ctx.occupancy.present(call);
    const day = args.date ? DateTime.fromISO(args.date, { zone }) : DateTime.fromMillis(present, { zone });
    if (!day.isValid) throw invalid(`date ${JSON.stringify(args.date)} is not a valid date`);
    const start = day.startOf('day').toMillis();
    const stop = Math.min(day.startOf('day').plus({ days: 1 }).toMillis(), present);
    if (stop <= start) throw invalid(`${day.toISODate()} has not begun at the platform's present (${isoUtc(present)})`);
    call.progress.plan(1);
    const points = await ctx.platform.report<ReportPoint>(
      {
        window: { every: '1h', function: 'sum', timezone: zone },
        filter: { measurements: ['traffic'], ...filters(assets), start: isoUtc(start), stop: isoUtc(stop) },
      },
      call,
    );
    call.progress.step('traffic counts read');
    const hours = new Map<string, { start: string; in: number; out: number }>();
    const sensors = new Map<string, { in: number; out: number }>();
    for (const p of points) {
      if (p.value === null || (p.field !== 'in' && p.field !== 'out')) continue;
      const t = p.start ?? p.time;
      const h = hours.get(t) ?? { start: t, in: 0, out: 0 };
      h[p.field] += p.value;
      hours.set(t, h);
      const s = sensors.get(p.sensor_id ?? '?') ?? { in: 0, out: 0 };
      s[p.field] += p.value;
      sensors.set(p.sensor_id ?? '?', s);
    }
    const hourly = [...hours.values()]
      .sort((a, b) => Date.parse(a.start) - Date.parse(b.start))
      .map((h) => ({
        hour: DateTime.fromISO(h.start, { zone }).toFormat('HH:mm'),
        start: h.start,
        in: h.in,
        out: h.out,
        net: h.in - h.out,
      }));
    const totalIn = hourly.reduce((a, h) => a + h.in, 0);
    const totalOut = hourly.reduce((a, h) => a + h.out, 0);
    const peak = hourly.reduce<(typeof hourly)[number] | null>(
      (best, h) => (best === null || h.in + h.out > best.in + best.out ? h : best),
      null,
    );
    return {
      date: day.toISODate() ?? '',
      timezone: zone,
      from: isoUtc(start),
      to: isoUtc(stop),
      sensors: [...sensors].map(([id, c]) => ({ id, ...c })).sort((a, b) => a.id.localeCompare(b.id)),
      totals: { in: totalIn, out: totalOut, net: totalIn - totalOut },
      hourly,
      peak_hour:
        peak && peak.in + peak.out > 0
          ? { hour: peak.hour, in: peak.in, out: peak.out, total: peak.in + peak.out }
          : null,
    };
  },
  render(r) {
    const head = `Traffic on ${r.date} (${r.timezone}), ${r.from} → ${r.to}, ${r.sensors.length} traffic sensor(s): in ${r.totals.in}, out ${r.totals.out}, net ${r.totals.net}`;
    const peak = r.peak_hour
      ? `peak hour ${r.peak_hour.hour}: ${r.peak_hour.total} crossings (in ${r.peak_hour.in}, out ${r.peak_hour.out})`
      : 'no crossings';
    return [
      head,
      peak,
      table(
        ['hour', 'in', 'out', 'net'],
        r.hourly.map((h) => [h.hour, h.in, h.out, h.net]),
      ),
    ].join('\n');
  },
});
