import type { z } from 'zod';
import type { AssetKind } from './catalog.js';
import { invalid, notFound } from './errors.js';
import { rankByName } from './fuzzy.js';
import type { AliasContext, AnyTool, ToolContext } from './tool.js';

/**
 * The reference server's argument names as aliases of ours (issue 28, item 6): prompts and
 * agent configurations written for the reference (`asset_ids`, `space_id_or_name`,
 * `scope_type`, `floor_id`, `time_window`, `traversal_depth`, `room_fields`, …) work against
 * our tools. Each tool declares its groups (tool.ts, `AliasGroup`); here they are applied before
 * the tool's own strict schema judges the result, so every bound still holds. Giving an alias
 * together with the argument it stands for is refused naming both: which one was meant is
 * not ours to guess.
 */
const KIND_PREFIX: ReadonlyArray<[string, AssetKind]> = [
  ['site_', 'site'],
  ['building_', 'building'],
  ['space_', 'floor'],
  ['floor_', 'floor'],
  ['room_', 'room'],
  ['zone_', 'zone'],
  ['hive_', 'hive'],
  ['sensor_', 'sensor'],
];

/** The kind an id's prefix names (spec §2, "Identifier formats"), or null. */
export function kindByPrefix(id: string): AssetKind | null {
  return KIND_PREFIX.find(([p]) => id.startsWith(p))?.[1] ?? null;
}

const message = (e: z.ZodError): string =>
  e.issues.map((i) => (i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');

/** The arguments with every alias replaced by the argument it stands for. */
export async function applyAliases(
  tool: AnyTool,
  raw: Record<string, unknown>,
  context: () => ToolContext,
): Promise<Record<string, unknown>> {
  const groups = tool.aliases ?? [];
  if (groups.length === 0) return raw;
  const out: Record<string, unknown> = { ...raw };
  const ctx: AliasContext = { args: raw, idOrName: (text, kinds) => idOrName(context(), text, kinds) };
  for (const g of groups) {
    const present = Object.keys(g.from).filter((n) => Object.hasOwn(raw, n) && raw[n] !== undefined);
    if (present.length === 0) continue;
    if (g.to !== null && Object.hasOwn(raw, g.to) && raw[g.to] !== undefined) {
      throw invalid(
        `${tool.name}: ${present.join(' and ')} ${present.length > 1 ? "are the reference server's names" : "is the reference server's name"} for ${g.to}; give ${g.to} or ${present.join('/')}, not both`,
      );
    }
    const given: Record<string, unknown> = {};
    for (const n of present) {
      const parsed = (g.from[n] as z.ZodType).safeParse(raw[n]);
      if (!parsed.success) throw invalid(`${tool.name}: ${n}: ${message(parsed.error)}`);
      given[n] = parsed.data;
      delete out[n];
    }
    const value = await g.convert(given, ctx);
    if (g.to !== null && value !== undefined) out[g.to] = value;
  }
  return out;
}

/** Names of the aliases, in their tool's order (published in the input schema). */
export function aliasNames(tool: AnyTool): string[] {
  return (tool.aliases ?? []).flatMap((g) => Object.keys(g.from));
}

/**
 * An id as given, or the id of the space whose name matches best (fuzzy.ts). Something
 * shaped like an id is passed on untouched, so an unknown one is the tool's NOT_FOUND. A name
 * matched equally well by several spaces is refused with the candidates: picking one would
 * answer about a room the user may not mean.
 */
export async function idOrName(ctx: ToolContext, text: string, kinds: readonly AssetKind[]): Promise<string> {
  if (kindByPrefix(text) !== null && !/\s/.test(text)) return text;
  const devices = kinds.includes('hive') || kinds.includes('sensor');
  const catalog = devices ? await ctx.catalog.withDevices() : await ctx.catalog.spaces();
  const ranked = rankByName(catalog, text, kinds);
  const best = ranked[0];
  if (!best)
    throw notFound(
      `no ${kinds.join('/')} named like ${JSON.stringify(text)} in this organisation; find one with service_search_assets`,
    );
  const tied = ranked.filter((r) => r.score === best.score);
  if (tied.length > 1) {
    const shown = tied.slice(0, 5).map((r) => `${r.asset.path.join(' › ')} (${r.asset.id})`);
    throw invalid(
      `${JSON.stringify(text)} names ${tied.length} ${kinds.join('/')}s equally well: ${shown.join('; ')}${tied.length > 5 ? '; …' : ''}; give an id`,
    );
  }
  return best.asset.id;
}
