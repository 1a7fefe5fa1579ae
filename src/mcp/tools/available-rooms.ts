import { z } from 'zod';
import type { Asset } from '../catalog.js';
import { invalid } from '../errors.js';
import { table } from '../render.js';
import { defineTool, maxResults, pathOf, scopeId, type AliasGroup } from '../tool.js';

/**
 * service_available_rooms (platform-reference §5): rooms whose current occupancy is exactly 0,
 * filtered by capacity and tags (`tag_match` all|any), sorted by capacity descending (rooms
 * without a capacity last, then by path). Rooms with no data are left out and counted.
 */
const input = z
  .object({
    scope_id: scopeId(),
    min_capacity: z
      .number()
      .int()
      .min(0)
      .max(100_000)
      .optional()
      .describe('at least this capacity.max (rooms without a capacity are then left out)'),
    max_capacity: z.number().int().min(0).max(100_000).optional().describe('at most this capacity.max'),
    tags: z
      .array(z.string().min(1).max(100))
      .min(1)
      .max(20)
      .optional()
      .describe('tag names or ids the room must carry'),
    tag_match: z.enum(['all', 'any']).default('all').describe('all (default): every tag; any: at least one'),
    max_results: maxResults(20, 100),
  })
  .strict()
  .refine((a) => a.min_capacity === undefined || a.max_capacity === undefined || a.min_capacity <= a.max_capacity, {
    message: 'min_capacity must not exceed max_capacity',
  });

const room = z.object({
  id: z.string(),
  name: z.string(),
  path: z.string(),
  capacity_max: z.number().nullable(),
  capacity_mid: z.number().nullable(),
  tags: z.array(z.string()),
  source: z.enum(['presence', 'traffic']).nullable(),
});
const output = z.object({
  as_of: z.string(),
  rooms: z.array(room),
  total_available: z.number().int(),
  rooms_considered: z.number().int(),
  rooms_without_data: z.number().int(),
  truncated: z.boolean(),
});

function tagged(r: Asset, wanted: readonly string[] | undefined, mode: 'all' | 'any'): boolean {
  if (!wanted) return true;
  const has = (t: string): boolean => r.tags.some((x) => x.id === t || x.name.toLowerCase() === t.toLowerCase());
  return mode === 'all' ? wanted.every(has) : wanted.some(has);
}

/** The reference's scope arguments (aliases.ts): a building or a floor, one of them. */
const aliases: readonly AliasGroup[] = [
  {
    to: 'scope_id',
    from: {
      building_id: z
        .string()
        .regex(/^building_\S+$/, 'a building id (building_…)')
        .max(100),
      floor_id: z
        .string()
        .regex(/^(floor|space)_\S+$/, 'a floor id (space_…)')
        .max(100),
    },
    convert(g) {
      if (g.building_id !== undefined && g.floor_id !== undefined)
        throw invalid(
          'service_available_rooms: building_id and floor_id both set the scope; give one (the floor alone, if it is in that building)',
        );
      return g.floor_id ?? g.building_id;
    },
  },
];

export const availableRooms = defineTool({
  name: 'service_available_rooms',
  title: 'Available rooms',
  description:
    'Rooms that are empty right now (current occupancy exactly 0), filtered by capacity and tags, largest first. Rooms without recent data are not listed.',
  input,
  output,
  aliases,
  async run(args, ctx, call) {
    const { assets } = await ctx.catalog.inScope(args.scope_id, false, call);
    const candidates = assets.filter((r) => {
      if (r.kind !== 'room' || !tagged(r, args.tags, args.tag_match)) return false;
      const cap = r.capacity?.max ?? null;
      if (args.min_capacity !== undefined && (cap === null || cap < args.min_capacity)) return false;
      return !(args.max_capacity !== undefined && cap !== null && cap > args.max_capacity);
    });
    const { asOf, results } = await ctx.occupancy.current(candidates, 'auto', call);
    const free = candidates.filter((_, i) => results[i]?.occupancy === 0);
    free.sort((a, b) => (b.capacity?.max ?? -1) - (a.capacity?.max ?? -1) || pathOf(a).localeCompare(pathOf(b)));
    const source = new Map(results.map((r) => [r.id, r.source]));
    return {
      as_of: asOf,
      rooms: free.slice(0, args.max_results).map((r) => ({
        id: r.id,
        name: r.name,
        path: pathOf(r),
        capacity_max: r.capacity?.max ?? null,
        capacity_mid: r.capacity?.mid ?? null,
        tags: r.tags.map((t) => t.name),
        source: source.get(r.id) ?? null,
      })),
      total_available: free.length,
      rooms_considered: candidates.length,
      rooms_without_data: results.filter((r) => r.occupancy === null).length,
      truncated: free.length > args.max_results,
    };
  },
  render(r) {
    const head = `${r.total_available} of ${r.rooms_considered} room(s) empty as of ${r.as_of}${r.rooms_without_data > 0 ? ` (${r.rooms_without_data} without recent data left out)` : ''}`;
    if (r.rooms.length === 0) return head;
    return `${head}:\n${table(
      ['room', 'capacity', 'tags', 'path', 'id'],
      r.rooms.map((x) => [x.name, x.capacity_max, x.tags.join(', ') || null, x.path, x.id]),
    )}${r.truncated ? '\n… more: raise max_results' : ''}`;
  },
});
