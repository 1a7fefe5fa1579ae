import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFor } from './api.js';
import { countedPlatform, progressOf, type Counted } from './counted.js';

/**
 * Progress and cancellation over Streamable HTTP (issue 28, item 5), judged by the SDK's own
 * client on real sockets: a tools/call's `notifications/progress` reach it on the call's own
 * SSE response, and a `notifications/cancelled` stops the call's upstream work — no reporting
 * request reaches the API after the cancellation does — and no result is sent for it.
 */
const DELAY_MS = 150;
let platform: Counted;
let token: string;
const spaces: string[] = [];

beforeAll(async () => {
  platform = await countedPlatform(DELAY_MS);
  token = await login();
  const { client } = await connect();
  const topo = await client.callTool({ name: 'service_list_topology', arguments: { depth: 6 } });
  for (const n of (topo.structuredContent as { nodes: Array<{ id: string; type: string }> }).nodes)
    if (n.type === 'floor' || n.type === 'room' || n.type === 'zone') spaces.push(n.id);
  await client.close();
}, 60_000);

afterAll(async () => platform?.close());

/** A token of its own: `/mcp` keeps caches per token, so a new one starts cold. */
async function login(): Promise<string> {
  return (
    await apiFor({
      api: platform.api,
      clientId: platform.env.SERVICE_CLIENT_ID as string,
      clientSecret: platform.env.SERVICE_CLIENT_SECRET as string,
      audience: platform.env.SERVICE_AUDIENCE as string,
    })
  ).token;
}

/** An SDK client on a session of `/mcp`, and every message it receives. */
async function connect(bearer = token): Promise<{ client: Client; received: JSONRPCMessage[] }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${platform.api}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${bearer}` } },
  });
  const client = new Client({ name: 'progress-test', version: '1.0.0' });
  await client.connect(transport);
  const received: JSONRPCMessage[] = [];
  const deliver = transport.onmessage;
  transport.onmessage = (m: JSONRPCMessage) => {
    received.push(m);
    deliver?.(m);
  };
  return { client, received };
}

/** A day of 1m windows over quickstart's floor, four rooms and zone: four reporting batches (timeseries.ts). */
const dayOfMinutes = () => ({
  name: 'service_get_occupancy_timeseries',
  arguments: { ids: spaces, start: '-24h', interval: '1m' },
});

describe('progress over Streamable HTTP', () => {
  it('reaches the SDK client per upstream step, growing to its total, with a message each', async () => {
    expect(spaces).toHaveLength(6);
    const { client, received } = await connect();
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
    await client.close();
  });

  it('comes from a search over all types and the hardware snapshot, one step per catalogue read', async () => {
    const { client, received } = await connect(await login());
    const steps = async (name: string, args: Record<string, unknown>) => {
      const from = received.length;
      const r = await client.callTool({ name, arguments: args }, undefined, { onprogress: () => undefined });
      expect(r.isError).toBeFalsy();
      return progressOf(received, from).map((p) => [p.progress, p.total, p.message]);
    };
    expect(await steps('service_search_assets', { query: 'office' })).toEqual([[1, 1, 'spaces and devices read']]);
    expect(await steps('service_hardware_snapshot', {})).toEqual([[1, 1, "the platform's present read"]]);
    // Both read now: cached, no step.
    expect(await steps('service_hardware_snapshot', {})).toEqual([]);
    await client.close();
  });

  it('comes on the call’s own response stream, before its result; a call without a token gets none', async () => {
    const post = (params: Record<string, unknown>) =>
      fetch(`${platform.api}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params }),
      });
    const events = async (r: Response) => {
      expect(r.headers.get('content-type')).toBe('text/event-stream');
      return (await r.text())
        .split('\n\n')
        .filter((e) => e.startsWith('event: message\ndata: '))
        .map((e) => JSON.parse(e.slice('event: message\ndata: '.length)) as Record<string, unknown>);
    };
    const withToken = await events(await post({ ...dayOfMinutes(), _meta: { progressToken: 'p-1' } }));
    expect(withToken.at(-1)).toMatchObject({ id: 7, result: { structuredContent: { interval: '1m' } } });
    const progress = withToken.slice(0, -1);
    expect(progress.length).toBeGreaterThanOrEqual(4);
    for (const n of progress)
      expect(n).toMatchObject({ method: 'notifications/progress', params: { progressToken: 'p-1' } });
    const without = await events(await post(dayOfMinutes()));
    expect(without).toHaveLength(1);
    expect(without[0]).toMatchObject({ id: 7, result: {} });
  });

  it('refuses a progress token that is neither a string nor an integer, or is unbounded', async () => {
    // The SDK's transport refuses a token of another type as a malformed message; the server
    // refuses an empty or over-long string itself, naming the field.
    const cases: Array<[unknown, number, RegExp]> = [
      [{ a: 1 }, 400, /"code":-32700/],
      [1.5, 400, /"code":-32700/],
      ['', 200, /"code":-32602,"message":"[^"]*params\._meta\.progressToken must be a string of 1–256 characters/],
      ['x'.repeat(300), 200, /"code":-32602/],
    ];
    for (const [progressToken, status, body] of cases) {
      const r = await fetch(`${platform.api}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 8,
          method: 'tools/call',
          params: { ...dayOfMinutes(), _meta: { progressToken } },
        }),
      });
      expect([JSON.stringify(progressToken).slice(0, 20), r.status]).toEqual([
        JSON.stringify(progressToken).slice(0, 20),
        status,
      ]);
      expect(await r.text()).toMatch(body);
    }
  });
});

describe('cancellation over Streamable HTTP', () => {
  it('stops the upstream work: no reporting request after the cancellation arrives, and no result', async () => {
    const { client, received } = await connect();
    const ac = new AbortController();
    const from = platform.log.length;
    const call = client.callTool(dayOfMinutes(), undefined, {
      signal: ac.signal,
      onprogress: (p) => {
        if (p.message?.startsWith('batch 1 of')) ac.abort(new Error('enough'));
      },
    });
    await expect(call).rejects.toThrow('enough');
    await sleep(DELAY_MS * 6);
    const log = platform.log.slice(from);
    const cancelAt = log.findIndex((l) => l.kind === 'cancel');
    expect(cancelAt, JSON.stringify(log)).toBeGreaterThan(0);
    expect(log.slice(cancelAt).filter((l) => l.kind === 'reporting')).toEqual([]);
    expect(log.filter((l) => l.kind === 'reporting').length).toBeLessThan(4);
    const id = (log[cancelAt] as { requestId: unknown }).requestId;
    expect(received.filter((m) => 'id' in m && m.id === id && ('result' in m || 'error' in m))).toEqual([]);
    // The session goes on.
    expect(
      (await client.callTool({ name: 'service_search_assets', arguments: { query: 'office' } })).isError,
    ).toBeFalsy();
    await client.close();
  });

  it('happens when the client closes the call’s response stream, in a session as without one', async () => {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
    };
    const post = (body: unknown, extra: Record<string, string> = {}, signal?: AbortSignal) =>
      fetch(`${platform.api}/mcp`, {
        method: 'POST',
        headers: { ...headers, ...extra },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    const session = { 'mcp-session-id': init.headers.get('mcp-session-id') as string };
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(202);
    for (const extra of [session, {}]) {
      const ac = new AbortController();
      const from = platform.log.length;
      const r = await post(
        { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { ...dayOfMinutes(), _meta: { progressToken: 9 } } },
        extra,
        ac.signal,
      );
      const reader = (r.body as ReadableStream<Uint8Array>).getReader();
      let text = '';
      while (!text.includes('batch 1 of 4')) text += new TextDecoder().decode((await reader.read()).value);
      ac.abort();
      await sleep(DELAY_MS * 6);
      // Batch 2 may have been on its way; batches 3 and 4 never start.
      expect(platform.log.slice(from).filter((l) => l.kind === 'reporting').length).toBeLessThanOrEqual(2);
    }
  });

  it('of an unknown or a finished request is harmless', async () => {
    const { client } = await connect();
    await client.callTool({ name: 'service_search_assets', arguments: { query: 'lobby' } });
    for (const requestId of [1, 2, 424242, 'nobody'])
      await client.notification({ method: 'notifications/cancelled', params: { requestId, reason: 'test' } });
    const r = await client.callTool({ name: 'service_search_assets', arguments: { query: 'kitchen' } });
    expect(r.isError).toBeFalsy();
    expect(await client.ping()).toEqual({});
    await client.close();
  });
});
