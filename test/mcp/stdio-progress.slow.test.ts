import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countedPlatform, progressOf, type Counted } from './counted.js';
import { buildMcp, root } from './served.js';

/**
 * Progress and cancellation over stdio (issue 28, item 5): a real `occusim-mcp` process
 * (bin/occusim-mcp.js over dist/), driven by the SDK's own stdio client, against an API that
 * logs each upstream reporting request. Slow: it builds dist/ when the sources are newer.
 */
const DELAY_MS = 150;
let platform: Counted;
let client: Client;
const received: JSONRPCMessage[] = [];
const spaces: string[] = [];

beforeAll(async () => {
  buildMcp();
  platform = await countedPlatform(DELAY_MS);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(root, 'bin/occusim-mcp.js')],
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...platform.env },
    stderr: 'ignore',
  });
  client = new Client({ name: 'progress-test', version: '1.0.0' });
  await client.connect(transport);
  const deliver = transport.onmessage;
  transport.onmessage = (m) => {
    received.push(m);
    deliver?.(m);
  };
  const topo = await client.callTool({ name: 'service_list_topology', arguments: { depth: 6 } });
  for (const n of (topo.structuredContent as { nodes: Array<{ id: string; type: string }> }).nodes)
    if (n.type === 'floor' || n.type === 'room' || n.type === 'zone') spaces.push(n.id);
}, 180_000);

afterAll(async () => {
  await client?.close();
  await platform?.close();
});

const dayOfMinutes = () => ({
  name: 'service_get_occupancy_timeseries',
  arguments: { ids: spaces, start: '-24h', interval: '1m' },
});

describe('over stdio', () => {
  it('sends progress per upstream batch, growing to its total', async () => {
    const seen: Progress[] = [];
    const from = received.length;
    const before = platform.reporting();
    const r = await client.callTool(dayOfMinutes(), undefined, { onprogress: (p) => seen.push(p) });
    expect(r.isError).toBeFalsy();
    expect(platform.reporting() - before).toBe(4);
    const sent = progressOf(received, from);
    expect(sent.filter((p) => p.message?.startsWith('batch ')).map((p) => p.message)).toEqual([
      'batch 1 of 4 read: 1 floor(s)',
      'batch 2 of 4 read: 3 room(s)',
      'batch 3 of 4 read: 1 room(s)',
      'batch 4 of 4 read: 1 zone(s)',
    ]);
    for (const [i, p] of sent.entries()) {
      expect(p.total).toBeGreaterThanOrEqual(p.progress);
      if (i > 0) expect(p.progress).toBeGreaterThan((sent[i - 1] as Progress).progress);
    }
    expect(sent.at(-1)?.progress).toBe(sent.at(-1)?.total);
    // The SDK client hands a notification to onprogress in a microtask, and drops it when the
    // result came in the same read (its handler is gone by then): all but the last are seen.
    expect(seen.length).toBeGreaterThanOrEqual(sent.length - 1);
    expect(seen).toEqual(sent.slice(0, seen.length));
  });

  it('stops on notifications/cancelled: the request in flight is abandoned, no further one is made, no result comes', async () => {
    const ac = new AbortController();
    const from = platform.log.length;
    let token: unknown;
    const call = client.callTool(dayOfMinutes(), undefined, {
      signal: ac.signal,
      onprogress: (p) => {
        if (p.message?.startsWith('batch 1 of')) ac.abort(new Error('enough'));
      },
    });
    await expect(call).rejects.toThrow('enough');
    for (const m of received)
      if ('method' in m && m.method === 'notifications/progress') token = m.params?.progressToken;
    await sleep(DELAY_MS * 6);
    const log = platform.log.slice(from);
    // Batch 1 answered; batch 2 was on its way when the cancellation came, and was dropped.
    const made = log.filter((l) => l.kind === 'reporting').length;
    expect(made, JSON.stringify(log)).toBeLessThanOrEqual(2);
    // Every request after the first was in flight at the cancellation, and dropped (fetch's signal).
    expect(log.filter((l) => l.kind === 'abandoned').length, JSON.stringify(log)).toBe(made - 1);
    expect(received.filter((m) => 'id' in m && m.id === token && ('result' in m || 'error' in m))).toEqual([]);
    expect(
      (await client.callTool({ name: 'service_search_assets', arguments: { query: 'office' } })).isError,
    ).toBeFalsy();
  });

  it('takes a cancellation of an unknown or finished request, or a malformed one, in its stride', async () => {
    for (const params of [{ requestId: 1 }, { requestId: 424242 }, { requestId: 'nobody' }, { reason: 'no id' }])
      await client.notification({ method: 'notifications/cancelled', params } as never);
    expect(await client.ping()).toEqual({});
    expect(
      (await client.callTool({ name: 'service_search_assets', arguments: { query: 'kitchen' } })).isError,
    ).toBeFalsy();
  });
});
