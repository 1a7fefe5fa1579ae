import { z } from 'zod';
import type { Clock } from '../core/clock.js';
import type { CallScope } from './cache.js';
import type { Call } from './call.js';
import type { AssetKind, CatalogCache } from './catalog.js';
import type { EventLog } from './events.js';
import type { OccupancyReader } from './occupancy.js';
import type { Platform } from './platform.js';
import type { McpSettings } from './settings.js';
import type { Watcher } from './watch.js';

/**
 * One tool: strict input and output schemas (zod, published as JSON Schema), the work, and a
 * text rendering of the same result for assistants that read text only. Everything a tool
 * reaches goes through the context's read-only platform client.
 */
export interface ToolContext {
  platform: Platform;
  /** Numbers tool calls, so caches reuse a read within one call (cache.ts). */
  scope: CallScope;
  catalog: CatalogCache;
  occupancy: OccupancyReader;
  settings: McpSettings;
  clock: Clock;
  /** The server's own events, forwarded to clients as log messages (events.ts). */
  events: EventLog;
  /** Resource subscriptions and catalogue changes (watch.ts). */
  watch: Watcher;
}

/** What an alias's conversion may use (aliases.ts). */
export interface AliasContext {
  /** The call's arguments as the caller gave them. */
  args: Readonly<Record<string, unknown>>;
  /** An id of one of the kinds from an id or a name (the best fuzzy match; ambiguous or none: an error). */
  idOrName(text: string, kinds: readonly AssetKind[]): Promise<string>;
}

/**
 * The reference server's argument names for one of ours (issue 28, item 6): each name has its
 * own schema (so its errors name it), and `convert` turns the values given into ours. `to:
 * null` is accepted for compatibility and changes nothing in the answer (`convert` may still
 * refuse a value we cannot honour). A call that gives an alias with `to` is refused.
 */
export interface AliasGroup {
  to: string | null;
  from: Readonly<Record<string, z.ZodType>>;
  convert(given: Record<string, unknown>, ctx: AliasContext): unknown;
}

export interface ToolDef<I extends z.ZodObject, O extends z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  /** The reference server's argument names, as aliases of ours. */
  aliases?: readonly AliasGroup[];
  /**
   * The work. `call` is this request's own (call.ts): its cancellation, which every upstream
   * read is given, and its progress, one step per upstream read.
   */
  run(args: z.infer<I>, ctx: ToolContext, call: Call): Promise<z.infer<O>>;
  render(result: z.infer<O>): string;
}

// The registry holds tools of different shapes; each is checked against its own types where defined.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDef<any, any>;

export const defineTool = <I extends z.ZodObject, O extends z.ZodObject>(t: ToolDef<I, O>): ToolDef<I, O> => t;

/** Shared input pieces, with the bounds of platform-reference §5. */
/** A space and its current occupancy, as the busyness and current-occupancy tools both answer it. */
export const occupiedSpace = z.object({
  id: z.string(),
  type: z.enum(['floor', 'room', 'zone']),
  name: z.string(),
  path: z.string(),
  occupancy: z.number().nullable(),
  source: z.enum(['presence', 'traffic']).nullable(),
  capacity_max: z.number().nullable(),
});

export const idList = (what: string) =>
  z
    .array(z.string().min(3).max(100))
    .min(1)
    .max(50)
    .refine((ids) => new Set(ids).size === ids.length, { message: 'ids must be unique' })
    .describe(`1–50 unique ${what} ids`);

/** A tool's optional scope (`CatalogCache.inScope`). */
export const scopeId = () =>
  z.string().min(3).max(100).optional().describe('a site, building or floor id (default: the whole organisation)');

export const maxResults = (fallback: number, max = 100) =>
  z
    .number()
    .int()
    .min(1)
    .max(max)
    .default(fallback)
    .describe(`at most this many results (1–${max}, default ${fallback})`);

export const ref = z.object({ id: z.string(), type: z.string(), name: z.string() });
export const assetRef = (a: { id: string; kind: string; name: string }): z.infer<typeof ref> => ({
  id: a.id,
  type: a.kind,
  name: a.name,
});
export const pathOf = (a: { path: string[] }): string => a.path.join(' › ');

/** The reference's name for `ids` (aliases.ts). */
export const assetIdsAlias = (what: string): AliasGroup => ({
  to: 'ids',
  from: { asset_ids: idList(what) },
  convert: (g) => g.asset_ids,
});

/** The reference's `space_id_or_name`: one id, or a name matched as the search tool does (aliases.ts). */
export const spaceIdOrNameAlias = (kinds: readonly AssetKind[]): AliasGroup => ({
  to: 'ids',
  from: {
    space_id_or_name: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .describe(`a ${kinds.join(', ')} id, or its name (the best match; a tie is refused)`),
  },
  convert: async (g, ctx) => [await ctx.idOrName(g.space_id_or_name as string, kinds)],
});
