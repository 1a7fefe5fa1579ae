import { DateTime } from 'luxon';
import { z } from 'zod';
import type { Asset } from '../catalog.js';
import { occupancySpaces, type Source } from '../occupancy.js';
import type { Call } from '../call.js';
import type { Platform } from '../platform.js';
import { fmt, table } from '../render.js';
import { defineTool, idList, occupiedSpace, pathOf, spaceIdOrNameAlias, type AliasGroup } from '../tool.js';

/**
 * service_space_busyness (platform-reference §5): utilisation = current occupancy /
 * capacity.max × 100, labelled quiet (< 30) / moderate / busy (≥ 70), thresholds from the
 * settings; no capacity → label null and a warning. The trend compares current occupancy
 * with the stats API's 28-day average: lighter below −15 %, busier above +15 %, else typical.
 *
 * Differs from the reference on purpose (docs/mcp.md): the reference reads its average from a
 * field the stats API does not return (so its trend is always missing); we read
 * `data[id][occupancy_avg_<source>]`, the field the API answers. And the average is taken over
 * the same local hour of the day on the 28 days up to and including today, because a
 * whole-day average (nights included) makes every working hour look "busier".
 */
const TREND_BAND_PCT = 15;

const input = z.object({ ids: idList('floor, room or zone') }).strict();

const space = occupiedSpace.extend({
  utilisation_pct: z.number().nullable(),
  label: z.enum(['quiet', 'moderate', 'busy']).nullable(),
  average_28d: z.number().nullable(),
  trend: z.enum(['lighter', 'typical', 'busier']).nullable(),
  trend_pct: z.number().nullable(),
  warnings: z.array(z.string()),
});
const output = z.object({
  as_of: z.string(),
  thresholds: z.object({ quiet_below_pct: z.number(), busy_from_pct: z.number() }),
  trend_basis: z.string(),
  spaces: z.array(space),
});

export function label(utilisation: number, quietBelow: number, busyFrom: number): 'quiet' | 'moderate' | 'busy' {
  return utilisation < quietBelow ? 'quiet' : utilisation < busyFrom ? 'moderate' : 'busy';
}

export function trendOf(
  current: number,
  average: number,
): { trend: 'lighter' | 'typical' | 'busier'; pct: number | null } {
  if (average === 0) return { trend: current > 0 ? 'busier' : 'typical', pct: null };
  const pct = ((current - average) / average) * 100;
  return {
    trend: pct < -TREND_BAND_PCT ? 'lighter' : pct > TREND_BAND_PCT ? 'busier' : 'typical',
    pct: Math.round(pct * 10) / 10,
  };
}

/** The 28-day average at the present's local hour, per space, from one stats call per zone and source. */
async function averages(
  platform: Platform,
  spaces: ReadonlyArray<{ asset: Asset; source: Source }>,
  presentMs: number,
  call: Call,
): Promise<Map<string, number | null>> {
  const groups = new Map<string, Array<{ asset: Asset; source: Source }>>();
  for (const s of spaces)
    groups.set(`${s.asset.timezone}|${s.source}`, [...(groups.get(`${s.asset.timezone}|${s.source}`) ?? []), s]);
  const out = new Map<string, number | null>();
  call.progress.plan(groups.size);
  for (const [key, group] of groups) {
    const [zone, source] = key.split('|') as [string, Source];
    const now = DateTime.fromMillis(presentMs, { zone });
    const measurement = `occupancy_avg_${source}`;
    const hh = (h: number): string => `${String(h).padStart(2, '0')}:00`;
    const data = await platform.stats(
      {
        measurements: [measurement],
        items: group.map((g) => g.asset.id),
        start: now.minus({ days: 27 }).toISODate(),
        stop: now.plus({ days: 1 }).toISODate(),
        filters: { time_ranges: [{ start: hh(now.hour), stop: hh(now.hour + 1) }] },
      },
      call,
    );
    call.progress.step(`28-day averages of ${group.length} space(s) read`);
    for (const g of group) out.set(g.asset.id, data[g.asset.id]?.[measurement] ?? null);
  }
  return out;
}

/** The reference's names (aliases.ts): one space by id or name; its trend switch (the trend is always given). */
const aliases: readonly AliasGroup[] = [
  spaceIdOrNameAlias(['floor', 'room', 'zone']),
  { to: null, from: { include_trend: z.boolean().describe('the trend is always given') }, convert: () => undefined },
];

export const spaceBusyness = defineTool({
  name: 'service_space_busyness',
  title: 'Space busyness',
  description:
    'How busy floors, rooms or zones are now: occupancy, utilisation of capacity with a quiet/moderate/busy label, and the trend against the 28-day average at this hour (lighter/typical/busier).',
  input,
  output,
  aliases,
  async run(args, ctx, call) {
    const spaces = await occupancySpaces(ctx.catalog, args.ids, call);
    const { asOf, results } = await ctx.occupancy.current(spaces, 'auto', call);
    // The hour of the newest minute the snapshot used (as_of is the exclusive end of its window).
    const present = Date.parse(asOf) - 60_000;
    const measured = spaces.flatMap((asset, i) => (results[i]?.source ? [{ asset, source: results[i].source }] : []));
    const avg = await averages(ctx.platform, measured, present, call);
    const { quietBelowPct, busyFromPct } = ctx.settings;
    return {
      as_of: asOf,
      thresholds: { quiet_below_pct: quietBelowPct, busy_from_pct: busyFromPct },
      trend_basis: 'stats occupancy_avg over the same local hour on the 28 days up to today',
      spaces: spaces.map((s, i) => {
        const r = results[i];
        const occupancy = r?.occupancy ?? null;
        const cap = s.capacity?.max ?? null;
        const warnings: string[] = [];
        if (occupancy === null) warnings.push('no occupancy data in the last minutes');
        if (cap === null || cap <= 0) warnings.push('no capacity set: utilisation and label unavailable');
        const utilisation =
          occupancy !== null && cap !== null && cap > 0 ? Math.round((occupancy / cap) * 1000) / 10 : null;
        const average = avg.get(s.id) ?? null;
        if (occupancy !== null && average === null) warnings.push('no 28-day average for this hour: trend unavailable');
        const t = occupancy !== null && average !== null ? trendOf(occupancy, average) : null;
        return {
          id: s.id,
          type: s.kind,
          name: s.name,
          path: pathOf(s),
          occupancy,
          source: r?.source ?? null,
          capacity_max: cap,
          utilisation_pct: utilisation,
          label: utilisation === null ? null : label(utilisation, quietBelowPct, busyFromPct),
          average_28d: average,
          trend: t?.trend ?? null,
          trend_pct: t?.pct ?? null,
          warnings,
        };
      }),
    };
  },
  render(r) {
    const rows = r.spaces.map((s) => [
      s.name,
      fmt(s.occupancy),
      s.capacity_max,
      s.utilisation_pct === null ? null : `${fmt(s.utilisation_pct)}%`,
      s.label,
      fmt(s.average_28d, 2),
      s.trend === null
        ? null
        : `${s.trend}${s.trend_pct === null ? '' : ` (${s.trend_pct > 0 ? '+' : ''}${s.trend_pct}%)`}`,
      s.id,
    ]);
    const warn = r.spaces.flatMap((s) => s.warnings.map((w) => `  ${s.name}: ${w}`));
    return [
      `Busyness as of ${r.as_of} (quiet < ${r.thresholds.quiet_below_pct}% ≤ moderate < ${r.thresholds.busy_from_pct}% ≤ busy; trend vs ${r.trend_basis}):`,
      table(['space', 'people', 'capacity', 'utilisation', 'label', '28-day avg', 'trend', 'id'], rows),
      ...(warn.length > 0 ? ['warnings:', ...warn] : []),
    ].join('\n');
  },
});
