import { z } from 'zod';
import type { Asset, AssetKind, Catalog } from './catalog.js';
import { rankByName } from './fuzzy.js';
import { PROMPTS, type Completes } from './prompts.js';
import { TEMPLATES } from './resources.js';
import { paramsOf, type RawHandler } from './rpc.js';
import type { ToolContext } from './tool.js';

/**
 * `completion/complete` (issue 28, item 3): prompt arguments and resource-template variables.
 * Assets are ranked by the search tool's fuzzy score (fuzzy.ts) over the caller's
 * organisation's catalogue only; at most MAX_VALUES are returned, with the total and
 * `hasMore`. A prompt argument is completed with the asset's name when no other asset of its
 * kinds has that name (prompts take ids or names), else with its id; a template variable is
 * always an id (the URI needs one). A reference we do not know gets no values: completion is
 * advice, and the spec lets a server offer none.
 */
export const MAX_VALUES = 20;
const MAX_INPUT = 200;

const params = z.object({
  ref: z.discriminatedUnion('type', [
    z.object({ type: z.literal('ref/prompt'), name: z.string().max(100) }),
    z.object({ type: z.literal('ref/resource'), uri: z.string().max(500) }),
  ]),
  argument: z.object({ name: z.string().max(100), value: z.string().max(MAX_INPUT) }),
  context: z.object({ arguments: z.record(z.string(), z.string()).optional() }).optional(),
});

interface Completion {
  values: string[];
  total: number;
  hasMore: boolean;
}

const none: Completion = { values: [], total: 0, hasMore: false };

function bounded(values: readonly string[]): Completion {
  return { values: values.slice(0, MAX_VALUES), total: values.length, hasMore: values.length > MAX_VALUES };
}

/** Assets of the kinds matching the typed text best first; with nothing typed, all of them in tree order. */
function ranked(catalog: Catalog, text: string, kinds: readonly AssetKind[]): Asset[] {
  if (text.trim() === '') return [...catalog.assets.values()].filter((a) => kinds.includes(a.kind));
  return rankByName(catalog, text, kinds).map((r) => r.asset);
}

async function complete(ctx: ToolContext, how: Completes, text: string, as: 'name' | 'id'): Promise<Completion> {
  if ('values' in how) return bounded(how.values.filter((v) => v.startsWith(text.trim().toLowerCase())));
  const devices = how.kinds.includes('hive') || how.kinds.includes('sensor');
  const catalog = devices ? await ctx.catalog.withDevices() : await ctx.catalog.spaces();
  const assets = ranked(catalog, text, how.kinds);
  if (as === 'id') return bounded(assets.map((a) => a.id));
  const named = new Map<string, number>();
  for (const a of catalog.assets.values())
    if (how.kinds.includes(a.kind)) named.set(a.name, (named.get(a.name) ?? 0) + 1);
  return bounded([...new Set(assets.map((a) => (named.get(a.name) === 1 ? a.name : a.id)))]);
}

export function completionHandlers(context: () => ToolContext): Record<string, RawHandler> {
  return {
    'completion/complete': async (raw) => {
      const { ref, argument } = paramsOf(params, raw, 'completion/complete');
      if (ref.type === 'ref/prompt') {
        const arg = PROMPTS.find((p) => p.name === ref.name)?.arguments.find((a) => a.name === argument.name);
        return { completion: arg ? await complete(context(), arg.complete, argument.value, 'name') : none };
      }
      const template = TEMPLATES.find((t) => t.uriTemplate === ref.uri);
      if (!template || argument.name !== 'id') return { completion: none };
      return { completion: await complete(context(), { kinds: template.kinds }, argument.value, 'id') };
    },
  };
}
