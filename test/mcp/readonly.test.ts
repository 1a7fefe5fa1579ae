import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertQueryOnly, Platform } from '../../src/mcp/platform.js';
import type { HttpPort } from '../../src/mcp/http-port.js';
import { PresentedToken } from '../../src/mcp/auth.js';
import { connectInMemory, envFor, type Session } from './connect.js';
import { servedQuickstart, type Served } from './served.js';

/**
 * Read-only by construction (issue 13, item 5): a session calling every tool with many
 * arguments leaves every table of the served store byte-for-byte unchanged, and the platform
 * client refuses any GraphQL document that is not a query before it is sent.
 */
let served: Served;
let session: Session;

beforeAll(async () => {
  served = await servedQuickstart(['--duration', '90m']);
  // No caches: every call reaches the API.
  session = await connectInMemory({
    ...envFor(served),
    SERVICE_TOPOLOGY_CACHE_TTL_S: '0',
    SERVICE_OCCUPANCY_CACHE_TTL_S: '0',
  });
  await session.client.listTools();
}, 120_000);

afterAll(async () => {
  await session?.close();
  await served?.close();
});

function digest(dbPath: string): Record<string, string> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{
      name: string;
    }>;
    return Object.fromEntries(
      tables.map(({ name }) => {
        const h = createHash('sha256');
        for (const row of db.prepare(`SELECT * FROM "${name}"`).iterate())
          h.update(JSON.stringify(row, (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('base64') : v)));
        return [name, h.digest('hex')];
      }),
    );
  } finally {
    db.close();
  }
}

describe('the tool server is read-only', () => {
  it('leaves every table of the store unchanged after a session calling every tool with many arguments', async () => {
    const before = digest(served.dbPath);
    expect(Object.keys(before).length).toBeGreaterThan(3);
    const topo = await session.call('service_list_topology', { depth: 6, include_devices: true });
    const nodes = topo.data.nodes as Array<{ id: string; type: string }>;
    const of = (t: string): string[] => nodes.filter((n) => n.type === t).map((n) => n.id);
    const spaces = [...of('floor'), ...of('room'), ...of('zone')];
    const calls: Array<[string, Record<string, unknown>]> = [];
    for (const q of ['office', 'ofice', 'kitchen', 'door counter', 'HQ', 'zz', 'x'.repeat(500)])
      calls.push(['service_search_assets', { query: q, max_results: 50 }]);
    for (const t of ['site', 'building', 'floor', 'room', 'zone', 'hive', 'sensor'])
      calls.push(['service_search_assets', { query: 'in', types: [t] }]);
    calls.push(['service_get_asset_details', { ids: nodes.slice(0, 50).map((n) => n.id), include_devices: true }]);
    for (const scope of [undefined, ...of('site'), ...of('building'), ...of('floor')]) {
      calls.push(['service_hardware_snapshot', { ...(scope ? { scope_id: scope } : {}), list: 'all' }]);
      calls.push(['service_available_rooms', { ...(scope ? { scope_id: scope } : {}), min_capacity: 0 }]);
    }
    calls.push(['service_space_busyness', { ids: spaces }]);
    for (const id of [...of('site'), ...of('building'), ...of('floor'), ...of('room')])
      calls.push(['service_traffic_flow', { ids: [id] }]);
    calls.push(['service_traffic_flow', { ids: of('floor'), date: '2026-03-01' }]);
    for (const depth of [1, 2, 3, 4, 5, 6])
      calls.push(['service_list_topology', { depth, include_devices: depth > 3 }]);
    calls.push([
      'service_fetch_entity_details',
      { ids: of('sensor'), fields: ['name', 'mode', 'is_online', 'last_heartbeat'] },
    ]);
    calls.push([
      'service_fetch_entity_details',
      { ids: of('room'), fields: ['name', 'capacity', 'area', 'coordinates'] },
    ]);
    for (const interval of ['1m', '1h', '1d'])
      calls.push([
        'service_get_occupancy_timeseries',
        { ids: spaces, start: interval === '1m' ? '-3h' : '-10d', interval },
      ]);
    calls.push([
      'service_get_occupancy_timeseries',
      { ids: of('room'), start: '-3h', source: 'traffic', function: 'mean' },
    ]);
    for (const source of ['auto', 'presence', 'traffic'])
      calls.push(['service_get_current_occupancy', { ids: spaces, source }]);
    calls.push(['service_get_current_occupancy', { ids: ['room_0000000000000000'], bogus: 1 }]);
    let answered = 0;
    for (const [name, args] of calls) {
      const r = await session.call(name, args);
      if (!r.isError) answered++;
    }
    // All but the last (its unknown key is refused) answer with data.
    expect(answered).toBe(calls.length - 1);
    // Without caches the answers are still real data (not the empty fallback).
    const now = await session.call('service_get_current_occupancy', { ids: of('room') });
    expect((now.data.spaces as Array<{ occupancy: number | null }>).every((x) => x.occupancy !== null)).toBe(true);
    expect(digest(served.dbPath)).toEqual(before);
  });

  it('refuses mutations and subscriptions before anything is sent', async () => {
    expect(() => assertQueryOnly('mutation { createTag(input: { name: "x" }) { id } }')).toThrow(/read-only/);
    expect(() =>
      assertQueryOnly('query A { sites { data { id } } } mutation B { deleteSensors(ids: ["s"]) { name } }'),
    ).toThrow(/read-only/);
    expect(() => assertQueryOnly('subscription { x }')).toThrow(/read-only/);
    expect(() => assertQueryOnly('{ sites { data { id } } }')).not.toThrow();
    const sent: string[] = [];
    const spy: HttpPort = { post: async (path) => (sent.push(path), { status: 200, body: { data: {} }, text: '{}' }) };
    const platform = new Platform(spy, new PresentedToken('t'));
    await expect(platform.query('mutation { createTag(input: { name: "x" }) { id } }')).rejects.toThrow(/read-only/);
    expect(sent).toEqual([]);
    // The client's whole surface: queries, reporting, stats. No method reaches /api/v1/client.
    expect(Object.getOwnPropertyNames(Platform.prototype).sort()).toEqual(['constructor', 'query', 'report', 'stats']);
  });
});
