import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { idOrName } from './aliases.js';
import type { Asset, AssetKind } from './catalog.js';
import { isToolError } from './errors.js';
import { paramsOf, invalidParams, type RawHandler } from './rpc.js';
import type { ToolContext } from './tool.js';

/**
 * Prompts for the platform's common jobs (issue 28, item 2): each takes its arguments (an
 * asset by id or name, a period, constraints), resolves the assets against the caller's
 * organisation, and returns one user message that names the exact tool calls, with ids, that
 * answer the job. Arguments are completed by completion.ts from each argument's `complete`.
 */
export type Completes = { kinds: readonly AssetKind[] } | { values: readonly string[] };

interface PromptArg {
  name: string;
  description: string;
  required: boolean;
  complete: Completes;
}

interface PromptDef {
  name: string;
  title: string;
  description: string;
  arguments: readonly PromptArg[];
  text(args: Record<string, string>, ctx: ToolContext): Promise<string>;
}

const PERIODS = { today: null, yesterday: 1, last_7_days: 7, last_30_days: 30 } as const satisfies Record<
  string,
  number | null
>;
type Period = keyof typeof PERIODS;

const MAX_ARG = 200;

/** An asset of the kinds by id or name (aliases.ts), or -32602 naming the argument. */
async function asset(ctx: ToolContext, arg: string, text: string, kinds: readonly AssetKind[]): Promise<Asset> {
  try {
    const id = await idOrName(ctx, text, kinds);
    const devices = kinds.includes('hive') || kinds.includes('sensor');
    return (await ctx.catalog.resolve([id], kinds, devices)).assets[0] as Asset;
  } catch (err) {
    if (isToolError(err) && (err.code === 'NOT_FOUND' || err.code === 'VALIDATION_FAILED'))
      throw invalidParams(`${arg}: ${err.message}`);
    throw err;
  }
}

const where = (a: Asset): string => `${a.kind} "${a.name}" (id ${a.id}; ${a.path.join(' › ')})`;

const occupancySummary: PromptDef = {
  name: 'building_occupancy_summary',
  title: 'Occupancy summary of a building',
  description: 'How full a building was over a period, floor by floor, with its busiest rooms now.',
  arguments: [
    {
      name: 'building',
      description: 'the building: its id or name',
      required: true,
      complete: { kinds: ['building'] },
    },
    {
      name: 'period',
      description: `${Object.keys(PERIODS).join(', ')} (default today)`,
      required: false,
      complete: { values: Object.keys(PERIODS) },
    },
  ],
  async text(args, ctx) {
    const b = await asset(ctx, 'building', args.building ?? '', ['building']);
    const period = (args.period ?? 'today') as Period;
    if (!Object.hasOwn(PERIODS, period))
      throw invalidParams(`period: one of ${Object.keys(PERIODS).join(', ')}, got ${JSON.stringify(args.period)}`);
    const catalog = await ctx.catalog.spaces();
    const floors = b.childIds.map((id) => catalog.assets.get(id)).filter((a): a is Asset => a?.kind === 'floor');
    const rooms = floors
      .flatMap((f) => f.childIds.map((id) => catalog.assets.get(id)).filter((a): a is Asset => a?.kind === 'room'))
      .slice(0, 50);
    const days = PERIODS[period];
    const series =
      days === null
        ? `start "-${24}h", interval "1h"`
        : `start "-${days + 1}d", stop "-1d", interval "${days === 1 ? '1h' : '1d'}"`;
    return [
      `Summarise the occupancy of ${where(b)} for ${period.replace(/_/g, ' ')}.`,
      `1. Call service_get_occupancy_timeseries with ids ${JSON.stringify(floors.map((f) => f.id))} (its ${floors.length} floor(s)), ${series}, function "max": the peak per floor.`,
      rooms.length > 0
        ? `2. Call service_space_busyness with ids ${JSON.stringify(rooms.map((r) => r.id))}: how busy its rooms are now, against their usual level.`
        : '2. The building has no rooms: skip room busyness.',
      '3. Answer with the busiest floor and hour, the quietest floor, and the rooms busier than usual; say when a space has no data instead of guessing.',
    ].join('\n');
  },
};

const findFreeRoom: PromptDef = {
  name: 'find_free_room',
  title: 'Find a free room',
  description: 'A room free right now, within a scope, big enough and with the tags asked for.',
  arguments: [
    {
      name: 'scope',
      description: 'a site, building or floor: id or name (default: the whole organisation)',
      required: false,
      complete: { kinds: ['site', 'building', 'floor'] },
    },
    {
      name: 'min_capacity',
      description: 'at least this many seats (a whole number)',
      required: false,
      complete: { values: ['2', '4', '6', '8', '10', '12', '20'] },
    },
    {
      name: 'tags',
      description: 'tag names the room must carry, comma-separated',
      required: false,
      complete: { values: [] },
    },
  ],
  async text(args, ctx) {
    const call: Record<string, unknown> = {};
    if (args.scope) call.scope_id = (await asset(ctx, 'scope', args.scope, ['site', 'building', 'floor'])).id;
    if (args.min_capacity !== undefined && args.min_capacity !== '') {
      if (!/^\d{1,6}$/.test(args.min_capacity))
        throw invalidParams(`min_capacity: a whole number, got ${JSON.stringify(args.min_capacity)}`);
      call.min_capacity = Number(args.min_capacity);
    }
    const tags = (args.tags ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
    if (tags.length > 20) throw invalidParams(`tags: at most 20, got ${tags.length}`);
    if (tags.length > 0) call.tags = tags;
    return [
      `Find a room that is free right now${args.scope ? ` in ${args.scope}` : ''}${call.min_capacity !== undefined ? ` for at least ${String(call.min_capacity)} people` : ''}${tags.length > 0 ? ` tagged ${tags.join(', ')}` : ''}.`,
      `1. Call service_available_rooms with ${JSON.stringify(call)}.`,
      '2. If none is free, call it again without the tags, then say which constraint had to give.',
      '3. Answer with the best room (largest capacity first, as listed), its path and capacity, and one alternative.',
    ].join('\n');
  },
};

const deviceHealth: PromptDef = {
  name: 'explain_device_health',
  title: "Explain a sensor's or hive's health",
  description: 'Whether a hive or sensor is online and streaming, its battery, and what to do about it.',
  arguments: [
    {
      name: 'device',
      description: 'a hive or sensor: its id or name',
      required: true,
      complete: { kinds: ['hive', 'sensor'] },
    },
  ],
  async text(args, ctx) {
    const d = await asset(ctx, 'device', args.device ?? '', ['hive', 'sensor']);
    const catalog = await ctx.catalog.withDevices();
    const floor = catalog.ancestor(d, 'floor');
    const fields =
      d.kind === 'hive'
        ? ['isOnline', 'isStreaming', 'lastHeartbeat', 'netPathStability', 'hiveType', 'hiveVersion']
        : [
            'is_online',
            'is_streaming',
            'last_heartbeat',
            'mode',
            'power_type',
            'battery_level',
            'battery_change_by_date',
            'hive_id',
          ];
    return [
      `Explain the health of ${where(d)}.`,
      `1. Call service_fetch_entity_details with ids ["${d.id}"] and fields ${JSON.stringify(fields)}.`,
      floor
        ? `2. Call service_hardware_snapshot with scope_id "${floor.id}" and list "problems": is it alone, or is its floor (${floor.name}) affected too?`
        : '2. Call service_hardware_snapshot with list "problems".',
      '3. Answer: online or not and since when, battery and when to change it, and the likely cause and next step (a hive offline takes its sensors with it).',
    ].join('\n');
  },
};

export const PROMPTS: readonly PromptDef[] = [occupancySummary, findFreeRoom, deviceHealth];

const getParams = z.object({
  name: z.string().max(100),
  arguments: z.record(z.string(), z.string().max(MAX_ARG)).optional(),
});

/** `prompts/list` and `prompts/get`, over the context of the caller's organisation. */
export function promptHandlers(context: () => ToolContext): Record<string, RawHandler> {
  return {
    'prompts/list': async () => ({
      prompts: PROMPTS.map((p) => ({
        name: p.name,
        title: p.title,
        description: p.description,
        arguments: p.arguments.map(({ name, description, required }) => ({ name, description, required })),
      })),
    }),
    'prompts/get': async (params) => {
      const { name, arguments: given = {} } = paramsOf(getParams, params, 'prompts/get');
      const p = PROMPTS.find((x) => x.name === name);
      if (!p)
        throw invalidParams(
          `unknown prompt ${JSON.stringify(name)}; prompts: ${PROMPTS.map((x) => x.name).join(', ')}`,
        );
      const unknown = Object.keys(given).filter((k) => !p.arguments.some((a) => a.name === k));
      if (unknown.length > 0)
        throw invalidParams(
          `${p.name} has no argument ${unknown.join(', ')}; arguments: ${p.arguments.map((a) => a.name).join(', ')}`,
        );
      const missing = p.arguments.filter((a) => a.required && (given[a.name] ?? '').trim() === '');
      if (missing.length > 0) throw invalidParams(`${p.name} needs ${missing.map((a) => a.name).join(', ')}`);
      let text: string;
      try {
        text = await p.text(given, context());
      } catch (err) {
        if (err instanceof McpError) throw err;
        throw new McpError(ErrorCode.InternalError, isToolError(err) ? `${err.code}: ${err.message}` : String(err));
      }
      return { description: p.description, messages: [{ role: 'user', content: { type: 'text', text } }] };
    },
  };
}
