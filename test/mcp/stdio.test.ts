import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envFor } from './connect.js';
import { buildMcp, root, servedQuickstart, type Served } from './served.js';

/**
 * End to end: a real `occusim-mcp` process (bin/occusim-mcp.js over dist/) speaking JSON-RPC
 * over stdio to this test, against `occusim run --serve`. Every line it writes to stdout must
 * be a JSON-RPC message; its debug log goes to stderr.
 */
let served: Served;

beforeAll(async () => {
  buildMcp();
  served = await servedQuickstart(['--duration', '2h']);
}, 180_000);

afterAll(async () => served?.close());

interface Rpc {
  jsonrpc: string;
  id?: number;
  result?: {
    isError?: boolean;
    content?: Array<{ text: string }>;
    structuredContent?: Record<string, unknown>;
    tools?: unknown[];
  };
  error?: unknown;
}

/** Spawns occusim-mcp; `request` sends one JSON-RPC request and resolves with its answer. */
function startMcp(env: Record<string, string>) {
  const child = spawn(process.execPath, [join(root, 'bin/occusim-mcp.js')], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let buffer = '';
  let stderr = '';
  const waiting = new Map<number, (m: Rpc) => void>();
  child.stdout.on('data', (c: Buffer) => {
    buffer += c.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      lines.push(line);
      try {
        const m = JSON.parse(line) as Rpc;
        if (typeof m.id === 'number') waiting.get(m.id)?.(m);
      } catch {
        // kept in `lines`; the purity assertion reports it
      }
    }
  });
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  let next = 1;
  const send = (m: object): void => void child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
  const request = (method: string, params: object): Promise<Rpc> => {
    const id = next++;
    const answer = new Promise<Rpc>((resolve) => waiting.set(id, resolve));
    send({ id, method, params });
    return answer;
  };
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child,
    lines,
    stderr: () => stderr,
    send,
    request,
    tail: () => buffer,
    end: async () => (child.stdin.end(), exited),
  };
}

async function initialise(mcp: ReturnType<typeof startMcp>): Promise<Rpc> {
  const init = await mcp.request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'stdio-test', version: '1' },
  });
  mcp.send({ method: 'notifications/initialized' });
  return init;
}

describe('occusim-mcp over stdio', () => {
  it('answers all ten tools against a served run, writing only JSON-RPC to stdout', async () => {
    const mcp = startMcp({ ...envFor(served), SERVICE_DEBUG: '1' });
    const init = await initialise(mcp);
    expect((init.result as unknown as { serverInfo: { name: string } }).serverInfo.name).toBe('occusim-mcp');
    const list = await mcp.request('tools/list', {});
    expect(list.result?.tools).toHaveLength(10);
    const call = async (name: string, args: object) => {
      const r = await mcp.request('tools/call', { name, arguments: args });
      expect(r.result?.isError, `${name}: ${r.result?.content?.[0]?.text}`).toBeFalsy();
      return r.result?.structuredContent as Record<string, unknown>;
    };
    const topo = await call('service_list_topology', { depth: 6, include_devices: true });
    const id: Record<string, string> = {};
    for (const n of topo.nodes as Array<{ id: string; name: string }>) id[n.name] ??= n.id;
    await call('service_search_assets', { query: 'meeting' });
    await call('service_get_asset_details', { ids: [id.Ground, id['Open office']], include_devices: true });
    await call('service_hardware_snapshot', { scope_id: id.HQ });
    await call('service_available_rooms', { min_capacity: 1 });
    await call('service_space_busyness', { ids: [id['Open office'], id['Meeting room']] });
    await call('service_traffic_flow', { ids: [id.Ground] });
    await call('service_fetch_entity_details', {
      ids: [id['Front door counter']],
      fields: ['name', 'mode', 'mac_address'],
    });
    await call('service_get_occupancy_timeseries', { ids: [id.Ground], start: '-2h', interval: '1h' });
    const now = await call('service_get_current_occupancy', { ids: [id['Open office']] });
    expect((now.spaces as Array<{ occupancy: number }>)[0]?.occupancy).toBeGreaterThan(0);
    const bad = await mcp.request('tools/call', {
      name: 'service_get_current_occupancy',
      arguments: { ids: ['room_x'], nope: 1 },
    });
    expect(bad.result?.isError).toBe(true);
    expect(await mcp.end()).toBe(0);
    expect(mcp.tail()).toBe('');
    const messages = mcp.lines.map(
      (line) => JSON.parse(line) as Rpc & { method?: string; params?: { level?: string; logger?: string } },
    );
    for (const m of messages) expect(m.jsonrpc).toBe('2.0');
    expect(messages.filter((m) => m.id !== undefined)).toHaveLength(13); // initialize, tools/list, 11 calls
    // The login, as a log message at the default level (info): a protocol line like the others.
    expect(
      messages.filter((m) => m.id === undefined).map((m) => [m.method, m.params?.level, m.params?.logger]),
    ).toEqual([['notifications/message', 'info', 'auth']]);
    expect(mcp.stderr()).toContain('occusim-mcp: ');
  });

  it('writes nothing to stderr without the debug setting, and stays up without credentials', async () => {
    const mcp = startMcp({ SERVICE_BASE_URL: served.api });
    await initialise(mcp);
    const r = await mcp.request('tools/call', { name: 'service_list_topology', arguments: {} });
    expect(r.result?.isError).toBe(true);
    expect(r.result?.content?.[0]?.text).toMatch(/^VALIDATION_FAILED: .*SERVICE_CLIENT_ID/);
    expect((await mcp.request('tools/list', {})).result?.tools).toHaveLength(10);
    expect(await mcp.end()).toBe(0);
    expect(mcp.stderr()).toBe('');
    for (const line of mcp.lines) expect((JSON.parse(line) as Rpc).jsonrpc).toBe('2.0');
  });

  it('answers a line of 16 MiB with a JSON-RPC error and stays up (it used to exit 0 without a word)', async () => {
    const mcp = startMcp({ SERVICE_BASE_URL: served.api });
    await initialise(mcp);
    const huge = `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"${'x'.repeat(16 * 1024 * 1024)}"}}\n`;
    await new Promise<void>((resolve) =>
      mcp.child.stdin.write(huge) ? resolve() : mcp.child.stdin.once('drain', () => resolve()),
    );
    expect((await mcp.request('tools/list', {})).result?.tools).toHaveLength(10);
    const refused = mcp.lines
      .map((l) => JSON.parse(l) as Rpc & { error?: { code: number; message: string } })
      .find((m) => m.error !== undefined);
    expect(refused).toMatchObject({ id: null, error: { code: -32600 } });
    expect(refused?.error?.message).toMatch(/exceeds the limit/);
    expect(mcp.child.exitCode).toBeNull();
    expect(await mcp.end()).toBe(0);
  }, 60_000);
});
