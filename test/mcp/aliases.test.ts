import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aliasNames } from '../../src/mcp/aliases.js';
import { toolList } from '../../src/mcp/server.js';
import { TOOLS } from '../../src/mcp/tools/index.js';
import { connectInMemory, envFor, type Session } from './connect.js';
import { root, servedQuickstart, type Served } from './served.js';

/**
 * The reference server's argument names (issue 28, item 6): each of the ten tools called with
 * them answers exactly what it answers with ours, on a served quickstart run; an alias given
 * with the argument it stands for is refused naming both.
 */
let served: Served;
let session: Session;
const ids: Record<string, string> = {};

beforeAll(async () => {
  served = await servedQuickstart(['--duration', '2h']);
  session = await connectInMemory(envFor(served));
  await session.client.listTools();
  const topo = await session.call('service_list_topology', { depth: 6, include_devices: true });
  for (const n of topo.data.nodes as Array<{ id: string; name: string }>) ids[n.name] ??= n.id;
}, 120_000);

afterAll(async () => {
  await session?.close();
  await served?.close();
});

/** Pairs of calls, ours then the reference's names, that must answer the same. */
const pairs = (date: string): Array<[string, Record<string, unknown>, Record<string, unknown>]> => {
  const office = ids['Open office'] as string;
  return [
    [
      'service_search_assets',
      { query: 'office', types: ['room', 'zone'] },
      { query: 'office', asset_types: ['room', 'zone'] },
    ],
    ['service_get_asset_details', { ids: [office] }, { ids: [office], include_parent_context: true }],
    [
      'service_hardware_snapshot',
      { scope_id: ids.Ground, list: 'all', max_results: 3 },
      {
        scope_type: 'floor',
        scope_id: ids.Ground,
        include_battery_details: true,
        battery_status_filter: 'all',
        limit: 3,
        offline_devices_limit: 2,
      },
    ],
    ['service_hardware_snapshot', {}, { scope_type: 'org', include_battery_details: false }],
    ['service_available_rooms', { scope_id: ids.Ground }, { floor_id: ids.Ground }],
    ['service_available_rooms', { scope_id: ids.Main, min_capacity: 1 }, { building_id: ids.Main, min_capacity: 1 }],
    ['service_space_busyness', { ids: [office] }, { space_id_or_name: 'Open office', include_trend: true }],
    ['service_space_busyness', { ids: [ids.Kitchen] }, { space_id_or_name: 'kitchn' }],
    ['service_traffic_flow', { ids: [ids.Main] }, { space_id_or_name: 'Main', time_window: 'today' }],
    [
      'service_traffic_flow',
      { ids: [ids.Lobby], date },
      { space_id_or_name: ids.Lobby, time_window: 'custom', custom_start: `${date}T00:00:00Z`, custom_stop: 'now' },
    ],
    ['service_list_topology', { root_id: ids.Main, depth: 2 }, { asset_ids: [ids.Main], traversal_depth: 2 }],
    ['service_list_topology', { depth: 3 }, { starting_depth: 0, traversal_depth: 2 }],
    [
      'service_fetch_entity_details',
      { ids: [office, ids['Meeting room']], fields: ['name', 'capacity'] },
      { ids: [office, ids['Meeting room']], room_fields: ['name', 'capacity'], site_fields: ['timezone'] },
    ],
    [
      'service_get_occupancy_timeseries',
      { ids: [office], start: '-1h', stop: 'now', interval: '1m' },
      { asset_ids: [office], start: '-1h', stop: 'now', interval: '1m' },
    ],
    ['service_get_current_occupancy', { ids: [office, ids.Kitchen] }, { asset_ids: [office, ids.Kitchen] }],
  ];
};

describe("the reference server's argument names", () => {
  it('give each of the ten tools the same answer as ours', async () => {
    const today = (await session.call('service_traffic_flow', { ids: [ids.Main] })).data.date as unknown as string;
    const cases = pairs(today);
    expect(new Set(cases.map(([name]) => name)).size).toBe(10);
    for (const [name, ours, theirs] of cases) {
      const a = await session.call(name, ours);
      const b = await session.call(name, theirs);
      expect(a.isError, `${name}: ${a.text}`).toBe(false);
      expect(b.isError, `${name} ${JSON.stringify(theirs)}: ${b.text}`).toBe(false);
      expect([name, b.data]).toEqual([name, a.data]);
      expect(b.text).toBe(a.text);
    }
  });

  it('refuse an alias given with the argument it stands for, naming both', async () => {
    const office = ids['Open office'] as string;
    const cases: Array<[string, Record<string, unknown>, string[]]> = [
      ['service_get_current_occupancy', { ids: [office], asset_ids: [office] }, ['asset_ids', 'ids']],
      ['service_search_assets', { query: 'office', types: ['room'], asset_types: ['room'] }, ['asset_types', 'types']],
      ['service_list_topology', { root_id: ids.Main, asset_ids: [ids.Main] }, ['asset_ids', 'root_id']],
      ['service_list_topology', { depth: 2, traversal_depth: 1 }, ['traversal_depth', 'depth']],
      ['service_available_rooms', { scope_id: ids.Ground, floor_id: ids.Ground }, ['floor_id', 'scope_id']],
      ['service_space_busyness', { ids: [office], space_id_or_name: 'Open office' }, ['space_id_or_name', 'ids']],
      ['service_hardware_snapshot', { max_results: 3, limit: 3 }, ['limit', 'max_results']],
      [
        'service_fetch_entity_details',
        { ids: [office], fields: ['name'], room_fields: ['name'] },
        ['room_fields', 'fields'],
      ],
      ['service_traffic_flow', { ids: [ids.Main], date: '2026-01-05', time_window: 'today' }, ['time_window', 'date']],
    ];
    for (const [name, args, named] of cases) {
      const r = await session.call(name, args);
      expect([name, r.code]).toEqual([name, 'VALIDATION_FAILED']);
      for (const n of named) expect(r.text).toContain(n);
    }
  });

  it('refuse what ours cannot honour, saying what is offered', async () => {
    const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
      [
        'service_traffic_flow',
        { space_id_or_name: 'Main', time_window: '1h' },
        'VALIDATION_FAILED',
        /whole local days/,
      ],
      ['service_list_topology', { starting_depth: 2 }, 'VALIDATION_FAILED', /starting_depth/],
      ['service_list_topology', { asset_ids: [ids.Main, ids.Ground] }, 'VALIDATION_FAILED', /one root/],
      ['service_hardware_snapshot', { scope_type: 'site', scope_id: ids.Ground }, 'VALIDATION_FAILED', /is not a site/],
      ['service_hardware_snapshot', { scope_type: 'floor' }, 'VALIDATION_FAILED', /needs scope_id/],
      ['service_available_rooms', { building_id: ids.Main, floor_id: ids.Ground }, 'VALIDATION_FAILED', /give one/],
      ['service_available_rooms', { floor_id: 'room_x' }, 'VALIDATION_FAILED', /floor_id/],
      ['service_space_busyness', { space_id_or_name: 'Zzqxv wjkp' }, 'NOT_FOUND', /named like/],
      [
        'service_fetch_entity_details',
        { ids: [ids['Open office']], site_fields: ['name'] },
        'VALIDATION_FAILED',
        /room_fields/,
      ],
    ];
    for (const [name, args, code, text] of cases) {
      const r = await session.call(name, args);
      expect([name, r.code]).toEqual([name, code]);
      expect(r.text).toMatch(text);
    }
  });
});

describe('the published input schemas', () => {
  it('list every alias beside our names, and docs/mcp.md names each', () => {
    const doc = readFileSync(join(root, 'docs/mcp.md'), 'utf8');
    const listed = toolList();
    for (const tool of TOOLS) {
      const props = Object.keys(
        (listed.find((t) => t.name === tool.name)?.inputSchema.properties ?? {}) as Record<string, unknown>,
      );
      for (const alias of aliasNames(tool)) {
        expect(props, tool.name).toContain(alias);
        expect(doc, `docs/mcp.md names ${alias}`).toContain(`\`${alias}\``);
      }
    }
    expect(TOOLS.filter((t) => aliasNames(t).length > 0)).toHaveLength(10);
  });
});
