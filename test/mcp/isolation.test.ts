import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_AUDIENCE } from '../../src/api/server.js';
import { request } from 'node:http';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { apiFor } from './api.js';
import { callOn, connectInMemory, type Session } from './connect.js';
import { twoOrganisations } from './served.js';

/**
 * One API serving two organisations: the tools of one never show the other's data, over the
 * in-memory transport (stdio's code path) and over Streamable HTTP at /mcp.
 */
let platform: Awaited<ReturnType<typeof twoOrganisations>>;
let session: Session;

const creds = (m: ScenarioModel) => ({
  api: platform.api,
  clientId: m.clients[0]?.clientId ?? '',
  clientSecret: m.clients[0]?.secret ?? '',
  audience: DEFAULT_AUDIENCE,
});

beforeAll(async () => {
  platform = await twoOrganisations();
  const c = creds(platform.own);
  session = await connectInMemory({
    SERVICE_CLIENT_ID: c.clientId,
    SERVICE_CLIENT_SECRET: c.clientSecret,
    SERVICE_BASE_URL: platform.api,
  });
  await session.client.listTools();
}, 60_000);

afterAll(async () => {
  await session?.close();
  await platform?.close();
});

function othersIds(m: ScenarioModel) {
  return {
    site: m.sites[0]?.id as string,
    building: m.buildings[0]?.id as string,
    floor: m.floors[0]?.id as string,
    room: m.rooms[0]?.id as string,
    zone: m.zones[0]?.id as string,
    sensor: m.sensors[0]?.id as string,
    hive: m.hives[0]?.id as string,
  };
}

describe("another organisation's id", () => {
  it('is NOT_FOUND in every tool, never data', async () => {
    const o = othersIds(platform.other);
    const cases: Array<[string, Record<string, unknown>]> = [
      ['service_search_assets', { query: 'room', within_id: o.building }],
      ...Object.values(o).map((id): [string, Record<string, unknown>] => ['service_get_asset_details', { ids: [id] }]),
      ['service_hardware_snapshot', { scope_id: o.floor }],
      ['service_available_rooms', { scope_id: o.site }],
      ['service_space_busyness', { ids: [o.room] }],
      ['service_traffic_flow', { ids: [o.floor] }],
      ['service_list_topology', { root_id: o.building }],
      ...Object.values(o).map((id): [string, Record<string, unknown>] => [
        'service_fetch_entity_details',
        { ids: [id], fields: ['name'] },
      ]),
      ['service_get_occupancy_timeseries', { ids: [o.zone], start: '-1h' }],
      ['service_get_current_occupancy', { ids: [o.room, o.floor] }],
    ];
    const names = new Set(
      [...platform.other.rooms, ...platform.other.floors, ...platform.other.sensors].map((x) => x.name),
    );
    for (const [name, args] of cases) {
      const r = await session.call(name, args);
      expect([name, r.code]).toEqual([name, 'NOT_FOUND']);
      for (const n of names) if (n.length > 4) expect(r.text).not.toContain(`(${n})`);
    }
    // And nothing of the other organisation is listed or found.
    const topo = await session.call('service_list_topology', { depth: 6, include_devices: true, max_nodes: 5000 });
    const listed = new Set((topo.data.nodes as Array<{ id: string }>).map((n) => n.id));
    for (const id of Object.values(o)) expect(listed.has(id)).toBe(false);
  });
});

describe('Streamable HTTP at /mcp', () => {
  const connect = async (token: string): Promise<Client> => {
    const client = new Client({ name: 'occusim-http-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${platform.api}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    return client;
  };

  it('serves the ten tools to a bearer of a token, each organisation its own', async () => {
    const mine = await apiFor(creds(platform.own));
    const theirs = await apiFor(creds(platform.other));
    const a = await connect(mine.token);
    const b = await connect(theirs.token);
    try {
      const { tools } = await a.listTools();
      expect(tools).toHaveLength(10);
      await b.listTools();
      const ta = await callOn(a, 'service_list_topology', { depth: 1 });
      const tb = await callOn(b, 'service_list_topology', { depth: 1 });
      expect((ta.data.nodes as Array<{ id: string }>).map((n) => n.id)).toEqual(platform.own.sites.map((s) => s.id));
      expect((tb.data.nodes as Array<{ id: string }>).map((n) => n.id)).toEqual(platform.other.sites.map((s) => s.id));
      expect((await callOn(a, 'service_get_asset_details', { ids: [platform.other.rooms[0]?.id] })).code).toBe(
        'NOT_FOUND',
      );
      expect((await callOn(a, 'service_search_assets', { query: 'office', bogus: 1 })).code).toBe('VALIDATION_FAILED');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('refuses a missing or bad token (401 with WWW-Authenticate), foreign origins (403), and GET (405)', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const post = (headers: Record<string, string>) =>
      fetch(`${platform.api}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(init),
      });
    const none = await post({});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect((await post({ authorization: 'Bearer not-a-token' })).status).toBe(401);
    const token = (await apiFor(creds(platform.own))).token;
    expect((await post({ authorization: `Bearer ${token}`, origin: 'http://evil.example' })).status).toBe(403);
    const ok = await post({ authorization: `Bearer ${token}`, origin: 'http://localhost:3000' });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe(
      'occusim-mcp',
    );
    expect((await fetch(`${platform.api}/mcp`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(405);
  });

  it('refuses Host and Origin both set to a foreign name (the DNS-rebinding shape), token or not', async () => {
    const token = (await apiFor(creds(platform.own))).token;
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const url = new URL(`${platform.api}/mcp`);
    // node:http, not fetch: fetch may not set Host, and a rebinding browser does send a foreign one.
    const post = (headers: Record<string, string>): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              authorization: `Bearer ${token}`,
              ...headers,
            },
          },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(init));
      });
    const rebound = await post({ host: `evil.example:${url.port}`, origin: `http://evil.example:${url.port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toContain('FORBIDDEN');
    expect((await post({ host: `evil.example:${url.port}` })).status).toBe(403);
    expect((await post({ origin: 'null' })).status).toBe(403);
    // This server's own address, as a browser on it sends it, is served.
    expect((await post({ host: url.host, origin: `http://${url.host}` })).status).toBe(200);
  });
});
