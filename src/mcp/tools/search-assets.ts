import { z } from 'zod';
import type { Asset, AssetKind } from '../catalog.js';
import { fmt, table } from '../render.js';
import { defineTool, maxResults, pathOf } from '../tool.js';

/**
 * service_search_assets: fuzzy search by name across sites, buildings, floors, rooms, zones,
 * hives and sensors, with typed filters. Score 1 for an exact name, then prefix, word prefix,
 * substring, and finally bigram similarity (Dice) for misspellings; below 0.45 is no match.
 */
const KINDS = ['site', 'building', 'floor', 'room', 'zone', 'hive', 'sensor'] as const;
const DEVICE_KINDS: readonly AssetKind[] = ['hive', 'sensor'];

const input = z
  .object({
    query: z.string().min(2).max(500).describe('name or part of a name (2–500 characters); typos are tolerated'),
    types: z.array(z.enum(KINDS)).min(1).max(KINDS.length).optional().describe('only these asset types (default: all)'),
    within_id: z.string().min(3).max(100).optional().describe('only assets inside this site, building, floor or room'),
    sensor_mode: z.enum(['presence', 'traffic']).optional().describe('sensors of this mode only (implies types [sensor])'),
    max_results: maxResults(20, 50),
  })
  .strict();

const hit = z.object({ id: z.string(), type: z.enum(KINDS), name: z.string(), path: z.string(), score: z.number() });
const output = z.object({ query: z.string(), total_matches: z.number().int(), results: z.array(hit), truncated: z.boolean() });

const norm = (s: string): string => s.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  const t = ` ${s} `;
  for (let i = 0; i < t.length - 1; i++) m.set(t.slice(i, i + 2), (m.get(t.slice(i, i + 2)) ?? 0) + 1);
  return m;
}

function dice(a: Map<string, number>, b: Map<string, number>): number {
  let common = 0;
  let total = 0;
  for (const [g, n] of a) {
    common += Math.min(n, b.get(g) ?? 0);
    total += n;
  }
  for (const n of b.values()) total += n;
  return total === 0 ? 0 : (2 * common) / total;
}

export function matchScore(query: string, name: string): number {
  const q = norm(query);
  const n = norm(name);
  if (q === '' || n === '') return 0;
  if (n === q) return 1;
  if (n.startsWith(q)) return 0.9;
  if (n.split(' ').some((w) => w.startsWith(q))) return 0.8;
  if (n.includes(q)) return 0.7;
  // Best bigram similarity against the whole name or any run of as many words as the query has.
  const words = n.split(' ');
  const span = Math.max(1, q.split(' ').length);
  const qb = bigrams(q);
  let best = dice(qb, bigrams(n));
  for (let i = 0; i + span <= words.length; i++) best = Math.max(best, dice(qb, bigrams(words.slice(i, i + span).join(' '))));
  return best >= 0.45 ? Math.round(best * 0.65 * 1000) / 1000 : 0;
}

export const searchAssets = defineTool({
  name: 'service_search_assets',
  title: 'Search assets by name',
  description: 'Fuzzy search of sites, buildings, floors, rooms, zones, hives and sensors by name. Returns ids (for the other tools), types, paths and match scores, best first.',
  input,
  output,
  async run(args, ctx) {
    const types: readonly AssetKind[] = args.sensor_mode ? ['sensor'] : args.types ?? KINDS;
    const catalog = types.some((t) => DEVICE_KINDS.includes(t)) ? await ctx.catalog.withDevices() : await ctx.catalog.spaces();
    let pool: Iterable<Asset> = catalog.assets.values();
    if (args.within_id) {
      const root = (await ctx.catalog.resolve([args.within_id], ['site', 'building', 'floor', 'room'], types.some((t) => DEVICE_KINDS.includes(t)))).assets[0] as Asset;
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
      if (score > 0) hits.push({ id: a.id, type: a.kind as (typeof KINDS)[number], name: a.name, path: pathOf(a), score });
    }
    hits.sort((x, y) => y.score - x.score || x.path.localeCompare(y.path));
    return { query: args.query, total_matches: hits.length, results: hits.slice(0, args.max_results), truncated: hits.length > args.max_results };
  },
  render(r) {
    if (r.results.length === 0) return `No asset matches "${r.query}".`;
    const head = `${r.total_matches} match(es) for "${r.query}"${r.truncated ? ` (showing ${r.results.length}; raise max_results or add types/within_id)` : ''}:`;
    return `${head}\n${table(['type', 'name', 'id', 'score', 'path'], r.results.map((h) => [h.type, h.name, h.id, fmt(h.score, 2), h.path]))}`;
  },
});
