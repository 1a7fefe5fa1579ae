import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { median } from '../../src/mcp/occupancy.js';
import { toolList } from '../../src/mcp/server.js';
import { apiFor, type Api } from './api.js';
import { callOn, connectInMemory, envFor, type Session } from './connect.js';
import { servedQuickstart, type Served } from './served.js';

/**
 * Every tool over the SDK's in-memory transport against a served quickstart run (2 h, so the
 * office is occupied at the platform's present), checked against the HTTP API it wraps.
 */
const SEED = 1313;
let served: Served;
let session: Session;
let api: Api;
const ids: Record<string, string> = {};

beforeAll(async () => {
  served = await servedQuickstart(['--duration', '2h']);
  api = await apiFor(served);
  // A tag on two rooms, before the tool server reads (and caches) the topology.
  const tag = await api.graphql<{ createTag: { id: string } }>(
    'mutation { createTag(input: { name: "focus" }) { id } }',
  );
  session = await connectInMemory(envFor(served));
  await session.client.listTools();
  const topo = await session.call('service_list_topology', { depth: 6, include_devices: true });
  // Rooms come before the sensors named after them (tree order): keep the first of a name.
  for (const n of topo.data.nodes as Array<{ id: string; name: string }>) ids[n.name] ??= n.id;
  ids.tag = tag.createTag.id;
  await api.graphql(
    `mutation { associateTag(input: { ids: ["${ids.Kitchen}", "${ids.Lobby}"], tag_id: "${ids.tag}" }) { id } }`,
  );
  await session.close();
  session = await connectInMemory(envFor(served));
  await session.client.listTools();
}, 120_000);

afterAll(async () => {
  await session?.close();
  await served?.close();
});

/** Minimal valid arguments of every tool. */
const minimal = (): Record<string, Record<string, unknown>> => ({
  service_search_assets: { query: 'office' },
  service_get_asset_details: { ids: [ids['Open office']] },
  service_hardware_snapshot: {},
  service_available_rooms: {},
  service_space_busyness: { ids: [ids['Open office']] },
  service_traffic_flow: { ids: [ids.Main] },
  service_list_topology: {},
  service_fetch_entity_details: { ids: [ids['Open office']], fields: ['name'] },
  service_get_occupancy_timeseries: { ids: [ids['Open office']], start: '-2h' },
  service_get_current_occupancy: { ids: [ids['Open office']] },
});

/** The median of a space's last five 1m values before `asOf`, read from /api/v3/reporting. */
async function reportedMedian(
  kind: 'spaces' | 'rooms' | 'zones',
  measurement: string,
  id: string,
  asOf: string,
): Promise<number | null> {
  const stop = Date.parse(asOf);
  const r = await api.post<{ data: Array<{ start: string; value: number }> }>('/api/v3/reporting', {
    window: { every: '1m', function: 'max', timezone: 'Europe/Paris' },
    filter: {
      measurements: [measurement],
      [kind]: { eq: [id] },
      start: new Date(stop - 10 * 60_000).toISOString(),
      stop: asOf,
    },
  });
  return median(r.body.data.slice(-5).map((p) => p.value));
}

describe('every tool', () => {
  it('answers its minimal arguments with structured content valid against its output schema', async () => {
    for (const [name, args] of Object.entries(minimal())) {
      const r = await session.call(name, args);
      expect(r.isError, `${name}: ${r.text}`).toBe(false);
      expect(r.text.length).toBeGreaterThan(0);
    }
  });

  it('refuses unknown keys with VALIDATION_FAILED', async () => {
    for (const [name, args] of Object.entries(minimal())) {
      const r = await session.call(name, { ...args, verbose: true });
      expect([name, r.code]).toEqual([name, 'VALIDATION_FAILED']);
      expect(r.text).toContain('verbose');
    }
  });

  it('answers NOT_FOUND for an id the organisation does not have', async () => {
    const unknown = 'room_0000000000000000';
    const cases: Array<[string, Record<string, unknown>]> = [
      ['service_search_assets', { query: 'office', within_id: unknown }],
      ['service_get_asset_details', { ids: [ids['Open office'], unknown] }],
      ['service_hardware_snapshot', { scope_id: 'space_0000000000000000' }],
      ['service_available_rooms', { scope_id: 'space_0000000000000000' }],
      ['service_space_busyness', { ids: [unknown] }],
      ['service_traffic_flow', { ids: [unknown] }],
      ['service_list_topology', { root_id: unknown }],
      ['service_fetch_entity_details', { ids: [unknown], fields: ['name'] }],
      ['service_get_occupancy_timeseries', { ids: [unknown], start: '-1h' }],
      ['service_get_current_occupancy', { ids: [ids['Open office'], unknown] }],
    ];
    for (const [name, args] of cases) {
      const r = await session.call(name, args);
      expect([name, r.code]).toEqual([name, 'NOT_FOUND']);
      expect(r.text).not.toContain('Open office');
    }
  });

  it(`keeps ids within 1–50 unique and queries within 2–500 characters (fast-check seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 60 }), fc.boolean(), async (n, dup) => {
        const list = Array.from({ length: n }, (_, i) => `room_${String(i).padStart(16, '0')}`);
        if (dup && n > 0) list.push(list[0] as string);
        const r = await session.call('service_get_current_occupancy', { ids: list });
        const valid = n >= 1 && list.length <= 50 && !dup;
        expect(r.code).toBe(valid ? 'NOT_FOUND' : 'VALIDATION_FAILED');
      }),
      { seed: SEED, numRuns: 40 },
    );
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 520 }), async (len) => {
        const r = await session.call('service_search_assets', { query: 'o'.repeat(len), max_results: 1 });
        expect(r.code).toBe(len >= 2 && len <= 500 ? null : 'VALIDATION_FAILED');
      }),
      { seed: SEED, numRuns: 25 },
    );
    for (const [max, ok] of [
      [0, false],
      [1, true],
      [50, true],
      [51, false],
    ] as const) {
      expect((await session.call('service_search_assets', { query: 'office', max_results: max })).isError).toBe(!ok);
    }
  });
  it(`accept every integer bound the schemas publish and refuse one past it (fast-check seed ${SEED})`, async () => {
    const bounds = toolList().flatMap((t) =>
      Object.entries(
        (t.inputSchema.properties ?? {}) as Record<string, { type?: string; minimum?: number; maximum?: number }>,
      )
        .filter(([, p]) => p.type === 'integer' && p.minimum !== undefined && p.maximum !== undefined)
        .map(([key, p]) => ({ tool: t.name, key, min: p.minimum as number, max: p.maximum as number })),
    );
    expect(bounds.length).toBeGreaterThanOrEqual(6);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...bounds),
        fc.integer({ min: -3, max: 3 }),
        fc.boolean(),
        async (b, delta, high) => {
          const value = (high ? b.max : b.min) + delta;
          const r = await session.call(b.tool, { ...minimal()[b.tool], [b.key]: value });
          const inside = value >= b.min && value <= b.max;
          expect([b.tool, b.key, value, r.code === 'VALIDATION_FAILED']).toEqual([b.tool, b.key, value, !inside]);
        },
      ),
      { seed: SEED, numRuns: 60 },
    );
  });
});

describe('answers agree with the HTTP API on the same run', () => {
  it("service_list_topology is GraphQL's tree", async () => {
    const g = await api.graphql<{
      sites: {
        data: Array<{
          id: string;
          buildings: Array<{
            id: string;
            floors: Array<{
              id: string;
              rooms: Array<{ id: string }>;
              zones: Array<{ id: string; room_id: string | null }>;
            }>;
          }>;
        }>;
      };
    }>('{ sites { data { id buildings { id floors { id rooms { id } zones { id room_id } } } } } }');
    const edges = new Set<string>();
    for (const s of g.sites.data) {
      edges.add(`${s.id}<-null`);
      for (const b of s.buildings) {
        edges.add(`${b.id}<-${s.id}`);
        for (const f of b.floors) {
          edges.add(`${f.id}<-${b.id}`);
          for (const r of f.rooms) edges.add(`${r.id}<-${f.id}`);
          for (const z of f.zones) edges.add(`${z.id}<-${z.room_id ?? f.id}`);
        }
      }
    }
    const r = await session.call('service_list_topology', { depth: 6 });
    const got = new Set(
      (r.data.nodes as Array<{ id: string; parent_id: string | null }>).map((n) => `${n.id}<-${n.parent_id}`),
    );
    expect(got).toEqual(edges);
    expect(r.text).toContain('room Open office');
  });

  it('service_get_current_occupancy is the median of the last five minute values of /api/v3/reporting', async () => {
    const spaces: Array<[string, 'spaces' | 'rooms' | 'zones', string]> = [
      [ids.Ground as string, 'spaces', 'floor_occupancy'],
      ...['Lobby', 'Open office', 'Meeting room', 'Kitchen'].map((n): [string, 'rooms', string] => [
        ids[n] as string,
        'rooms',
        'room_occupancy',
      ]),
      [ids['Window desks'] as string, 'zones', 'zone_occupancy'],
    ];
    const r = await session.call('service_get_current_occupancy', { ids: spaces.map((s) => s[0]) });
    const asOf = r.data.as_of as unknown as string;
    const got = r.data.spaces as Array<{ id: string; occupancy: number; source: string; minutes: unknown[] }>;
    for (const [id, kind, m] of spaces) {
      const mine = got.find((s) => s.id === id);
      expect(mine?.source).toBe('presence');
      expect(mine?.minutes).toHaveLength(5);
      expect(mine?.occupancy).toBe(await reportedMedian(kind, m, id, asOf));
    }
    // At 09:59 the office is working: the snapshot is not trivially zero.
    expect(got.find((s) => s.id === ids['Open office'])?.occupancy).toBeGreaterThan(5);
  });

  it('service_traffic_flow sums the hourly traffic points of the day so far', async () => {
    const r = await session.call('service_traffic_flow', { ids: [ids.Ground] });
    const d = r.data as unknown as {
      from: string;
      to: string;
      totals: { in: number; out: number; net: number };
      hourly: Array<{ hour: string; in: number; out: number }>;
      peak_hour: { hour: string };
    };
    const raw = await api.post<{ data: Array<{ field: string; value: number }> }>('/api/v3/reporting', {
      window: { every: '1h', function: 'sum', timezone: 'Europe/Paris' },
      filter: { measurements: ['traffic'], spaces: { eq: [ids.Ground] }, start: d.from, stop: d.to },
    });
    const sum = (f: string): number => raw.body.data.filter((p) => p.field === f).reduce((a, p) => a + p.value, 0);
    expect(d.totals).toEqual({ in: sum('in'), out: sum('out'), net: sum('in') - sum('out') });
    expect(d.totals.in).toBeGreaterThan(0);
    expect(d.from).toBe('2026-03-01T23:00:00.000Z'); // local midnight in Paris
    const peak = d.hourly.reduce((a, h) => (h.in + h.out > a.in + a.out ? h : a));
    expect(d.peak_hour.hour).toBe(peak.hour);
  });

  it("service_space_busyness labels utilisation and reads the trend from the stats API's field", async () => {
    const r = await session.call('service_space_busyness', { ids: [ids['Open office'], ids.Ground] });
    const [office, ground] = r.data.spaces as Array<{
      occupancy: number;
      utilisation_pct: number | null;
      label: string | null;
      average_28d: number | null;
      trend: string | null;
      warnings: string[];
    }>;
    expect(office?.utilisation_pct).toBeCloseTo(((office?.occupancy ?? 0) / 24) * 100, 1);
    expect(office?.label).toBe(
      (office?.utilisation_pct ?? 0) < 30 ? 'quiet' : (office?.utilisation_pct ?? 0) < 70 ? 'moderate' : 'busy',
    );
    const stats = await api.post<{ data: Record<string, Record<string, number>> }>('/api/v4/reporting/stats', {
      measurements: ['occupancy_avg_presence'],
      items: [ids['Open office']],
      start: '2026-02-03',
      stop: '2026-03-03',
      filters: { time_ranges: [{ start: '09:00', stop: '10:00' }] },
    });
    const avg = stats.body.data[ids['Open office'] as string]?.occupancy_avg_presence as number;
    expect(office?.average_28d).toBe(avg);
    const pct = (((office?.occupancy ?? 0) - avg) / avg) * 100;
    expect(office?.trend).toBe(pct < -15 ? 'lighter' : pct > 15 ? 'busier' : 'typical');
    expect(ground?.label).toBeNull();
    expect(ground?.warnings.join(' ')).toContain('no capacity');
  });

  it("service_get_occupancy_timeseries returns the reporting API's windows", async () => {
    const r = await session.call('service_get_occupancy_timeseries', {
      ids: [ids['Open office']],
      start: '2026-03-02T07:00:00Z',
      stop: '2026-03-02T09:00:00Z',
      interval: '1h',
    });
    const raw = await api.post<{ data: Array<{ start: string; value: number }> }>('/api/v3/reporting', {
      window: { every: '1h', function: 'max', timezone: 'Europe/Paris' },
      filter: {
        measurements: ['room_occupancy'],
        rooms: { eq: [ids['Open office']] },
        start: '2026-03-02T07:00:00Z',
        stop: '2026-03-02T09:00:00Z',
      },
    });
    const [series] = r.data.series as Array<{ points: Array<{ time: string; value: number }> }>;
    expect(series?.points).toEqual(raw.body.data.map((p) => ({ time: p.start, value: p.value })));
    expect(
      (
        await session.call('service_get_occupancy_timeseries', {
          ids: [ids['Open office']],
          start: '-25h',
          interval: '1m',
        })
      ).code,
    ).toBe('VALIDATION_FAILED');
    expect(
      (
        await session.call('service_get_occupancy_timeseries', {
          ids: [ids['Open office']],
          start: '-32d',
          interval: '1h',
        })
      ).code,
    ).toBe('VALIDATION_FAILED');
    expect(
      (
        await session.call('service_get_occupancy_timeseries', {
          ids: [ids['Open office']],
          start: '-300d',
          interval: '1d',
        })
      ).isError,
    ).toBe(false);
    expect(
      (
        await session.call('service_get_occupancy_timeseries', {
          ids: [ids['Window desks']],
          start: '-1h',
          source: 'traffic',
        })
      ).code,
    ).toBe('VALIDATION_FAILED');
  });

  it("service_fetch_entity_details returns GraphQL's fields and refuses fields off the allow-list", async () => {
    const r = await session.call('service_fetch_entity_details', {
      ids: [ids['Open office'], ids['Front door counter']],
      fields: ['name', 'floor_id'],
    });
    const g = await api.graphql<{ rooms: { data: Array<{ name: string; floor_id: string }> } }>(
      'query($ids: [ID!]) { rooms(ids: $ids) { data { name floor_id } } }',
      { ids: [ids['Open office']] },
    );
    expect((r.data.entities as Array<{ fields: unknown }>)[0]?.fields).toEqual(g.rooms.data[0]);
    expect(
      (await session.call('service_fetch_entity_details', { ids: [ids['Open office']], fields: ['mac_address'] })).code,
    ).toBe('VALIDATION_FAILED');
    expect(
      (await session.call('service_fetch_entity_details', { ids: [ids['Open office']], fields: ['password'] })).code,
    ).toBe('VALIDATION_FAILED');
    expect(
      (await session.call('service_fetch_entity_details', { ids: [ids['Open office']], fields: ['name', 'name'] }))
        .code,
    ).toBe('VALIDATION_FAILED');
  });
});

describe('the other tools', () => {
  it('service_search_assets finds misspelt names and filters by type and mode', async () => {
    const r = await session.call('service_search_assets', { query: 'ofice' });
    expect((r.data.results as Array<{ name: string }>)[0]?.name).toBe('Open office');
    const t = await session.call('service_search_assets', { query: 'counter', sensor_mode: 'traffic' });
    expect((t.data.results as Array<{ name: string }>).map((x) => x.name).sort()).toEqual([
      'Front door counter',
      'Meeting door counter',
    ]);
    const rooms = await session.call('service_search_assets', { query: 'kitchen', types: ['room'] });
    expect((rooms.data.results as Array<{ type: string }>).every((x) => x.type === 'room')).toBe(true);
    expect((await session.call('service_search_assets', { query: 'office', types: ['desk'] })).code).toBe(
      'VALIDATION_FAILED',
    );
  });

  it('service_get_asset_details gives parent, children and devices for a batch', async () => {
    const r = await session.call('service_get_asset_details', {
      ids: [ids['Open office'], ids.Ground],
      include_devices: true,
    });
    const [office, ground] = r.data.assets as Array<{
      parent: { id: string };
      children: Array<{ name: string }>;
      devices: { sensors: unknown[]; hives: unknown[] };
      capacity: unknown;
    }>;
    expect(office?.parent.id).toBe(ids.Ground);
    expect(office?.capacity).toEqual({ max: 24, mid: 16 });
    expect(office?.children.map((c) => c.name)).toContain('Window desks');
    expect(office?.devices.sensors).toHaveLength(4);
    expect(ground?.devices).toMatchObject({ hives: [expect.anything()] });
    expect(ground?.devices.sensors).toHaveLength(9);
  });

  it('service_hardware_snapshot counts devices by status and battery rule', async () => {
    const r = await session.call('service_hardware_snapshot', { scope_id: ids.Ground, list: 'all', max_results: 500 });
    expect(r.data.sensors).toEqual({ total: 9, online: 9, offline: 0, not_streaming: 0, presence: 7, traffic: 2 });
    expect(r.data.hives).toMatchObject({ total: 1, online: 1 });
    // The scenario's sensors are battery powered; since issue 18 the API derives their change-by
    // dates from the batteries' health reports (was: no date, all "unknown"), and fresh
    // batteries a few hours into a run are a year or more from empty.
    expect(r.data.battery).toEqual({ no_battery: 0, unknown: 0, critical: 0, due_soon: 0, healthy: 9 });
    // Battery levels (spec §1 "battery levels"): fresh batteries two hours into a run, read from
    // the same health reports as GraphQL's battery_level, which the device rows carry.
    const levels = r.data.battery_levels as unknown as {
      reporting: number;
      lowest: number;
      median: number;
      below_warning: number;
      warning_percent: number;
    };
    expect(levels).toMatchObject({ reporting: 9, below_warning: 0, warning_percent: 20 });
    expect(levels.lowest).toBeGreaterThan(99);
    expect(levels.lowest).toBeLessThanOrEqual(levels.median);
    expect(levels.median).toBeLessThan(100);
    const gql = await api.graphql<{ sensors: { data: Array<{ id: string; battery_level: number }> } }>(
      '{ sensors { data { id battery_level } } }',
    );
    const byId = new Map(gql.sensors.data.map((s) => [s.id, s.battery_level]));
    for (const d of r.data.devices as Array<{ id: string; type: string; battery_level: number | null }>)
      expect(d.battery_level).toBe(d.type === 'sensor' ? byId.get(d.id) : null);
    expect(
      Math.min(
        ...(r.data.devices as Array<{ battery_level: number | null }>).flatMap((d) =>
          d.battery_level === null ? [] : [d.battery_level],
        ),
      ),
    ).toBe(levels.lowest);
    // Every sensor counts as low when the warning level is above every level.
    const strict = await session.call('service_hardware_snapshot', {
      scope_id: ids.Ground,
      list: 'none',
      battery_warning_percent: 100,
    });
    expect(strict.data.battery_levels).toMatchObject({ reporting: 9, below_warning: 9, warning_percent: 100 });
    expect((await session.call('service_hardware_snapshot', { battery_warning_percent: 0 })).code).toBe(
      'VALIDATION_FAILED',
    );
    expect(r.data.devices).toHaveLength(10);
    expect((await session.call('service_hardware_snapshot', { scope_id: ids['Open office'] })).code).toBe('NOT_FOUND');
  });

  it('service_available_rooms lists rooms at exactly 0 now, largest first, by capacity and tag', async () => {
    const r = await session.call('service_available_rooms', { max_results: 100 });
    const free = r.data.rooms as Array<{ id: string; capacity_max: number | null; tags: string[] }>;
    const now = await session.call('service_get_current_occupancy', {
      ids: ['Lobby', 'Open office', 'Meeting room', 'Kitchen'].map((n) => ids[n]),
    });
    const empty = (now.data.spaces as Array<{ id: string; occupancy: number }>)
      .filter((s) => s.occupancy === 0)
      .map((s) => s.id);
    expect(free.map((x) => x.id).sort()).toEqual(empty.sort());
    expect(free.map((x) => x.id)).not.toContain(ids['Open office']);
    const caps = free.map((x) => x.capacity_max ?? -1);
    expect(caps).toEqual([...caps].sort((a, b) => b - a));
    const tagged = await session.call('service_available_rooms', { tags: ['focus'] });
    expect((tagged.data.rooms as Array<{ tags: string[] }>).every((x) => x.tags.includes('focus'))).toBe(true);
    const big = await session.call('service_available_rooms', { min_capacity: 100 });
    expect(big.data.rooms).toEqual([]);
    expect((await session.call('service_available_rooms', { min_capacity: 10, max_capacity: 5 })).code).toBe(
      'VALIDATION_FAILED',
    );
  });
});

describe("the served run's /mcp", () => {
  it("answers the same as the stdio code path, over Streamable HTTP with the API's token", async () => {
    const client = new Client({ name: 'occusim-http-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${served.api}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${api.token}` } },
      }),
    );
    try {
      await client.listTools();
      const args = { ids: [ids.Ground, ids['Open office'], ids['Window desks']] };
      const overHttp = await callOn(client, 'service_get_current_occupancy', args);
      const inMemory = await session.call('service_get_current_occupancy', args);
      expect(overHttp.isError).toBe(false);
      expect(overHttp.data).toEqual(inMemory.data);
    } finally {
      await client.close();
    }
  });
});
