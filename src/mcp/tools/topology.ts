import { z } from 'zod';
import type { Asset } from '../catalog.js';
import { invalid } from '../errors.js';
import { defineTool, type AliasGroup } from '../tool.js';

/**
 * service_list_topology: the organisation's hierarchy (sites → buildings → floors → rooms →
 * zones, optionally hives and sensors) as GraphQL's tree, from a root and down `depth` levels.
 * Structured as a flat list in tree order with parent ids and depths (a fixed JSON Schema,
 * where a nested one would be recursive); the text is the indented tree.
 */
/** Sites, buildings, floors, rooms, zones, sensors: no tree is deeper. */
const MAX_DEPTH = 6;

const input = z
  .object({
    root_id: z
      .string()
      .min(3)
      .max(100)
      .optional()
      .describe('start at this site, building, floor or room (default: the whole organisation)'),
    depth: z
      .number()
      .int()
      .min(1)
      .max(MAX_DEPTH)
      .default(3)
      .describe('levels below the root to include (1–6, default 3)'),
    include_devices: z.boolean().default(false).describe('include hives and sensors (default false)'),
    max_nodes: z
      .number()
      .int()
      .min(1)
      .max(5000)
      .default(1000)
      .describe('stop after this many nodes (1–5000, default 1000)'),
  })
  .strict();

const node = z.object({
  id: z.string(),
  type: z.string(),
  name: z.string(),
  parent_id: z.string().nullable(),
  depth: z.number().int(),
  child_count: z.number().int(),
});
const output = z.object({
  root: z.object({ id: z.string(), type: z.string(), name: z.string() }),
  nodes: z.array(node),
  total_nodes: z.number().int(),
  truncated: z.boolean(),
});

/**
 * The reference's names (aliases.ts): `asset_ids` (one root here), and its depth pair. The
 * reference shows the level `starting_depth` and `traversal_depth` levels below it; from the
 * organisation (starting at sites) that is our depth traversal_depth + 1, from a root our
 * depth traversal_depth (at least 1: the root's children). A flat list of a deeper level
 * (starting_depth > 0) is not offered: its schema is the constant 0.
 */
const aliases: readonly AliasGroup[] = [
  {
    to: 'root_id',
    from: { asset_ids: z.array(z.string().trim().min(3).max(100)).max(50).describe('the root (one id)') },
    convert(g) {
      const ids = g.asset_ids as string[];
      if (ids.length > 1)
        throw invalid(
          `service_list_topology: asset_ids has ${ids.length} ids; this tool shows one root (root_id): call it once per id`,
        );
      return ids[0];
    },
  },
  {
    to: 'depth',
    from: {
      starting_depth: z.literal(0).describe('0 (sites): the only start offered; give root_id for a subtree'),
      traversal_depth: z.number().int().min(0).max(10).describe('levels below the start'),
    },
    convert(g, ctx) {
      const t = (g.traversal_depth as number | undefined) ?? 0;
      const rooted =
        ctx.args.root_id !== undefined || (Array.isArray(ctx.args.asset_ids) && ctx.args.asset_ids.length > 0);
      return Math.min(MAX_DEPTH, Math.max(1, rooted ? t : t + 1));
    },
  },
];

export const listTopology = defineTool({
  name: 'service_list_topology',
  title: 'Organisation topology',
  description:
    'The hierarchy tree (sites, buildings, floors, rooms, zones; optionally hives and sensors) from the organisation or a given root, to a chosen depth.',
  input,
  output,
  aliases,
  async run(args, ctx, call) {
    const catalog = args.include_devices ? await ctx.catalog.withDevices(call) : await ctx.catalog.spaces(call);
    const root = args.root_id
      ? (await ctx.catalog.resolve([args.root_id], ['site', 'building', 'floor', 'room'], args.include_devices, call))
          .assets[0]
      : undefined;
    const shown = (a: Asset): boolean => args.include_devices || (a.kind !== 'hive' && a.kind !== 'sensor');
    const nodes: Array<z.infer<typeof node>> = [];
    let total = 0;
    const walk = (a: Asset, parentId: string | null, depth: number): void => {
      const kids = a.childIds
        .map((id) => catalog.assets.get(id))
        .filter((c): c is Asset => c !== undefined && shown(c));
      total++;
      if (nodes.length < args.max_nodes)
        nodes.push({ id: a.id, type: a.kind, name: a.name, parent_id: parentId, depth, child_count: kids.length });
      if (depth < args.depth) for (const k of kids) walk(k, a.id, depth + 1);
    };
    if (root)
      for (const id of root.childIds) {
        const c = catalog.assets.get(id);
        if (c && shown(c)) walk(c, root.id, 1);
      }
    else for (const id of catalog.siteIds) walk(catalog.get(id), null, 1);
    return {
      root: root
        ? { id: root.id, type: root.kind, name: root.name }
        : { id: 'organisation', type: 'organisation', name: 'organisation' },
      nodes,
      total_nodes: total,
      truncated: total > nodes.length,
    };
  },
  render(r) {
    const lines = [
      `${r.root.type === 'organisation' ? 'Organisation' : `${r.root.type} ${r.root.name} (${r.root.id})`}`,
    ];
    for (const n of r.nodes)
      lines.push(
        `${'  '.repeat(n.depth)}${n.type} ${n.name} (${n.id})${n.child_count > 0 ? ` [${n.child_count}]` : ''}`,
      );
    if (r.truncated)
      lines.push(`… ${r.total_nodes - r.nodes.length} more node(s): raise max_nodes, lower depth or pick a root_id`);
    return lines.join('\n');
  },
});
