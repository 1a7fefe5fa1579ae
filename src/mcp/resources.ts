import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ASSET_LISTS, type Asset, type AssetKind } from './catalog.js';
import { isToolError } from './errors.js';
import { isOccupancySpace } from './occupancy.js';
import { planSvg, type Plan } from './plan-svg.js';
import { invalidParams, paramsOf, type RawHandler } from './rpc.js';
import type { ToolContext } from './tool.js';

/**
 * The organisation's assets as MCP resources (issue 28, item 1). URIs are stable, built from
 * ids: `occusim://<kind>s/<id>` for every site, building, floor, room, zone, hive and sensor
 * (its record, status for devices), `occusim://floors/<id>/plan.json` and `plan.svg` (the
 * floor's geometry), and `occusim://<floors|rooms|zones>/<id>/occupancy` (current occupancy,
 * the one that can be subscribed to: watch.ts). `resources/list` pages through all of them in
 * tree order; one template per kind lets a client build a URI from an id (completion.ts
 * completes the id).
 */
export const SCHEME = 'occusim://';
/** MCP's code for a resource that does not exist (spec, server/resources "Error Handling"). */
export const RESOURCE_NOT_FOUND = -32002;
export const PAGE_SIZE = 500;

const PLURAL = ASSET_LISTS;
const KIND_OF = Object.fromEntries(Object.entries(PLURAL).map(([k, p]) => [p, k])) as Record<string, AssetKind>;

type Facet = 'record' | 'plan.json' | 'plan.svg' | 'occupancy';

export interface Template {
  uriTemplate: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
  kinds: readonly AssetKind[];
}

const recordTemplate = (kind: AssetKind): Template => ({
  uriTemplate: `${SCHEME}${PLURAL[kind]}/{id}`,
  name: `${kind}`,
  title: `A ${kind}`,
  description: `A ${kind}'s record: type, path, time zone, parent, children, capacity, tags, fields${kind === 'hive' || kind === 'sensor' ? ', online and streaming status, battery' : ''}`,
  mimeType: 'application/json',
  kinds: [kind],
});

export const TEMPLATES: readonly Template[] = [
  ...(Object.keys(PLURAL) as AssetKind[]).map(recordTemplate),
  {
    uriTemplate: `${SCHEME}floors/{id}/plan.json`,
    name: 'floor-plan',
    title: 'A floor plan (JSON)',
    description: "A floor's outline, rooms and zones (polygons in metres), hives and sensors (positions)",
    mimeType: 'application/json',
    kinds: ['floor'],
  },
  {
    uriTemplate: `${SCHEME}floors/{id}/plan.svg`,
    name: 'floor-plan-svg',
    title: 'A floor plan (SVG)',
    description: 'The same floor plan drawn as SVG',
    mimeType: 'image/svg+xml',
    kinds: ['floor'],
  },
  ...(['floor', 'room', 'zone'] as const).map((k) => ({
    uriTemplate: `${SCHEME}${PLURAL[k]}/{id}/occupancy`,
    name: `${k}-occupancy`,
    title: `A ${k}'s current occupancy`,
    description: `The median of the ${k}'s last five one-minute values; subscribe to hear of each new minute`,
    mimeType: 'application/json',
    kinds: [k],
  })),
];

export const uriOf = (a: { id: string; kind: AssetKind }, facet: Facet = 'record'): string =>
  `${SCHEME}${PLURAL[a.kind]}/${a.id}${facet === 'record' ? '' : `/${facet}`}`;

const URI = /^occusim:\/\/([a-z]+)\/([A-Za-z0-9_-]{3,100})(?:\/(plan\.json|plan\.svg|occupancy))?$/;

export const notFoundResource = (uri: string, why: string): McpError =>
  new McpError(RESOURCE_NOT_FOUND, `resource not found: ${uri.slice(0, 200)} (${why})`, { uri: uri.slice(0, 200) });

/** The asset a URI names, or -32002. Only the caller's organisation's catalogue is searched. */
export async function resolveUri(ctx: ToolContext, uri: string): Promise<{ asset: Asset; facet: Facet }> {
  const m = URI.exec(uri);
  const kind = m ? KIND_OF[m[1] as string] : undefined;
  const facet = (m?.[3] ?? 'record') as Facet;
  if (!m || !kind)
    throw notFoundResource(
      uri,
      `URIs are ${SCHEME}<sites|buildings|floors|rooms|zones|hives|sensors>/<id>[/plan.json|/plan.svg|/occupancy]`,
    );
  if ((facet === 'plan.json' || facet === 'plan.svg') && kind !== 'floor')
    throw notFoundResource(uri, 'only floors have plans');
  if (facet === 'occupancy' && kind !== 'floor' && kind !== 'room' && kind !== 'zone')
    throw notFoundResource(uri, 'only floors, rooms and zones have occupancy');
  try {
    const { assets } = await ctx.catalog.resolve([m[2] as string], [kind], kind === 'hive' || kind === 'sensor');
    return { asset: assets[0] as Asset, facet };
  } catch (err) {
    if (isToolError(err) && err.code === 'NOT_FOUND')
      throw notFoundResource(uri, `no ${kind} with id ${m[2]} in this organisation`);
    throw err;
  }
}

async function record(ctx: ToolContext, a: Asset): Promise<unknown> {
  const catalog =
    a.kind === 'hive' || a.kind === 'sensor' ? await ctx.catalog.withDevices() : await ctx.catalog.spaces();
  const parent = catalog.parentOf(a);
  const child = (id: string) => catalog.assets.get(id);
  return {
    uri: uriOf(a),
    id: a.id,
    type: a.kind,
    name: a.name,
    path: a.path.join(' › '),
    timezone: a.timezone,
    parent: parent ? { id: parent.id, type: parent.kind, name: parent.name, uri: uriOf(parent) } : null,
    children: a.childIds
      .map(child)
      .filter((c): c is Asset => c !== undefined)
      .map((c) => ({ id: c.id, type: c.kind, name: c.name, uri: uriOf(c) })),
    capacity: a.capacity,
    tags: a.tags,
    fields: a.fields,
    ...(isOccupancySpace(a) ? { occupancy_uri: uriOf(a, 'occupancy') } : {}),
    ...(a.kind === 'floor' ? { plan_uris: [uriOf(a, 'plan.json'), uriOf(a, 'plan.svg')] } : {}),
  };
}

export async function occupancyOf(ctx: ToolContext, a: Asset): Promise<unknown> {
  const { asOf, results } = await ctx.watch.current(a);
  const r = results[0];
  return {
    uri: uriOf(a, 'occupancy'),
    id: a.id,
    type: a.kind,
    name: a.name,
    as_of: asOf,
    occupancy: r?.occupancy ?? null,
    source: r?.source ?? null,
    minutes: r?.minutes ?? [],
  };
}

const PLAN_QUERY = `query McpPlan($ids: [ID!]) { floors(ids: $ids) { data { id name floor_plans { coordinates }
  rooms { id name coordinates } zones { id name room_id coordinates } hives { id name coordinates } sensors { id name mode center } } } }`;

async function plan(ctx: ToolContext, a: Asset): Promise<Plan> {
  const data = await ctx.platform.query<{
    floors: { data: Array<Plan & { floor_plans: Array<{ coordinates: number[][] }> }> };
  }>(PLAN_QUERY, { ids: [a.id] });
  const f = data.floors.data.find((x) => x.id === a.id);
  if (!f) throw notFoundResource(uriOf(a, 'plan.json'), 'the floor has no plan');
  return {
    id: f.id,
    name: f.name,
    outline: f.floor_plans[0]?.coordinates ?? [],
    rooms: f.rooms,
    zones: f.zones,
    hives: f.hives,
    sensors: f.sensors,
  };
}

/** The contents of one resource (resources/read). */
export async function readResource(
  ctx: ToolContext,
  uri: string,
): Promise<{ uri: string; mimeType: string; text: string }> {
  const { asset, facet } = await resolveUri(ctx, uri);
  ctx.scope.next();
  if (facet === 'plan.svg') return { uri, mimeType: 'image/svg+xml', text: planSvg(await plan(ctx, asset)) };
  const body =
    facet === 'plan.json'
      ? await plan(ctx, asset)
      : facet === 'occupancy'
        ? await occupancyOf(ctx, asset)
        : await record(ctx, asset);
  return { uri, mimeType: 'application/json', text: JSON.stringify(body, null, 2) };
}

type Listed = { uri: string; name: string; title: string; mimeType: string };
/**
 * The list built once per catalogue (a new catalogue is a new object): each page used to
 * rebuild all of it, ~135 ms a page on the fleet's 34k resources whichever page was asked.
 */
const listed = new WeakMap<object, Listed[]>();

/** Every resource, in the catalogue's tree order: the record, then a floor's plans, then occupancy. */
async function everything(ctx: ToolContext): Promise<Listed[]> {
  const catalog = await ctx.catalog.withDevices();
  const known = listed.get(catalog);
  if (known) return known;
  const out: Listed[] = [];
  for (const site of catalog.siteIds) {
    for (const a of catalog.descendants(site)) {
      const title = `${a.kind} ${a.path.join(' › ')}`;
      out.push({ uri: uriOf(a), name: a.name, title, mimeType: 'application/json' });
      if (a.kind === 'floor') {
        out.push({
          uri: uriOf(a, 'plan.json'),
          name: `${a.name} plan`,
          title: `plan of ${title}`,
          mimeType: 'application/json',
        });
        out.push({
          uri: uriOf(a, 'plan.svg'),
          name: `${a.name} plan (SVG)`,
          title: `plan of ${title}`,
          mimeType: 'image/svg+xml',
        });
      }
      if (isOccupancySpace(a))
        out.push({
          uri: uriOf(a, 'occupancy'),
          name: `${a.name} occupancy`,
          title: `current occupancy of ${title}`,
          mimeType: 'application/json',
        });
    }
  }
  listed.set(catalog, out);
  return out;
}

const listParams = z.object({
  cursor: z
    .string()
    .regex(/^\d{1,9}$/, 'a cursor from a previous page')
    .optional(),
});
const readParams = z.object({ uri: z.string().min(1).max(2000) });

/** A platform failure while answering a resource request, as a protocol error with its code. */
function asProtocolError(err: unknown): never {
  if (err instanceof McpError) throw err;
  throw new McpError(-32603, isToolError(err) ? `${err.code}: ${err.message}` : String(err));
}

export function resourceHandlers(context: () => ToolContext): Record<string, RawHandler> {
  return {
    'resources/list': async (params) => {
      const { cursor } = paramsOf(listParams, params, 'resources/list');
      const all = await everything(context()).catch(asProtocolError);
      const from = cursor === undefined ? 0 : Number(cursor);
      if (from > all.length)
        throw invalidParams(`resources/list: cursor ${cursor} is past the end (${all.length} resources)`);
      const next = from + PAGE_SIZE;
      return { resources: all.slice(from, next), ...(next < all.length ? { nextCursor: String(next) } : {}) };
    },
    'resources/templates/list': async () => ({ resourceTemplates: TEMPLATES.map(({ kinds: _k, ...t }) => t) }),
    'resources/read': async (params) => {
      const { uri } = paramsOf(readParams, params, 'resources/read');
      return { contents: [await readResource(context(), uri).catch(asProtocolError)] };
    },
  };
}
