import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ID_FILTERS, MEASUREMENTS } from '../../src/api/reporting/request.js';
import { callOn } from '../mcp/connect.js';
import { report } from './budget.js';
import { servedTwoTenants, type Served, type Tenant } from './served.js';

/**
 * The isolation matrix (issue 16, finding 11): every REST route, GraphQL query and mutation,
 * reporting filter, stats item, webhook subscription and MCP tool, called by each of two
 * organisations' principals on the other's ids. Two rules, checked on every answer:
 * - no leak: the answer holds none of the other organisation's ids, serials, MACs, client
 *   ids or user names, other than those the caller sent;
 * - no oracle: the answer is the same as for ids that do not exist (the other's ids with
 *   their suffix reversed), so a caller cannot even learn that an id exists elsewhere.
 * The suite refuses to pass if a route, query, mutation, ID filter or tool is not exercised.
 */
let s: Served;
let receiver: Server;
let receiverUrl: string;
const received: Array<{ path: string; body: string }> = [];

beforeAll(async () => {
  s = await servedTwoTenants();
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await new Promise((r) => receiver?.close(r));
  await s?.close();
});

interface Probe {
  covers: string;
  text: string;
}

/** An id that does not exist, shaped like `id`: its suffix after the prefix reversed. */
const ghostOf = (id: string): string => {
  const i = id.indexOf('_');
  return i < 0 ? [...id].reverse().join('') : `${id.slice(0, i + 1)}${[...id.slice(i + 1)].reverse().join('')}`;
};

type Ids = Tenant['ids'] & { tag: string; webhook: string; client: string; username: string };

function ghostIds(ids: Ids): Ids {
  return Object.fromEntries(Object.entries(ids).map(([k, v]) => [k, v === null ? null : ghostOf(v)])) as Ids;
}

/** Replaces every value the caller sent by a placeholder: echoing the caller's own input is no leak. */
function scrub(text: string, ids: Ids): string {
  let out = text;
  for (const v of Object.values(ids)
    .filter((x): x is string => typeof x === 'string')
    .sort((x, y) => y.length - x.length))
    out = out.replaceAll(v, '<input>');
  return out;
}

const tenantIds = new Map<Tenant, Ids>();

async function gql(token: string, query: string, variables: Record<string, unknown> = {}): Promise<string> {
  const res = await s.app.inject({
    method: 'POST',
    url: '/api/v3/graphql',
    headers: { authorization: `Bearer ${token}` },
    payload: { query, variables },
  });
  expect(res.statusCode, query).toBeLessThan(500);
  return `${res.statusCode} ${res.body}`;
}

async function rest(
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  token: string | null,
  payload?: unknown,
): Promise<string> {
  const res = await s.app.inject({
    method,
    url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
  expect(res.statusCode, `${method} ${url}`).toBeLessThan(500);
  return `${res.statusCode} ${res.body}`;
}

/** Probes of one direction: `me` calling with the ids in `o` (the other organisation's, or ghosts). */
type Family = (me: Tenant, o: Ids) => Promise<Probe[]>;

const SENSOR_FIELDS = 'id name floor_id room_id hive_id hive_serial mac_address';

const queries: Family = async (me, o) => {
  const q = (covers: string, query: string, vars: Record<string, unknown> = {}) =>
    gql(me.token, query, vars).then((text) => ({ covers, text }));
  return Promise.all([
    q('Query.sites', '{ sites { data { id name buildings { id floors { id } } } } }'),
    q('Query.buildings', '{ buildings { data { id name floors { id } } } }'),
    q('Query.floors', '{ floors { data { id rooms { id } zones { id } } } }'),
    q('Query.rooms', '{ rooms { data { id name } } }'),
    q('Query.zones', '{ zones { data { id name } } }'),
    q('Query.hives', '{ hives { data { id serial_number } } }'),
    q('Query.sensors', `{ sensors { data { ${SENSOR_FIELDS} } } }`),
    q('Query.tags', '{ tags { id name } }'),
    q('Query.webhooks', '{ webhooks { id name filters } }'),
    q('Query.site', 'query($i: ID) { site(id: $i) { id name } }', { i: o.site }),
    q('Query.building', 'query($i: ID) { building(id: $i) { id name } }', { i: o.building }),
    q('Query.floor', 'query($i: ID) { floor(id: $i) { id name sensors { id } } }', { i: o.floor }),
    q('Query.room', 'query($i: ID) { room(id: $i) { id name } }', { i: o.room }),
    q('Query.zone', 'query($i: ID) { zone(id: $i) { id name } }', { i: o.zone }),
    q('Query.floors', 'query($i: [String!]) { floors(ids: $i) { data { id } } }', { i: [o.floor] }),
    q('Query.rooms', 'query($i: [String!]) { rooms(ids: $i) { data { id } } }', { i: [o.room] }),
    q('Query.zones', 'query($i: [String!]) { zones(ids: $i) { data { id } } }', { i: [o.zone] }),
    q(
      'Query.hives',
      'query($i: [String!], $s: [String!]) { hives(ids: $i) { data { id } } bySerial: hives(serial_numbers: $s) { data { id } } }',
      { i: [o.hive], s: [o.serial] },
    ),
    q(
      'Query.sensors',
      `query($i: [String!], $m: [String!], $f: [String!], $r: [String!], $h: [String!], $s: [String!]) {
      byId: sensors(ids: $i) { data { ${SENSOR_FIELDS} } } byMac: sensors(mac_addresses: $m) { data { id } } byFloor: sensors(floor_ids: $f) { data { id } }
      byRoom: sensors(room_ids: $r) { data { id } } byHive: sensors(hive_ids: $h) { data { id } } bySerial: sensors(hive_serials: $s) { data { id } } }`,
      { i: [o.sensor], m: [o.mac], f: [o.floor], r: [o.room], h: [o.hive], s: [o.serial] },
    ),
    q('Query.tags', 'query($i: [String!]) { tags(ids: $i) { id name } }', { i: [o.tag] }),
    q('Query.floorsByTag', 'query($t: [String!]!) { floorsByTag(tagIDs: $t) { data { id } } }', { t: [o.tag] }),
    q('Query.roomsByTag', 'query($t: [String!]!) { roomsByTag(tagIDs: $t) { data { id } } }', { t: [o.tag] }),
    q('Query.zonesByTag', 'query($t: [String!]!) { zonesByTag(tagIDs: $t) { data { id } } }', { t: [o.tag] }),
  ]);
};

/** Mutations on the other's ids, in sequence (each must change nothing). */
const mutations: Family = async (me, o) => {
  const mine = tenantIds.get(me)!;
  const out: Probe[] = [];
  const q = async (covers: string, query: string, vars: Record<string, unknown>) => {
    const text = await gql(me.token, query, vars);
    expect(text, covers).toMatch(/"code":"(WEBHOOK_)?NOT_FOUND"/);
    out.push({ covers, text });
  };
  const square = [
    [0, 0],
    [1, 0],
    [1, 1],
    [0, 1],
  ];
  await q(
    'Mutation.createFloors',
    'mutation($b: ID!) { createFloors(input: [{ building_id: $b, name: "x" }]) { id } }',
    { b: o.building },
  );
  await q(
    'Mutation.createRooms',
    'mutation($f: ID!, $c: [[Float!]!]!) { createRooms(input: [{ floor_id: $f, name: "x", coordinates: $c }]) { id } }',
    { f: o.floor, c: square },
  );
  await q(
    'Mutation.createZones',
    'mutation($f: ID!, $c: [[Float!]!]!) { createZones(input: [{ floor_id: $f, name: "x", coordinates: $c }]) { id } }',
    { f: o.floor, c: square },
  );
  await q(
    'Mutation.createZones',
    'mutation($f: ID!, $r: ID, $c: [[Float!]!]!) { createZones(input: [{ floor_id: $f, room_id: $r, name: "x", coordinates: $c }]) { id } }',
    { f: mine.floor, r: o.room, c: square },
  );
  await q(
    'Mutation.createHives',
    'mutation($f: ID!) { createHives(input: [{ floor_id: $f, name: "x", serial_number: "HVX" }]) { id } }',
    { f: o.floor },
  );
  await q(
    'Mutation.createSensors',
    'mutation($f: ID!, $h: ID!) { createSensors(input: [{ floor_id: $f, hive_id: $h, name: "x", mode: "presence", center: [1, 1] }]) { id } }',
    { f: mine.floor, h: o.hive },
  );
  await q(
    'Mutation.createSensors',
    'mutation($f: ID!, $h: ID!, $r: ID) { createSensors(input: [{ floor_id: $f, hive_id: $h, room_id: $r, name: "x", mode: "presence", center: [1, 1] }]) { id } }',
    { f: mine.floor, h: mine.hive, r: o.room },
  );
  await q(
    'Mutation.updateSiteInfo',
    'mutation($i: ID!) { updateSiteInfo(input: { id: $i, name: "pwned" }) { site { id } } }',
    { i: o.site },
  );
  await q(
    'Mutation.updateBuildingInfo',
    'mutation($i: ID!) { updateBuildingInfo(input: { id: $i, name: "pwned" }) { building { id } } }',
    { i: o.building },
  );
  await q(
    'Mutation.updateFloorInfo',
    'mutation($i: ID!) { updateFloorInfo(input: { id: $i, name: "pwned" }) { floor { id } } }',
    { i: o.floor },
  );
  await q(
    'Mutation.updateSensors',
    'mutation($i: ID!) { updateSensors(sensors: [{ sensor_id: $i, name: "pwned" }]) { sensor_id } }',
    { i: o.sensor },
  );
  await q('Mutation.updateRooms', 'mutation($i: ID!) { updateRooms(input: [{ id: $i, name: "pwned" }]) { id } }', {
    i: o.room,
  });
  await q('Mutation.updateZones', 'mutation($i: ID!) { updateZones(input: [{ id: $i, name: "pwned" }]) { id } }', {
    i: o.zone,
  });
  await q(
    'Mutation.associateTag',
    'mutation($i: [String!]!, $t: ID!) { associateTag(input: { ids: $i, tag_id: $t }) { id } }',
    { i: [mine.room], t: o.tag },
  );
  await q(
    'Mutation.associateTag',
    'mutation($i: [String!]!, $t: ID!) { associateTag(input: { ids: $i, tag_id: $t }) { id } }',
    { i: [o.room], t: mine.tag },
  );
  await q(
    'Mutation.disassociateTag',
    'mutation($i: [String!]!, $t: ID!) { disassociateTag(input: { ids: $i, tag_id: $t }) { id } }',
    { i: [o.room], t: o.tag },
  );
  await q(
    'Mutation.updateWebhooks',
    'mutation($i: ID!) { updateWebhooks(input: [{ id: $i, name: "pwned" }]) { id } }',
    { i: o.webhook },
  );
  // deleteWebhooks answers a Boolean: false for ids that are not the caller's.
  const del = await gql(me.token, 'mutation($i: [String!]!) { deleteWebhooks(ids: $i) }', { i: [o.webhook] });
  expect(del).not.toMatch(/"deleteWebhooks":true/);
  out.push({ covers: 'Mutation.deleteWebhooks', text: del });
  const operator = await s.tokens.issueAccess({
    sub: me.clientId,
    orgId: me.org.id,
    clientId: me.clientId,
    scopes: new Set(['delete:sensors']),
    kind: 'client',
    operator: true,
  });
  const text = await gql(operator.token, 'mutation($i: [String!]!) { deleteSensors(ids: $i) { sensor_id } }', {
    i: [o.sensor],
  });
  expect(text).toMatch(/"code":"NOT_FOUND"/);
  out.push({ covers: 'Mutation.deleteSensors', text });
  return out;
};

const REPORTING_IDS: Record<(typeof ID_FILTERS)[number], keyof Ids> = {
  spaces: 'floor',
  rooms: 'room',
  zones: 'zone',
  buildings: 'building',
  sensors: 'sensor',
  hives: 'hive',
  tags: 'tag',
};

const reporting: Family = async (me, o) => {
  const start = new Date(s.model.startMs).toISOString();
  const stop = new Date(s.model.startMs + 30 * 60_000).toISOString();
  const out: Probe[] = [];
  for (const f of ID_FILTERS) {
    for (const m of MEASUREMENTS) {
      const body = {
        window: { every: '1m', function: 'max', timezone: 'UTC' },
        filter: { measurements: [m], [f]: { eq: [o[REPORTING_IDS[f]]] }, start, stop },
      };
      out.push({ covers: `reporting.${f}`, text: await rest('POST', '/api/v3/reporting', me.token, body) });
    }
  }
  for (const k of ['floor', 'room', 'zone'] as const) {
    const body = {
      measurements: ['occupancy_avg_presence', 'occupancy_used_median_traffic'],
      items: [o[k]],
      start: start.slice(0, 10),
      stop: '2026-03-03',
    };
    out.push({
      covers: 'POST /api/v4/reporting/stats',
      text: await rest('POST', '/api/v4/reporting/stats', me.token, body),
    });
  }
  return out;
};

const routes: Family = async (me, o) => {
  const q = encodeURIComponent(`{ room(id: "${o.room}") { id name } }`);
  return [
    { covers: 'GET /api/v1/client', text: await rest('GET', '/api/v1/client', me.token) },
    { covers: 'GET /api/v1/client/:id', text: await rest('GET', `/api/v1/client/${o.client}`, me.token) },
    { covers: 'DELETE /api/v1/client/:id', text: await rest('DELETE', `/api/v1/client/${o.client}`, me.token) },
    // A login with the other's user name or client id and a wrong secret: as for names that do not exist.
    {
      covers: 'POST /api/v2/login',
      text: await rest('POST', '/api/v2/login', null, {
        grant_type: 'password',
        username: o.username,
        password: 'wrong-password',
        audience: 'https://api.occusim.local',
        client_id: 'client_occusim_dashboard',
      }),
    },
    {
      covers: 'POST /api/v2/clients/login',
      text: await rest('POST', '/api/v2/clients/login', null, {
        grant_type: 'client_credentials',
        client_id: o.client,
        client_secret: 'wrong-secret',
        audience: 'https://api.occusim.local',
      }),
    },
    { covers: 'GET /api/v3/graphql', text: await rest('GET', `/api/v3/graphql?query=${q}`, me.token) },
    {
      covers: 'POST /api/v3/graphql',
      text: await gql(me.token, 'query($i: ID) { room(id: $i) { id } }', { i: o.room }),
    },
    { covers: 'GET /api/openapi.json', text: await rest('GET', '/api/openapi.json', null) },
    { covers: 'GET /api/docs', text: await rest('GET', '/api/docs', null) },
    // The browsable API's pages and documents (Swagger UI): public and organisation-free.
    { covers: 'GET /api/docs/', text: await rest('GET', '/api/docs/', null) },
    { covers: 'GET /api/docs/json', text: await rest('GET', '/api/docs/json', null) },
    { covers: 'GET /api/docs/yaml', text: await rest('GET', '/api/docs/yaml', null) },
    { covers: 'GET /api/docs/static/index.html', text: await rest('GET', '/api/docs/static/index.html', null) },
    {
      covers: 'GET /api/docs/static/swagger-initializer.js',
      text: await rest('GET', '/api/docs/static/swagger-initializer.js', null),
    },
    {
      covers: 'GET /api/docs/static/theme/occusim-login.js',
      text: await rest('GET', '/api/docs/static/theme/occusim-login.js', null),
    },
    { covers: 'GET /api/docs/*', text: await rest('GET', '/api/docs/static/swagger-ui.css', null) },
    // The GraphQL IDE (on by default, as the served API has it): public and organisation-free too.
    { covers: 'GET /api/graphiql', text: await rest('GET', '/api/graphiql', null) },
    {
      covers: 'GET /api/graphiql/assets/:file',
      text: await rest('GET', '/api/graphiql/assets/graphiql.js', null),
    },
    { covers: 'GET /.well-known/jwks.json', text: await rest('GET', '/.well-known/jwks.json', null) },
    { covers: 'GET /mcp', text: await rest('GET', '/mcp', me.token) },
    { covers: 'DELETE /mcp', text: (await rest('DELETE', '/mcp', me.token)).replace(/mcp-session-id[^,]*/gi, '') },
  ];
};

const mcpCalls = (o: Ids): Array<[string, Record<string, unknown>]> => [
  ['service_search_assets', { query: 'office', within_id: o.building }],
  ['service_get_asset_details', { ids: [o.room, o.floor, o.sensor, o.hive] }],
  ['service_hardware_snapshot', { scope_id: o.floor }],
  ['service_available_rooms', { scope_id: o.site }],
  ['service_space_busyness', { ids: [o.room] }],
  ['service_traffic_flow', { ids: [o.floor] }],
  ['service_list_topology', { root_id: o.building }],
  ['service_fetch_entity_details', { ids: [o.zone], fields: ['name'] }],
  ['service_get_occupancy_timeseries', { ids: [o.zone], start: '-1h' }],
  ['service_get_current_occupancy', { ids: [o.room, o.floor] }],
  // Unscoped: the caller's own world only.
  ['service_list_topology', { depth: 6, include_devices: true, max_nodes: 5000 }],
  ['service_search_assets', { query: 'HQ' }],
];

async function mcpFamily(me: Tenant, o: Ids, tools: Set<string>): Promise<Probe[]> {
  const client = new Client({ name: 'occusim-isolation', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${me.token}` } },
    }),
  );
  try {
    for (const t of (await client.listTools()).tools) tools.add(t.name);
    const out: Probe[] = [];
    for (const [name, args] of mcpCalls(o)) {
      const r = await callOn(client, name, args);
      out.push({ covers: `mcp.${name}`, text: `${r.code ?? ''} ${r.text} ${JSON.stringify(r.data)}` });
    }
    return out;
  } finally {
    await client.close();
  }
}

/** Runs a family against the other's ids and against ghosts; returns leaks and oracle differences. */
async function compare(name: string, other: Tenant, run: (o: Ids) => Promise<Probe[]>, tally: Tally): Promise<void> {
  const o = tenantIds.get(other)!;
  const real = await run(o);
  const ghost = await run(ghostIds(o));
  real.forEach((p, i) => {
    tally.probes++;
    tally.covered.add(p.covers);
    const text = scrub(p.text, o);
    for (const secret of other.secrets) if (text.includes(secret)) tally.leaks.push(`${name} ${p.covers}: ${secret}`);
    const g = ghost[i];
    if (g && scrub(g.text, ghostIds(o)) !== text)
      tally.oracles.push(
        `${name} ${p.covers}:\n  real:  ${text.slice(0, 300)}\n  ghost: ${scrub(g.text, ghostIds(o)).slice(0, 300)}`,
      );
  });
}

interface Tally {
  probes: number;
  covered: Set<string>;
  leaks: string[];
  oracles: string[];
}

describe('isolation matrix over two organisations (scenarios/two-tenants.yaml)', () => {
  it("shows neither organisation anything of the other, nor whether the other's ids exist", async () => {
    const tally: Tally = { probes: 0, covered: new Set(), leaks: [], oracles: [] };
    const tools = new Set<string>();
    // Each tenant's own tag (on its own room) and webhook, so tag and webhook ids exist on both sides.
    for (const t of [s.a, s.b]) {
      const tag = JSON.parse(
        (await gql(t.token, 'mutation { createTag(input: { name: "mine" }) { id } }')).slice(4),
      ) as { data: { createTag: { id: string } } };
      tally.covered.add('Mutation.createTag');
      const client = await rest('POST', '/api/v1/client', t.token, { name: 'isolation probe' });
      tally.covered.add('POST /api/v1/client');
      for (const other of [s.a, s.b].filter((x) => x !== t))
        for (const secret of other.secrets)
          if (client.includes(secret)) tally.leaks.push(`POST /api/v1/client: ${secret}`);
      await gql(t.token, 'mutation($i: [String!]!, $t: ID!) { associateTag(input: { ids: $i, tag_id: $t }) { id } }', {
        i: [t.ids.room, t.ids.floor, t.ids.zone],
        t: tag.data.createTag.id,
      });
      const hook = JSON.parse(
        (
          await gql(
            t.token,
            'mutation($u: String!) { createWebhooks(input: [{ name: "all rooms", eventTypes: ["ROOM_OCCUPANCY"], endpointConfig: { url: $u } }]) { id } }',
            { u: `${receiverUrl}/${t.org.name}/all` },
          )
        ).slice(4),
      ) as { data: { createWebhooks: Array<{ id: string }> } };
      const user = s.model.users.find((u) => t.org.userIds.includes(u.id))!;
      tenantIds.set(t, {
        ...t.ids,
        tag: tag.data.createTag.id,
        webhook: hook.data.createWebhooks[0]!.id,
        client: t.clientId,
        username: user.username,
      });
    }
    for (const [me, other] of [
      [s.a, s.b],
      [s.b, s.a],
    ] as const) {
      const dir = `${me.org.name}→${other.org.name}`;
      await compare(dir, other, (o) => queries(me, o), tally);
      await compare(dir, other, (o) => mutations(me, o), tally);
      await compare(dir, other, (o) => reporting(me, o), tally);
      await compare(dir, other, (o) => routes(me, o), tally);
      await compare(dir, other, (o) => mcpFamily(me, o, tools), tally);
    }

    // Webhooks: a subscription names ids of the other organisation in its filters (accepted, as
    // unknown ids are) and one has no filters; after fan-out and delivery of the run's events,
    // each organisation's receiver path holds only its own organisation's events.
    for (const [me, other] of [
      [s.a, s.b],
      [s.b, s.a],
    ] as const) {
      const o = tenantIds.get(other)!;
      const made = await gql(
        me.token,
        'mutation($u: String!, $f: JSON) { createWebhooks(input: [{ name: "theirs", eventTypes: ["FLOOR_OCCUPANCY"], endpointConfig: { url: $u }, filters: $f }]) { id filters } }',
        {
          u: `${receiverUrl}/${me.org.name}/theirs`,
          f: { org_ids: [other.org.id], floor_ids: [o.floor], room_ids: [o.room] },
        },
      );
      tally.covered.add('Mutation.createWebhooks');
      tally.probes++;
      // The filters echo what the caller sent, the other's organisation id included.
      const answer = scrub(made, o).replaceAll(other.org.id, '<input>');
      for (const secret of other.secrets) if (answer.includes(secret)) tally.leaks.push(`createWebhooks: ${secret}`);
    }
    await s.hooks.advance();
    const byTenant = (t: Tenant, kind: string) => received.filter((r) => r.path === `/${t.org.name}/${kind}`);
    let deliveries = 0;
    for (const [me, other] of [
      [s.a, s.b],
      [s.b, s.a],
    ] as const) {
      const all = byTenant(me, 'all');
      expect(all.length, `${me.org.name} receives its own room events`).toBeGreaterThan(0);
      for (const r of [...all, ...byTenant(me, 'theirs')]) {
        deliveries++;
        const org = (JSON.parse(r.body) as { metadata: { org_id: string } }).metadata.org_id;
        if (org !== me.org.id) tally.leaks.push(`webhook ${r.path}: an event of ${other.org.name}`);
      }
      expect(byTenant(me, 'theirs')).toHaveLength(0);
    }

    // Coverage: every route, query, mutation, reporting ID filter and MCP tool was exercised.
    const schema = s.app.graphql.schema;
    const expected = [
      ...Object.keys(schema.getQueryType()!.getFields()).map((f) => `Query.${f}`),
      ...Object.keys(schema.getMutationType()!.getFields()).map((f) => `Mutation.${f}`),
      ...routesOf(s.app.printRoutes({ commonPrefix: false })),
      ...ID_FILTERS.map((f) => `reporting.${f}`),
      ...[...tools].map((t) => `mcp.${t}`),
    ];
    const missing = expected.filter(
      (e) =>
        !tally.covered.has(e) &&
        !(e === 'POST /api/v3/reporting' && tally.covered.has('reporting.rooms')) &&
        !(e === 'POST /mcp' && tools.size > 0),
    );
    report('isolation', {
      probes: tally.probes,
      surfaces: expected.length,
      mcpTools: tools.size,
      webhookDeliveries: deliveries,
      leaks: tally.leaks.length,
      oracles: tally.oracles.length,
    });
    expect(tools.size).toBe(10);
    expect(missing).toEqual([]);
    expect(tally.leaks.slice(0, 20)).toEqual([]);
    expect(tally.oracles).toEqual([]);
  });
});

/** `METHOD /path` of every route printRoutes lists (HEAD is GET's). */
function routesOf(tree: string): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+) \(([^)]+)\)/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    const path = stack.join('');
    for (const method of m[3]!.split(', ')) if (method !== 'HEAD') out.push(`${method} ${path}`);
  }
  return out;
}
