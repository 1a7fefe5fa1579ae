import { z } from 'zod';
import { DAY_MS, isoUtc } from '../../core/time.js';
import { median } from '../occupancy.js';
import { table } from '../render.js';
import { kindByPrefix } from '../aliases.js';
import { invalid } from '../errors.js';
import { defineTool, maxResults, scopeId, type AliasGroup } from '../tool.js';

/**
 * service_hardware_snapshot: online/offline hives and sensors and battery status, for the
 * organisation or a site, building or floor. Battery status (platform-reference §5): wired →
 * no_battery; no date → unknown; change-by date passed → critical; within 30 days → due_soon;
 * else healthy, measured against the platform's present (occupancy.ts). Battery levels (the
 * spec's "battery levels", §1): each sensor's charge in percent from GraphQL `battery_level`,
 * and per scope the lowest, the median and how many are below the warning level.
 */
/** Default warning level, percent: twice the 10 % at which a change is due (battery.ts), so the warning comes with time to plan the visit. */
export const BATTERY_WARNING_PERCENT = 20;

const BATTERY = ['no_battery', 'unknown', 'critical', 'due_soon', 'healthy'] as const;
type Battery = (typeof BATTERY)[number];

const input = z
  .object({
    scope_id: scopeId(),
    list: z
      .enum(['problems', 'all', 'none'])
      .default('problems')
      .describe('which devices to list: offline, not streaming or battery critical/due soon (default), all, or none'),
    battery_warning_percent: z
      .number()
      .min(1)
      .max(100)
      .default(BATTERY_WARNING_PERCENT)
      .describe(`battery level in percent below which a sensor counts as low (default ${BATTERY_WARNING_PERCENT})`),
    max_results: maxResults(50, 500),
  })
  .strict();

const counts = z.object({
  total: z.number().int(),
  online: z.number().int(),
  offline: z.number().int(),
  not_streaming: z.number().int(),
});
const device = z.object({
  id: z.string(),
  type: z.enum(['hive', 'sensor']),
  name: z.string(),
  path: z.string(),
  online: z.boolean(),
  streaming: z.boolean(),
  last_heartbeat: z.string().nullable(),
  mode: z.string().nullable(),
  battery_status: z.enum(BATTERY).nullable(),
  battery_change_by: z.string().nullable(),
  battery_level: z.number().nullable(),
});
const levels = z.object({
  reporting: z.number().int().describe('sensors with a battery level (wired and never heard have none)'),
  lowest: z.number().nullable(),
  median: z.number().nullable(),
  below_warning: z.number().int(),
  warning_percent: z.number(),
});
const output = z.object({
  scope: z.object({ id: z.string(), type: z.string(), name: z.string() }),
  as_of: z.string(),
  hives: counts,
  sensors: counts.extend({ presence: z.number().int(), traffic: z.number().int() }),
  battery: z.object(Object.fromEntries(BATTERY.map((b) => [b, z.number().int()])) as Record<Battery, z.ZodNumber>),
  battery_levels: levels,
  devices: z.array(device),
  total_listed: z.number().int(),
  truncated: z.boolean(),
});

export function batteryStatus(
  fields: Record<string, unknown>,
  presentMs: number,
): { status: Battery; by: string | null } {
  if (fields.power_type === 'wired') return { status: 'no_battery', by: null };
  const raw = fields.battery_change_by_date ?? fields.next_battery_change_date;
  const by = typeof raw === 'string' && Number.isFinite(Date.parse(raw)) ? raw : null;
  if (by === null) return { status: 'unknown', by: null };
  const left = Date.parse(by) - presentMs;
  return { status: left < 0 ? 'critical' : left <= 30 * DAY_MS ? 'due_soon' : 'healthy', by };
}

const flag = (v: unknown): boolean => v === true;
const levelOf = (fields: Record<string, unknown>): number | null =>
  typeof fields.battery_level === 'number' ? fields.battery_level : null;

function levelSummary(values: number[], warning: number): z.infer<typeof levels> {
  return {
    reporting: values.length,
    lowest: values.length === 0 ? null : Math.min(...values),
    median: median(values),
    below_warning: values.filter((v) => v < warning).length,
    warning_percent: warning,
  };
}

/** The reference's names (aliases.ts): its scope pair, its two list limits, its battery-list switches. */
const aliases: readonly AliasGroup[] = [
  {
    to: null,
    from: { scope_type: z.enum(['org', 'site', 'building', 'floor']).describe('org, or the kind of scope_id') },
    convert(g, ctx) {
      const type = g.scope_type as string;
      const id = ctx.args.scope_id;
      if (type === 'org' && id !== undefined)
        throw invalid(
          `service_hardware_snapshot: scope_type org is the whole organisation; leave scope_id out or give its scope_type`,
        );
      if (type !== 'org' && id === undefined)
        throw invalid(`service_hardware_snapshot: scope_type ${type} needs scope_id (a ${type} id)`);
      if (typeof id === 'string' && kindByPrefix(id) !== type)
        throw invalid(`service_hardware_snapshot: scope_id ${id} is not a ${type} (scope_type ${type})`);
      return undefined;
    },
  },
  {
    to: 'max_results',
    from: {
      limit: z.number().int().min(1).max(500).describe('devices listed'),
      offline_devices_limit: z.number().int().min(1).max(500).describe('devices listed'),
    },
    // One list here where the reference has two: the larger of its limits.
    convert: (g) => Math.max(...(Object.values(g) as number[])),
  },
  {
    to: 'list',
    from: {
      include_battery_details: z.boolean().describe('list sensors by battery status'),
      battery_status_filter: z
        .enum(['critical', 'due_soon', 'healthy', 'all'])
        .describe('which battery statuses to list'),
    },
    // The reference lists offline devices always and battery details on request: our `problems`
    // (offline, not streaming, battery critical or due soon), or `all` when healthy ones are asked for.
    convert: (g) =>
      g.include_battery_details === true && (g.battery_status_filter === 'all' || g.battery_status_filter === 'healthy')
        ? 'all'
        : 'problems',
  },
];

export const hardwareSnapshot = defineTool({
  name: 'service_hardware_snapshot',
  title: 'Hardware snapshot',
  description:
    'Online/offline and streaming status of hives and sensors and their battery status (no_battery, unknown, critical, due_soon, healthy), for the organisation or a site, building or floor; lists the devices that need attention.',
  input,
  output,
  aliases,
  async run(args, ctx, call) {
    const { scope, assets } = await ctx.catalog.inScope(args.scope_id, true, call);
    const present = await ctx.occupancy.present(call);
    const hives = { total: 0, online: 0, offline: 0, not_streaming: 0 };
    const sensors = { total: 0, online: 0, offline: 0, not_streaming: 0, presence: 0, traffic: 0 };
    const battery = Object.fromEntries(BATTERY.map((b) => [b, 0])) as Record<Battery, number>;
    const listed: Array<z.infer<typeof device> & { rank: number }> = [];
    const percents: number[] = [];
    for (const a of assets) {
      if (a.kind !== 'hive' && a.kind !== 'sensor') continue;
      const online = flag(a.kind === 'hive' ? a.fields.isOnline : a.fields.is_online);
      const streaming = flag(a.kind === 'hive' ? a.fields.isStreaming : a.fields.is_streaming);
      const c = a.kind === 'hive' ? hives : sensors;
      c.total++;
      c[online ? 'online' : 'offline']++;
      if (!streaming) c.not_streaming++;
      const bat = a.kind === 'sensor' ? batteryStatus(a.fields, present) : null;
      if (bat) battery[bat.status]++;
      const level = a.kind === 'sensor' ? levelOf(a.fields) : null;
      if (level !== null) percents.push(level);
      if (a.kind === 'sensor' && (a.fields.mode === 'presence' || a.fields.mode === 'traffic'))
        sensors[a.fields.mode]++;
      const rank = !online ? 0 : bat?.status === 'critical' ? 1 : !streaming ? 2 : bat?.status === 'due_soon' ? 3 : 4;
      if (args.list === 'all' || (args.list === 'problems' && rank < 4)) {
        const beat = a.kind === 'hive' ? a.fields.lastHeartbeat : a.fields.last_heartbeat;
        listed.push({
          id: a.id,
          type: a.kind,
          name: a.name,
          path: a.path.join(' › '),
          online,
          streaming,
          last_heartbeat: typeof beat === 'string' ? beat : null,
          mode: typeof a.fields.mode === 'string' ? a.fields.mode : null,
          battery_status: bat?.status ?? null,
          battery_change_by: bat?.by ?? null,
          battery_level: level,
          rank,
        });
      }
    }
    listed.sort((x, y) => x.rank - y.rank || x.path.localeCompare(y.path));
    return {
      scope: scope
        ? { id: scope.id, type: scope.kind, name: scope.name }
        : { id: 'organisation', type: 'organisation', name: 'organisation' },
      as_of: isoUtc(present),
      hives,
      sensors,
      battery,
      battery_levels: levelSummary(percents, args.battery_warning_percent),
      devices: listed.slice(0, args.max_results).map(({ rank: _rank, ...d }) => d),
      total_listed: listed.length,
      truncated: listed.length > args.max_results,
    };
  },
  render(r) {
    const lines = [
      `Hardware of ${r.scope.type} ${r.scope.name} as of ${r.as_of}`,
      `  hives: ${r.hives.online}/${r.hives.total} online, ${r.hives.offline} offline, ${r.hives.not_streaming} not streaming`,
      `  sensors: ${r.sensors.online}/${r.sensors.total} online (${r.sensors.presence} presence, ${r.sensors.traffic} traffic), ${r.sensors.offline} offline, ${r.sensors.not_streaming} not streaming`,
      `  battery: ${BATTERY.map((b) => `${b} ${r.battery[b]}`).join(', ')}`,
      r.battery_levels.reporting === 0
        ? '  battery levels: none reported'
        : `  battery levels: lowest ${r.battery_levels.lowest}%, median ${r.battery_levels.median}%, ${r.battery_levels.below_warning} of ${r.battery_levels.reporting} below ${r.battery_levels.warning_percent}%`,
    ];
    if (r.devices.length > 0) {
      lines.push(
        table(
          ['type', 'name', 'online', 'streaming', 'battery', 'level %', 'last heartbeat', 'id'],
          r.devices.map((d) => [
            d.type,
            d.name,
            d.online ? 'yes' : 'NO',
            d.streaming ? 'yes' : 'no',
            d.battery_status,
            d.battery_level,
            d.last_heartbeat,
            d.id,
          ]),
        ),
      );
      if (r.truncated)
        lines.push(`… ${r.total_listed - r.devices.length} more device(s): raise max_results or narrow scope_id`);
    } else lines.push('  no device needs attention');
    return lines.join('\n');
  },
});
