import { z } from 'zod';
import type { Asset, AssetKind } from '../catalog.js';
import { matchScore } from '../fuzzy.js';
import { fmt, table } from '../render.js';
import { defineTool, maxResults, pathOf } from '../tool.js';

/**
 * service_search_assets: fuzzy search by name across sites, buildings, floors, rooms, zones,
 * hives and sensors, with typed filters, scored by fuzzy.ts (exact, prefix, word prefix, substring, typos).
 */
const KINDS = ['site', 'building', 'floor', 'room', 'zone', 'hive', 'sensor'] as const;
const DEVICE_KINDS: readonly AssetKind[] = ['hive', 'sensor'];

const input = z
  .object({
    query: z.string().min(2).max(500).describe('name or part of a name (2–500 characters); typos are tolerated'),
    types: z.array(z.enum(KINDS)).min(1).max(KINDS.length).optional().describe('only these asset types (default: all)'),
    within_id: z.string().min(3).max(100).optional().describe('only assets inside this site, building, floor or room'),
    sensor_mode: z
      .enum(['presence', 'traffic'])
      .optional()
      .describe('sensors of this mode only (implies types [sensor])'),
    max_results: maxResults(20, 50),
  })
  .strict();

const hit = z.object({ id: z.string(), type: z.enum(KINDS), name: z.string(), path: z.string(), score: z.number() });
const output = z.object({
  query: z.string(),
  total_matches: z.number().int(),
  results: z.array(hit),
  truncated: z.boolean(),
});

export const searchAssets = defineTool({
  name: 'service_search_assets',
  title: 'Search assets by name',
  description:
    'Fuzzy search of sites, buildings, floors, rooms, zones, hives and sensors by name. Returns ids (for the other tools), types, paths and match scores, best first.',
  input,
  output,
  aliases: [
    {
      to: 'types',
      from: { asset_types: z.array(z.enum(KINDS)).min(1).max(KINDS.length).describe('only these asset types') },
      convert: (g) => g.asset_types,
    },
  ],
  async run(args, ctx, call) {
    const types: readonly AssetKind[] = args.sensor_mode ? ['sensor'] : (args.types ?? KINDS);
    const catalog = types.some((t) => DEVICE_KINDS.includes(t))
      ? await ctx.catalog.withDevices(call)
      : await ctx.catalog.spaces(call);
    let pool: Iterable<Asset> = catalog.assets.values();
    if (args.within_id) {
      const root = (
        await ctx.catalog.resolve(
          [args.within_id],
          ['site', 'building', 'floor', 'room'],
          types.some((t) => DEVICE_KINDS.includes(t)),
          call,
        )
      ).assets[0] as Asset;
      pool = [...catalog.descendants(root.id)].filter((a) => a.id !== root.id);
    }
    const hits: Array<z.infer<typeof hit>> = [];
    // Names repeat across floors (the fleet's 30,300 sensors have a few hundred names): score each once.
    const scored = new Map<string, number>();
    for (const a of pool) {
      if (!types.includes(a.kind)) continue;
      if (args.sensor_mode && a.fields.mode !== args.sensor_mode) continue;
      let byName = scored.get(a.name);
      if (byName === undefined) scored.set(a.name, (byName = matchScore(args.query, a.name)));
      const score = Math.max(byName, a.id === args.query ? 1 : 0);
      if (score > 0)
        hits.push({ id: a.id, type: a.kind as (typeof KINDS)[number], name: a.name, path: pathOf(a), score });
    }
    hits.sort((x, y) => y.score - x.score || x.path.localeCompare(y.path));
    return {
      query: args.query,
      total_matches: hits.length,
      results: hits.slice(0, args.max_results),
      truncated: hits.length > args.max_results,
    };
  },
  render(r) {
    if (r.results.length === 0) return `No asset matches "${r.query}".`;
    const head = `${r.total_matches} match(es) for "${r.query}"${r.truncated ? ` (showing ${r.results.length}; raise max_results or add types/within_id)` : ''}:`;
    return `${head}\n${table(
      ['type', 'name', 'id', 'score', 'path'],
      r.results.map((h) => [h.type, h.name, h.id, fmt(h.score, 2), h.path]),
    )}`;
  },
});
