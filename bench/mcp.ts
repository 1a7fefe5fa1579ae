/**
 * MCP section: latency of each `service_*` tool through a real `occusim-mcp` process over
 * stdio, against the raw HTTP calls the tool makes (replayed with `fetch`, same token), on a
 * served run of `scenarios/fleet.yaml` (30,300 sensors). Three tool-server configurations:
 * - warm: default caches (topology 10 min, occupancy 60 s), after one warm-up call;
 * - fresh occupancy: topology cached, occupancy TTL 0 (every call reads reporting);
 * - cold: no caches (every call makes all its HTTP calls: the ratio against raw is the tool
 *   server's own overhead — stdio, JSON-RPC, validation, joins, rendering).
 * Then, through the warm tool server: `resources/list`, `resources/read` of a floor (record,
 * plan JSON, plan SVG, occupancy) and `completion/complete` (a prompt argument, a template
 * variable). Last, on a live run (`--speed 60 --serve`, a simulated minute per second), the
 * update latency: rooms' occupancy subscribed over stdio; a bench-side poller reads the same
 * rooms from reporting every UPDATE_PROBE_MS, and the latency of an update is the time from the
 * poller first seeing a new minute (the minute stored and visible) to the subscriber's
 * `notifications/resources/updated` for it.
 * Env: MCP_BENCH_SCENARIO (default scenarios/fleet.yaml), MCP_BENCH_DURATION (default 5m),
 * MCP_BENCH_RUNS (default 15), MCP_BENCH_PARTS (tools,resources,updates: which parts),
 * MCP_BENCH_LIVE_SCENARIO (default the scenario), MCP_BENCH_LIVE_S (seconds of updates,
 * default 60), MCP_BENCH_LIVE_SPEED (the live run's --speed, default 60), MCP_BENCH_PROBE_MS (the poller's period, default 100); or attach the first two parts to a served platform with SERVICE_BASE_URL,
 * SERVICE_CLIENT_ID, SERVICE_CLIENT_SECRET.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { CallScope } from '../src/mcp/cache.js';
import { OccupancyReader } from '../src/mcp/occupancy.js';
import { Platform } from '../src/mcp/platform.js';
import { ClientCredentials } from '../src/mcp/auth.js';
import { toolContext } from '../src/mcp/context.js';
import { fetchPort, type HttpPort } from '../src/mcp/http-port.js';
import { callTool } from '../src/mcp/server.js';
import { readSettings } from '../src/mcp/settings.js';
import { TOOLS } from '../src/mcp/tools/index.js';
import { systemClock } from '../src/core/clock.js';

interface Target {
  api: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

/** A served run: resolves once it has finished, or (`live`) once the API serves while it runs. */
async function serve(root: string, scenario: string, duration: string, live: readonly string[] = []): Promise<Target> {
  const db = join(mkdtempSync(join(tmpdir(), 'occusim-mcp-bench-')), 'store.sqlite');
  const child = spawn(
    process.execPath,
    [
      join(root, 'bin/occusim.js'),
      'run',
      join(root, scenario),
      '--duration',
      duration,
      '--db',
      db,
      '--serve',
      '--port',
      '0',
      '--mqtt-port',
      '0',
      '--quiet',
      ...live,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const api = /api listening on (\S+)/.exec(out);
      const client = /client \S+: client_id (\S+) client_secret (\S+)/.exec(out);
      if (api && client && (live.length > 0 || out.includes('run finished'))) {
        resolve({
          api: api[1] as string,
          clientId: client[1] as string,
          clientSecret: client[2] as string,
          close: async () => void child.kill('SIGTERM'),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`occusim exited ${code}`)));
  });
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number;
};

async function timed(fn: () => Promise<unknown>, runs: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

/** Arguments per tool, chosen from the run's own topology. */
async function argumentsFor(env: Record<string, string>): Promise<Record<string, Record<string, unknown>>> {
  const settings = readSettings(env);
  const http = fetchPort(settings.baseUrl);
  const ctx = toolContext(settings, http, new ClientCredentials(settings, http, systemClock), systemClock);
  const c = await ctx.catalog.spaces();
  const of = (k: string) => [...c.assets.values()].filter((a) => a.kind === k);
  const rooms = of('room')
    .slice(0, 50)
    .map((a) => a.id);
  const floor = of('floor')[0]?.id as string;
  return {
    service_search_assets: { query: 'east', max_results: 50 },
    service_get_asset_details: {
      ids: of('floor')
        .slice(0, 20)
        .map((a) => a.id),
    },
    service_hardware_snapshot: { scope_id: of('building')[0]?.id },
    service_available_rooms: { scope_id: of('site')[0]?.id },
    service_space_busyness: { ids: rooms.slice(0, 20) },
    service_traffic_flow: { ids: [floor] },
    service_list_topology: { depth: 3 },
    service_fetch_entity_details: { ids: rooms, fields: ['name', 'capacity', 'area'] },
    service_get_occupancy_timeseries: { ids: rooms.slice(0, 10), start: '-2h', interval: '1h' },
    service_get_current_occupancy: { ids: rooms },
  };
}

/** The HTTP calls each tool makes with cold caches, recorded in process, then replayed with fetch. */
async function rawCalls(
  env: Record<string, string>,
  args: Record<string, Record<string, unknown>>,
): Promise<Map<string, Array<[string, unknown]>>> {
  const settings = readSettings({ ...env, SERVICE_TOPOLOGY_CACHE_TTL_S: '0', SERVICE_OCCUPANCY_CACHE_TTL_S: '0' });
  const inner = fetchPort(settings.baseUrl);
  let log: Array<[string, unknown]> = [];
  const recording: HttpPort = {
    post: (path, body, bearer) => (path.includes('login') || log.push([path, body]), inner.post(path, body, bearer)),
  };
  const ctx = toolContext(settings, recording, new ClientCredentials(settings, recording, systemClock), systemClock);
  const out = new Map<string, Array<[string, unknown]>>();
  for (const tool of TOOLS) {
    await callTool(tool, args[tool.name], () => ctx); // login and first compile out of the way
    log = [];
    const r = await callTool(tool, args[tool.name], () => ctx);
    if (r.isError) throw new Error(`${tool.name}: ${JSON.stringify(r.content)}`);
    out.set(tool.name, log);
    log = []; // the next tool's warm-up must not land in this tool's list
  }
  return out;
}

async function stdioClient(root: string, env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join(root, 'bin/occusim-mcp.js')],
      env: { PATH: process.env.PATH ?? '', ...env },
    }),
  );
  await client.listTools();
  return client;
}

/**
 * How often the bench-side poller reads the subscribed rooms, to date each new minute
 * (MCP_BENCH_PROBE_MS). Its reads queue at the API beside the watcher's: a short period dates
 * minutes finer but slows the watcher it measures.
 */
const UPDATE_PROBE_MS = Number(process.env.MCP_BENCH_PROBE_MS ?? 100);

const f = (xs: number[] | undefined): string =>
  xs && xs.length > 0 ? `${pct(xs, 50).toFixed(1)}/${pct(xs, 99).toFixed(1)}` : '—';

async function toolsSection(root: string, env: Record<string, string>, runs: number): Promise<void> {
  const args = await argumentsFor(env);
  const raw = await rawCalls(env, args);
  const http = fetchPort(env.SERVICE_BASE_URL as string);
  const token = await new ClientCredentials(readSettings(env), http, systemClock).token();
  const configs = {
    warm: env,
    'fresh occ.': { ...env, SERVICE_OCCUPANCY_CACHE_TTL_S: '0' },
    cold: { ...env, SERVICE_TOPOLOGY_CACHE_TTL_S: '0', SERVICE_OCCUPANCY_CACHE_TTL_S: '0' },
  };
  const clients = Object.fromEntries(
    await Promise.all(Object.entries(configs).map(async ([k, e]) => [k, await stdioClient(root, e)] as const)),
  );
  console.log(
    `  ${'tool'.padEnd(34)} ${'raw HTTP p50/p99'.padStart(18)} ${'cold p50/p99'.padStart(16)} ${'ratio'.padStart(6)} ${'fresh occ. p50/p99'.padStart(20)} ${'warm p50/p99'.padStart(16)}  calls`,
  );
  for (const tool of TOOLS) {
    const calls = raw.get(tool.name) ?? [];
    const rawMs = await timed(async () => {
      for (const [path, body] of calls) await http.post(path, body, token);
    }, runs);
    const row: Record<string, number[]> = {};
    for (const [k, client] of Object.entries(clients)) {
      const call = async (): Promise<void> => {
        const r = await client.callTool({ name: tool.name, arguments: args[tool.name] });
        if (r.isError) throw new Error(`${tool.name}: ${JSON.stringify(r.content)}`);
      };
      await call(); // warm-up (fills the caches of the warm configurations)
      row[k] = await timed(call, runs);
    }
    const ratio = pct(row.cold ?? [], 50) / Math.max(pct(rawMs, 50), 0.001);
    console.log(
      `  ${tool.name.padEnd(34)} ${f(rawMs).padStart(15)} ms ${f(row.cold).padStart(13)} ms ${ratio.toFixed(2).padStart(6)} ${f(row['fresh occ.']).padStart(17)} ms ${f(row.warm).padStart(13)} ms  ${calls.map(([p]) => p.split('/').pop()).join('+')}`,
    );
  }
  await Promise.all(Object.values(clients).map((c) => c.close()));
}

/** resources/list, resources/read of a floor, completion: through the warm tool server. */
async function resourcesSection(root: string, env: Record<string, string>, runs: number): Promise<void> {
  const client = await stdioClient(root, env);
  try {
    const list = await client.listResources();
    const floor = list.resources.find(
      (r) => r.uri.startsWith('occusim://floors/') && !r.uri.slice('occusim://floors/'.length).includes('/'),
    );
    if (!floor) throw new Error('no floor among the resources');
    const room = list.resources.find((r) => r.uri.startsWith('occusim://rooms/'));
    const prefix = (room?.name ?? 'room').slice(0, 3).toLowerCase();
    const rows: Array<[string, () => Promise<unknown>]> = [
      [`resources/list (${list.resources.length} resources)`, () => client.listResources()],
      ['resources/templates/list', () => client.listResourceTemplates()],
      ['resources/read floor record', () => client.readResource({ uri: floor.uri })],
      ['resources/read floor plan.json', () => client.readResource({ uri: `${floor.uri}/plan.json` })],
      ['resources/read floor plan.svg', () => client.readResource({ uri: `${floor.uri}/plan.svg` })],
      ['resources/read floor occupancy', () => client.readResource({ uri: `${floor.uri}/occupancy` })],
      [
        `completion prompt building ""`,
        () =>
          client.complete({
            ref: { type: 'ref/prompt', name: 'building_occupancy_summary' },
            argument: { name: 'building', value: '' },
          }),
      ],
      [
        `completion template room id "${prefix}"`,
        () =>
          client.complete({
            ref: { type: 'ref/resource', uri: 'occusim://rooms/{id}' },
            argument: { name: 'id', value: prefix },
          }),
      ],
      [
        `completion device "sensr" (typo)`,
        () =>
          client.complete({
            ref: { type: 'ref/prompt', name: 'explain_device_health' },
            argument: { name: 'device', value: 'sensr' },
          }),
      ],
    ];
    console.log(`  ${'request'.padEnd(44)} ${'p50/p99'.padStart(16)}  bytes`);
    for (const [name, fn] of rows) {
      const bytes = JSON.stringify(await fn()).length; // warm-up, and the answer's size
      console.log(`  ${name.padEnd(44)} ${f(await timed(fn, runs)).padStart(13)} ms  ${bytes}`);
    }
    // The whole catalogue, page after page (3 walks: on the fleet it is some 65 pages).
    let pages = 0;
    let count = 0;
    const walk = async (): Promise<void> => {
      pages = 0;
      count = 0;
      let cursor: string | undefined;
      do {
        const page = await client.listResources(cursor === undefined ? {} : { cursor });
        pages++;
        count += page.resources.length;
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    };
    const walks = await timed(walk, 3);
    console.log(
      `  ${`resources/list, all ${pages} pages (${count} resources)`.padEnd(44)} ${f(walks).padStart(13)} ms`,
    );
  } finally {
    await client.close();
  }
}

/**
 * On a live run: subscribe rooms' occupancy, date each new minute with a fast poller of the
 * same reporting reads, and time each `notifications/resources/updated` against it.
 */
async function updatesSection(root: string, scenario: string): Promise<void> {
  const seconds = Number(process.env.MCP_BENCH_LIVE_S ?? 60);
  // A fleet the machine cannot run at 60× is measured at the speed it holds (1: real time).
  const speed = process.env.MCP_BENCH_LIVE_SPEED ?? '60';
  const t0 = performance.now();
  const target = await serve(root, scenario, '12h', ['--speed', speed]);
  const env = {
    SERVICE_BASE_URL: target.api,
    SERVICE_CLIENT_ID: target.clientId,
    SERVICE_CLIENT_SECRET: target.clientSecret,
  };
  console.log(
    `  live run of ${scenario} at --speed ${speed} serving after ${((performance.now() - t0) / 1000).toFixed(0)} s; ${seconds} s of updates`,
  );
  const client = await stdioClient(root, env);
  try {
    const settings = readSettings(env);
    const http = fetchPort(settings.baseUrl);
    const ctx = toolContext(settings, http, new ClientCredentials(settings, http, systemClock), systemClock);
    const rooms = [...(await ctx.catalog.spaces()).assets.values()].filter((a) => a.kind === 'room').slice(0, 20);
    const scope = new CallScope();
    const reader = new OccupancyReader(
      new Platform(http, new ClientCredentials(settings, http, systemClock)),
      systemClock,
      0,
      scope,
    );
    const notified: Array<[string, number]> = [];
    client.setNotificationHandler(
      ResourceUpdatedNotificationSchema,
      (n) => void notified.push([n.params.uri, performance.now()]),
    );
    // The digest the watcher compares; each change the poller sees, with when it saw it.
    const digests = new Map<string, string>();
    const changes: Array<[string, number]> = [];
    const probe = async (): Promise<void> => {
      scope.next();
      const { results } = await reader.current(rooms);
      const at = performance.now();
      for (const r of results) {
        const uri = `occusim://rooms/${r.id}/occupancy`;
        const d = JSON.stringify([r.occupancy, r.source, r.minutes]);
        const before = digests.get(uri);
        digests.set(uri, d);
        if (before !== undefined && before !== d) changes.push([uri, at]);
      }
    };
    await probe();
    for (const r of rooms) await client.subscribeResource({ uri: `occusim://rooms/${r.id}/occupancy` });
    const end = performance.now() + seconds * 1000;
    while (performance.now() < end) {
      await probe();
      await new Promise((r) => setTimeout(r, UPDATE_PROBE_MS));
    }
    // Each notification is matched with the poller's newest change of its URI before it.
    const latencies: number[] = [];
    let unmatched = 0;
    for (const [uri, at] of notified) {
      const seen = changes.filter(([u, t]) => u === uri && t <= at + UPDATE_PROBE_MS).pop();
      if (seen) latencies.push(Math.max(0, at - seen[1]));
      else unmatched++;
    }
    console.log(
      `  ${rooms.length} rooms subscribed: ${changes.length} new minutes seen by the poller, ${notified.length} notifications (${unmatched} before the poller saw the change)`,
    );
    console.log(
      `  stored minute → notifications/resources/updated: p50/p99 ${f(latencies)} ms, max ${latencies.length > 0 ? Math.max(...latencies).toFixed(1) : '—'} ms (poller period ${UPDATE_PROBE_MS} ms; watcher period 250 ms)`,
    );
  } finally {
    await client.close();
    await target.close();
  }
}

export async function runMcpBench(root: string): Promise<void> {
  const runs = Number(process.env.MCP_BENCH_RUNS ?? 15);
  const scenario = process.env.MCP_BENCH_SCENARIO ?? 'scenarios/fleet.yaml';
  const parts = new Set((process.env.MCP_BENCH_PARTS ?? 'tools,resources,updates').split(','));
  const t0 = performance.now();
  if (parts.has('tools') || parts.has('resources')) {
    const target: Target = process.env.SERVICE_BASE_URL
      ? {
          api: process.env.SERVICE_BASE_URL,
          clientId: process.env.SERVICE_CLIENT_ID ?? '',
          clientSecret: process.env.SERVICE_CLIENT_SECRET ?? '',
          close: async () => {},
        }
      : await serve(root, scenario, process.env.MCP_BENCH_DURATION ?? '5m');
    const where = process.env.SERVICE_BASE_URL
      ? target.api
      : `${scenario}, served in ${((performance.now() - t0) / 1000).toFixed(0)} s`;
    const env = {
      SERVICE_BASE_URL: target.api,
      SERVICE_CLIENT_ID: target.clientId,
      SERVICE_CLIENT_SECRET: target.clientSecret,
    };
    try {
      if (parts.has('tools')) {
        console.log(
          `== mcp: tools through occusim-mcp over stdio vs their raw HTTP calls (${where}; ${runs} runs each)`,
        );
        await toolsSection(root, env, runs);
      }
      if (parts.has('resources')) {
        console.log(
          `== mcp: resources and completion through occusim-mcp over stdio, warm (${where}; ${runs} runs each)`,
        );
        await resourcesSection(root, env, runs);
      }
    } finally {
      await target.close();
    }
  }
  if (parts.has('updates')) {
    console.log('== mcp: resource subscriptions over stdio: a stored minute to its notification');
    await updatesSection(root, process.env.MCP_BENCH_LIVE_SCENARIO ?? scenario);
  }
}
