import { z } from 'zod';
import type { Asset, Catalog } from '../catalog.js';
import { table } from '../render.js';
import { assetRef, defineTool, idList, pathOf, ref } from '../tool.js';

/**
 * service_get_asset_details: assets by id (batch), each with its parent, its children and,
 * on request, the hives and sensors in it. All ids must be the caller's organisation's: one
 * unknown id fails the call with NOT_FOUND naming it (another organisation's id reads exactly
 * as an id that does not exist, and no data of the others is returned beside it).
 */
const input = z
  .object({
    ids: idList('site, building, floor, room, zone, hive or sensor'),
    include_children: z.boolean().default(true).describe('list direct children (default true)'),
    include_devices: z
      .boolean()
      .default(false)
      .describe('list the hives and sensors inside each asset (default false)'),
  })
  .strict();

const detail = z.object({
  id: z.string(),
  type: z.string(),
  name: z.string(),
  path: z.string(),
  timezone: z.string(),
  parent: ref.nullable(),
  capacity: z.object({ max: z.number().nullable(), mid: z.number().nullable() }).nullable(),
  tags: z.array(z.object({ id: z.string(), name: z.string() })),
  fields: z.record(z.string(), z.unknown()),
  children: z.array(ref).optional(),
  devices: z.object({ hives: z.array(ref), sensors: z.array(ref.extend({ mode: z.string().nullable() })) }).optional(),
});
const output = z.object({ assets: z.array(detail) });

function devicesIn(catalog: Catalog, a: Asset) {
  const inside = [...catalog.descendants(a.id)];
  return {
    hives: inside.filter((d) => d.kind === 'hive').map(assetRef),
    sensors: inside
      .filter((d) => d.kind === 'sensor')
      .map((s) => ({ ...assetRef(s), mode: typeof s.fields.mode === 'string' ? s.fields.mode : null })),
  };
}

export const getAssetDetails = defineTool({
  name: 'service_get_asset_details',
  title: 'Asset details',
  description:
    'Details of up to 50 assets by id: type, path, time zone, capacity, tags, the GraphQL record fields, parent and children, and optionally the hives and sensors inside.',
  input,
  output,
  // Every answer carries the parent and the path, so the reference's switch changes nothing.
  aliases: [
    {
      to: null,
      from: { include_parent_context: z.boolean().describe('every answer carries the parent and the path') },
      convert: () => undefined,
    },
  ],
  async run(args, ctx, call) {
    const needDevices =
      args.include_devices || args.ids.some((id) => id.startsWith('sensor_') || id.startsWith('hive_'));
    const { catalog, assets } = await ctx.catalog.resolve(
      args.ids,
      ['site', 'building', 'floor', 'room', 'zone', 'hive', 'sensor'],
      needDevices,
      call,
    );
    return {
      assets: assets.map((a) => {
        const parent = catalog.parentOf(a);
        const children = a.childIds
          .map((id) => catalog.assets.get(id))
          .filter((c): c is Asset => c !== undefined && (needDevices || (c.kind !== 'hive' && c.kind !== 'sensor')));
        return {
          id: a.id,
          type: a.kind,
          name: a.name,
          path: pathOf(a),
          timezone: a.timezone,
          parent: parent ? assetRef(parent) : null,
          capacity: a.capacity,
          tags: a.tags,
          fields: a.fields,
          ...(args.include_children ? { children: children.map(assetRef) } : {}),
          ...(args.include_devices ? { devices: devicesIn(catalog, a) } : {}),
        };
      }),
    };
  },
  render(r) {
    return r.assets
      .map((a) => {
        const lines = [
          `${a.type} ${a.name} (${a.id})`,
          `  path: ${a.path}; time zone ${a.timezone}`,
          `  parent: ${a.parent ? `${a.parent.type} ${a.parent.name} (${a.parent.id})` : 'none'}`,
        ];
        if (a.capacity) lines.push(`  capacity: max ${a.capacity.max ?? '—'}, mid ${a.capacity.mid ?? '—'}`);
        if (a.tags.length > 0) lines.push(`  tags: ${a.tags.map((t) => t.name).join(', ')}`);
        const fields = Object.entries(a.fields).filter(([k]) => k !== 'id' && k !== 'name');
        if (fields.length > 0) lines.push(`  ${fields.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')}`);
        if (a.children)
          lines.push(
            a.children.length > 0
              ? `  children:\n${indent(
                  table(
                    ['type', 'name', 'id'],
                    a.children.map((c) => [c.type, c.name, c.id]),
                  ),
                )}`
              : '  children: none',
          );
        if (a.devices)
          lines.push(
            `  devices: ${a.devices.hives.length} hive(s), ${a.devices.sensors.length} sensor(s)${
              a.devices.sensors.length > 0
                ? `\n${indent(
                    table(
                      ['sensor', 'mode', 'id'],
                      a.devices.sensors.map((s) => [s.name, s.mode, s.id]),
                    ),
                  )}`
                : ''
            }`,
          );
        return lines.join('\n');
      })
      .join('\n\n');
  },
});

const indent = (s: string): string => s.replace(/^/gm, '    ');
