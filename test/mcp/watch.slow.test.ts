import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { PresentedToken } from '../../src/mcp/auth.js';
import type { Asset } from '../../src/mcp/catalog.js';
import { toolContext } from '../../src/mcp/context.js';
import { fetchPort } from '../../src/mcp/http-port.js';
import { readSettings } from '../../src/mcp/settings.js';
import { MAX_SUBSCRIPTIONS } from '../../src/mcp/watch.js';
import { apiFor } from './api.js';
import { envFor } from './connect.js';
import { root, servedQuickstart, type Served } from './served.js';

/**
 * Resource subscriptions during a live run (issue 28, item 1): `occusim run --speed 60 --serve`
 * stores a minute per second; a client subscribed to a room's occupancy hears
 * `notifications/resources/updated` for it, over Streamable HTTP (`/mcp`, a session with its
 * GET stream) and over stdio (the `occusim-mcp` server as a child process), and after
 * `resources/unsubscribe` hears nothing more.
 */
let served: Served;
let token: string;
let room: string;

beforeAll(async () => {
  served = await servedQuickstart(['--duration', '2h', '--speed', '60'], { live: true });
  const api = await apiFor(served);
  token = api.token;
  const d = await api.graphql<{ rooms: { data: Array<{ id: string; name: string }> } }>(
    '{ rooms { data { id name } } }',
  );
  room = d.rooms.data.find((r) => r.name === 'Open office')?.id as string;
}, 120_000);

afterAll(async () => served?.close());

async function http(): Promise<Client> {
  const client = new Client({ name: 'watch-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${served.api}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

async function stdio(): Promise<Client> {
  const client = new Client({ name: 'watch-test', version: '1' });
  const env = { PATH: process.env.PATH ?? '', ...envFor(served) };
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        "import('./src/mcp/stdio.ts').then((m) => m.runStdioServer())",
      ],
      cwd: root,
      env,
    }),
  );
  return client;
}

/** Updates heard for the URI within `ms`. */
async function heard(client: Client, uri: string, ms: number): Promise<number> {
  let n = 0;
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (m) => void (m.params.uri === uri && n++));
  await new Promise((r) => setTimeout(r, ms));
  return n;
}

describe.each([
  ['Streamable HTTP', http],
  ['stdio', stdio],
])("a subscription to a room's occupancy over %s", (_name, connect) => {
  it('hears each new minute, and nothing after unsubscribing', async () => {
    const client = await connect();
    try {
      const uri = `occusim://rooms/${room}/occupancy`;
      const before = JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text) as {
        as_of: string;
      };
      expect(await client.subscribeResource({ uri })).toEqual({});
      const n = await heard(client, uri, 6000);
      // A simulated minute per second: at least a few in six seconds.
      expect(n).toBeGreaterThanOrEqual(2);
      const after = JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text) as {
        as_of: string;
      };
      expect(Date.parse(after.as_of)).toBeGreaterThan(Date.parse(before.as_of));
      await client.unsubscribeResource({ uri });
      await new Promise((r) => setTimeout(r, 500));
      expect(await heard(client, uri, 3000)).toBe(0);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('refuses a resource the organisation does not have with -32002', async () => {
    const client = await connect();
    try {
      await expect(
        client.subscribeResource({ uri: 'occusim://rooms/room_0000000000000000/occupancy' }),
      ).rejects.toMatchObject({ code: -32002 });
      await expect(client.subscribeResource({ uri: 'occusim://printers/x_123' })).rejects.toMatchObject({
        code: -32002,
      });
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe('subscriptions per session', () => {
  it(`are capped at ${MAX_SUBSCRIPTIONS} distinct URIs, with a message naming the cap`, () => {
    const settings = readSettings({});
    const http = fetchPort('http://127.0.0.1:9');
    const ctx = toolContext(settings, http, new PresentedToken('t'), systemClock);
    const me = { updated: () => undefined, listChanged: () => undefined };
    const asset = (i: number): Asset => ({
      id: `room_${i}`,
      kind: 'room',
      name: `r${i}`,
      parentId: null,
      childIds: [],
      timezone: 'UTC',
      path: [],
      capacity: null,
      tags: [],
      fields: {},
    });
    for (let i = 0; i < MAX_SUBSCRIPTIONS; i++) ctx.watch.subscribe(me, `occusim://rooms/room_${i}`, asset(i));
    ctx.watch.subscribe(me, 'occusim://rooms/room_0', asset(0));
    expect(() => ctx.watch.subscribe(me, 'occusim://rooms/room_x', asset(999))).toThrow(
      `at most ${MAX_SUBSCRIPTIONS} resource subscriptions per session`,
    );
    ctx.watch.unsubscribe(me, 'occusim://rooms/room_1');
    ctx.watch.subscribe(me, 'occusim://rooms/room_x', asset(999));
    expect(ctx.watch.subscriptions).toBe(MAX_SUBSCRIPTIONS);
  });
});
