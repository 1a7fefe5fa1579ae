import { z } from 'zod';
import { occupancySpaces } from '../occupancy.js';
import { fmt, table } from '../render.js';
import { assetIdsAlias, defineTool, idList, occupiedSpace, pathOf } from '../tool.js';

/**
 * service_get_current_occupancy: the real-time snapshot — the median of each space's last five
 * one-minute values, presence preferred over traffic (occupancy.ts has the rules).
 */
const input = z
  .object({
    ids: idList('floor, room or zone'),
    source: z
      .enum(['auto', 'presence', 'traffic'])
      .default('auto')
      .describe('auto (default): presence when the space has presence data, else traffic-based (calibrated)'),
  })
  .strict();

const minute = z.object({ time: z.string(), value: z.number() });
const space = occupiedSpace.extend({
  minutes: z.array(minute),
});
const output = z.object({ as_of: z.string(), method: z.string(), spaces: z.array(space) });

const aliases = [assetIdsAlias('floor, room or zone')];

export const METHOD = 'median of the last 5 one-minute values before as_of';

export const getCurrentOccupancy = defineTool({
  name: 'service_get_current_occupancy',
  title: 'Current occupancy',
  description:
    'Real-time occupancy of up to 50 floors, rooms or zones: the median of the last 5 one-minute values (presence preferred over traffic), with the minutes it was computed from.',
  input,
  output,
  aliases,
  async run(args, ctx, call) {
    const spaces = await occupancySpaces(ctx.catalog, args.ids, call);
    const { asOf, results } = await ctx.occupancy.current(spaces, args.source, call);
    return {
      as_of: asOf,
      method: METHOD,
      spaces: spaces.map((s, i) => {
        const r = results[i];
        return {
          id: s.id,
          type: s.kind,
          name: s.name,
          path: pathOf(s),
          occupancy: r?.occupancy ?? null,
          source: r?.source ?? null,
          capacity_max: s.capacity?.max ?? null,
          minutes: r?.minutes ?? [],
        };
      }),
    };
  },
  render(r) {
    const rows = r.spaces.map((s) => [
      s.type,
      s.name,
      s.occupancy === null ? 'no data' : fmt(s.occupancy),
      s.source,
      s.capacity_max,
      s.minutes.map((m) => m.value).join(' '),
      s.id,
    ]);
    return `Current occupancy as of ${r.as_of} (${r.method}):\n${table(['type', 'name', 'people', 'source', 'capacity', 'last minutes', 'id'], rows)}`;
  },
});
