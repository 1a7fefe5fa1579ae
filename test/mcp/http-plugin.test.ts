import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFor } from './api.js';
import { envOf } from './org.js';
import { twoOrganisations } from './served.js';
import { MAX_SESSIONS_PER_TOKEN } from '../../src/mcp/http-plugin.js';

/**
 * `/mcp` over Streamable HTTP (issue 28, item 7 and sessions): every protocol version of the
 * SDK is negotiated and served (2025-06-18 and 2025-11-25 among them), and a session is its
 * token's only.
 */
let platform: Awaited<ReturnType<typeof twoOrganisations>>;
let token: string;
let otherToken: string;

beforeAll(async () => {
  platform = await twoOrganisations();
  const creds = (m: typeof platform.own) => ({
    api: platform.api,
    clientId: m.clients[0]?.clientId ?? '',
    clientSecret: m.clients[0]?.secret ?? '',
    audience: envOf(m, platform.api).SERVICE_AUDIENCE as string,
  });
  token = (await apiFor(creds(platform.own))).token;
  otherToken = (await apiFor(creds(platform.other))).token;
}, 60_000);

afterAll(async () => platform?.close());

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${platform.api}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      ...headers,
    },
    body: JSON.stringify(body),
  });
const init = (version: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'v', version: '1' } },
});

describe('protocol versions', () => {
  it.each([
    '2025-11-25',
    '2025-06-18',
    ...SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v !== '2025-11-25' && v !== '2025-06-18'),
  ])('%s is negotiated, and a session on it lists tools, resources and prompts', async (version) => {
    const r = await post(init(version));
    expect(r.status).toBe(200);
    expect(((await r.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(version);
    const session = r.headers.get('mcp-session-id') as string;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    const h = { 'mcp-session-id': session, 'mcp-protocol-version': version };
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, h)).status).toBe(202);
    for (const [i, method] of ['tools/list', 'resources/list', 'prompts/list'].entries()) {
      const a = (await (await post({ jsonrpc: '2.0', id: 10 + i, method }, h)).json()) as {
        result?: Record<string, unknown[]>;
      };
      expect(Object.values(a.result ?? {})[0]?.length, `${version} ${method}`).toBeGreaterThan(0);
    }
    expect(
      (await fetch(`${platform.api}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${token}`, ...h } }))
        .status,
    ).toBe(200);
    expect((await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, h)).status).toBe(404);
  });

  it('answers an unknown version with the newest, as the SDK client then does', async () => {
    const r = await post(init('2099-01-01'));
    expect(((await r.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(
      SUPPORTED_PROTOCOL_VERSIONS[0],
    );
    const client = new Client({ name: 'v', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${platform.api}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    expect(client.getServerCapabilities()).toMatchObject({
      tools: {},
      resources: { subscribe: true, listChanged: true },
      prompts: {},
      completions: {},
      logging: {},
    });
    await client.close();
  });
});

describe('a session', () => {
  it("is its token's only: another token gets 404, as for an unknown one", async () => {
    const r = await post(init('2025-11-25'));
    const h = { 'mcp-session-id': r.headers.get('mcp-session-id') as string, 'mcp-protocol-version': '2025-11-25' };
    expect((await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, h)).status).toBe(200);
    expect(
      (await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, { ...h, authorization: `Bearer ${otherToken}` })).status,
    ).toBe(404);
  });

  it('are capped per token, the least recently used idle one making room: a finished request leaves its session idle', async () => {
    // More initializes than the cap, none streaming: each earlier session is idle once answered.
    const ids: string[] = [];
    for (let i = 0; i < MAX_SESSIONS_PER_TOKEN + 3; i++) {
      const r = await post(init('2025-11-25'));
      expect(r.status).toBe(200);
      await r.text();
      ids.push(r.headers.get('mcp-session-id') as string);
    }
    const ping = (id: string) =>
      post({ jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' });
    expect((await ping(ids[0] as string)).status).toBe(404);
    expect((await ping(ids.at(-1) as string)).status).toBe(200);
  });

  it('with only a stream open is reclaimed at the cap (its stream ended), not answered 429', async () => {
    const streams: AbortController[] = [];
    const ids: string[] = [];
    try {
      for (let i = 0; i < MAX_SESSIONS_PER_TOKEN; i++) {
        const r = await post(init('2025-11-25'));
        await r.text();
        const id = r.headers.get('mcp-session-id') as string;
        ids.push(id);
        const ac = new AbortController();
        streams.push(ac);
        const g = await fetch(`${platform.api}/mcp`, {
          headers: {
            accept: 'text/event-stream',
            authorization: `Bearer ${token}`,
            'mcp-session-id': id,
            'mcp-protocol-version': '2025-11-25',
          },
          signal: ac.signal,
        });
        expect(g.status).toBe(200);
      }
      const r = await post(init('2025-11-25'));
      expect(r.status).toBe(200);
      await r.text();
      expect(
        (
          await post(
            { jsonrpc: '2.0', id: 2, method: 'ping' },
            { 'mcp-session-id': ids[0] as string, 'mcp-protocol-version': '2025-11-25' },
          )
        ).status,
      ).toBe(404);
    } finally {
      for (const ac of streams) ac.abort();
    }
  });
});
