import { z } from 'zod';
import { ASSET_LISTS } from '../catalog.js';
import { invalid, notFound } from '../errors.js';
import { defineTool, idList, type AliasGroup } from '../tool.js';

/**
 * service_fetch_entity_details: chosen fields of entities by id, straight from GraphQL. Fields
 * are checked against a per-type allow-list (the scalar fields of platform-reference §2) and
 * only allow-listed text is ever put into a query; the kind of an id is read from its prefix
 * (spec §2, "Identifier formats"), and an id the organisation does not have is NOT_FOUND.
 */
const SUB = {
  capacity: 'capacity { max mid }',
  area: 'area { value unit }',
  address: 'address { lines country }',
} as Record<string, string>;

export const ALLOWED = {
  site: ['name', 'timezone', 'siteNumber', 'customID', 'org_id'],
  building: ['name', 'site_id', 'building_number', 'buildingNumber', 'capacity', 'address', 'customID'],
  floor: [
    'name',
    'floor_id',
    'client_id',
    'building_id',
    'floorNumber',
    'timezone',
    'installation_date',
    'customID',
    'capacity',
    'area',
  ],
  room: ['name', 'room_id', 'client_id', 'floor_id', 'roomType', 'customID', 'capacity', 'area', 'coordinates', 'note'],
  zone: ['name', 'zone_id', 'client_id', 'floor_id', 'room_id', 'customID', 'capacity', 'coordinates'],
  hive: [
    'name',
    'hive_id',
    'client_id',
    'serialNumber',
    'serial_number',
    'floor_id',
    'room_id',
    'isOnline',
    'isStreaming',
    'hiveVersion',
    'hiveType',
    'lastHeartbeat',
    'netPathStability',
    'coordinates',
    'installed',
    'note',
  ],
  sensor: [
    'name',
    'sensor_id',
    'client_id',
    'mac_address',
    'mode',
    'model',
    'floor_id',
    'room_id',
    'hive_id',
    'hive_serial',
    'height',
    'center',
    'orientation',
    'field_of_view',
    'effective_field_of_view',
    'sensitivity',
    'door_line',
    'in_direction',
    'is_entrance',
    'is_online',
    'is_streaming',
    'power_type',
    'last_battery_change_date',
    'next_battery_change_date',
    'battery_change_by_date',
    'battery_level',
    'last_heartbeat',
    'installation_status',
  ],
} as const;
type Kind = keyof typeof ALLOWED;

const ALL_FIELDS = [...new Set(Object.values(ALLOWED).flat())].sort() as [string, ...string[]];
const PREFIX: ReadonlyArray<[string, Kind]> = [
  ['site_', 'site'],
  ['building_', 'building'],
  ['space_', 'floor'],
  ['room_', 'room'],
  ['zone_', 'zone'],
  ['hive_', 'hive'],
  ['sensor_', 'sensor'],
];

const input = z
  .object({
    ids: idList('site, building, floor (space_…), room, zone, hive or sensor'),
    fields: z
      .array(z.enum(ALL_FIELDS))
      .min(1)
      .max(40)
      .refine((f) => new Set(f).size === f.length, { message: 'fields must be unique' })
      .describe("fields to return; each must be allowed for every id's type (see docs/mcp.md)"),
  })
  .strict();

const output = z.object({
  entities: z.array(
    z.object({
      id: z.string(),
      type: z.enum(Object.keys(ALLOWED) as [Kind, ...Kind[]]),
      fields: z.record(z.string(), z.unknown()),
    }),
  ),
});

export function kindOf(id: string): Kind {
  const k = PREFIX.find(([p]) => id.startsWith(p));
  if (!k)
    throw notFound(`${id} is not an id of this organisation (ids start with ${PREFIX.map(([p]) => p).join(', ')})`);
  return k[1];
}

/**
 * The reference's per-type field lists (`site_fields` … `hive_fields`, aliases.ts): the lists
 * of the types among the ids, merged in order; each field must still suit every id's type.
 */
const aliases: readonly AliasGroup[] = [
  {
    to: 'fields',
    from: Object.fromEntries(
      Object.keys(ALLOWED).map((k) => [
        `${k}_fields`,
        z.array(z.string().min(1).max(60)).min(1).max(40).describe(`fields of ${k}s`),
      ]),
    ),
    convert(g, ctx) {
      const ids = Array.isArray(ctx.args.ids) ? ctx.args.ids.filter((x): x is string => typeof x === 'string') : [];
      const kinds = new Set(ids.map((id) => PREFIX.find(([p]) => id.startsWith(p))?.[1]));
      const fields = [
        ...new Set(
          Object.keys(ALLOWED)
            .filter((k) => kinds.has(k as Kind))
            .flatMap((k) => (g[`${k}_fields`] as string[] | undefined) ?? []),
        ),
      ];
      if (fields.length === 0)
        throw invalid(
          `service_fetch_entity_details: ${Object.keys(g).join(', ')} ${Object.keys(g).length > 1 ? 'are' : 'is'} not for the ids' types; give ${
            [...kinds]
              .filter((k) => k !== undefined)
              .map((k) => `${k}_fields`)
              .join(' or ') || 'ids first'
          }`,
        );
      return fields;
    },
  },
];

export const fetchEntityDetails = defineTool({
  name: 'service_fetch_entity_details',
  title: 'Entity fields',
  description:
    'Selected fields of up to 50 entities by id (sites, buildings, floors, rooms, zones, hives, sensors), read from GraphQL; fields are checked against a per-type allow-list.',
  input,
  output,
  aliases,
  async run(args, ctx, call) {
    const byKind = new Map<Kind, string[]>();
    for (const id of args.ids) byKind.set(kindOf(id), [...(byKind.get(kindOf(id)) ?? []), id]);
    for (const kind of byKind.keys()) {
      const bad = args.fields.filter((f) => !(ALLOWED[kind] as readonly string[]).includes(f));
      if (bad.length > 0) throw invalid(`${kind} has no field ${bad.join(', ')}; allowed: ${ALLOWED[kind].join(', ')}`);
    }
    const found = new Map<string, { id: string; type: Kind; fields: Record<string, unknown> }>();
    call.progress.plan(byKind.size);
    for (const [kind, ids] of byKind) {
      const selection = args.fields.map((f) => SUB[f] ?? f).join(' ');
      // Sites and buildings have no ids argument: the organisation has few, read them all.
      const withIds = kind !== 'site' && kind !== 'building';
      const doc = `query McpEntities${withIds ? '($ids: [ID!])' : ''} { ${ASSET_LISTS[kind]}${withIds ? '(ids: $ids)' : ''} { data { id ${selection} } } }`;
      const data = await ctx.platform.query<Record<string, { data: Array<Record<string, unknown> & { id: string }> }>>(
        doc,
        withIds ? { ids } : {},
        call,
      );
      call.progress.step(`${ASSET_LISTS[kind]} read`);
      for (const row of data[ASSET_LISTS[kind]]?.data ?? []) {
        if (!ids.includes(row.id)) continue;
        const { id, ...rest } = row;
        found.set(id, { id, type: kind, fields: Object.fromEntries(args.fields.map((f) => [f, rest[f] ?? null])) });
      }
    }
    const missing = args.ids.filter((id) => !found.has(id));
    if (missing.length > 0) throw notFound(`not in this organisation: ${missing.join(', ')}`);
    return {
      entities: args.ids.map((id) => found.get(id) as { id: string; type: Kind; fields: Record<string, unknown> }),
    };
  },
  render(r) {
    return r.entities
      .map(
        (e) =>
          `${e.type} ${e.id}\n${Object.entries(e.fields)
            .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`)
            .join('\n')}`,
      )
      .join('\n\n');
  },
});
