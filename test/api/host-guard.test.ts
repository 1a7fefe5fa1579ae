import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { allowedHostName, hostPolicy } from '../../src/api/host-guard.js';
import { startApiServer, type ApiServer } from '../../src/api/server.js';
import { mcpApiExtension } from '../../src/mcp/http-plugin.js';
import { ValueCounts } from '../../src/core/value-counts.js';
import { load } from './live/support.js';

/**
 * Host and Origin on every route (issue 33, item 5): the DNS-rebinding shape — a foreign name
 * as Host, its site as Origin — is refused before any route runs, on the browser's pages
 * (/live, /api/docs, /api/graphiql), /metrics, /mcp and the API alike.
 */
describe('the host policy', () => {
  it("allows loopback names, the listen address and the operator's names, with or without a port", () => {
    const p = hostPolicy('127.0.0.1', ['occusim.example']);
    for (const h of [
      undefined,
      'localhost',
      'localhost:8080',
      '127.0.0.1:8080',
      '[::1]:8080',
      'LOCALHOST',
      'occusim.example',
      'occusim.example.:443',
    ])
      expect(p.hostAllowed(h), String(h)).toBe(true);
    for (const h of [
      'evil.example',
      'evil.example:8080',
      '127.0.0.1.evil.example',
      'localhost.evil.example',
      '10.0.0.5:8080',
      '',
    ])
      expect(p.hostAllowed(h), h).toBe(false);
  });

  it('allows any IP literal, and no other name, when listening on every interface', () => {
    const p = hostPolicy('0.0.0.0');
    for (const h of ['192.168.1.20:8080', '[fe80::1]:8080', 'localhost:8080']) expect(p.hostAllowed(h), h).toBe(true);
    expect(p.hostAllowed('rebind.evil.example:8080')).toBe(false);
  });

  it('allows an Origin naming an allowed host over http(s), and refuses null, other schemes and foreign sites', () => {
    const p = hostPolicy('127.0.0.1');
    for (const o of [undefined, 'http://127.0.0.1:8080', 'http://localhost:3000', 'https://[::1]'])
      expect(p.originAllowed(o), String(o)).toBe(true);
    for (const o of [
      'null',
      'http://evil.example',
      'file://',
      'chrome-extension://abc',
      'http://127.0.0.1.evil.example',
    ])
      expect(p.originAllowed(o), o).toBe(false);
  });

  it('takes --allowed-host names and addresses, and refuses a URL or a port', () => {
    expect(allowedHostName('Dash.Example.')).toBe('dash.example');
    expect(allowedHostName('::1')).toBe('[::1]');
    for (const bad of ['http://dash.example', 'dash.example:8080', 'a b', '', 'x'.repeat(300)])
      expect(() => allowedHostName(bad), bad).toThrow(/--allowed-host/);
  });
});

describe('the served API', () => {
  let server: ApiServer;
  beforeAll(async () => {
    server = await startApiServer({
      catalogue: catalogueFromScenario(load('quickstart')),
      port: 0,
      allowedHosts: ['proxy.example'],
      extensions: [mcpApiExtension],
      metrics: {
        counters: () => ({
          batchesReceived: 0,
          batchesProcessed: 0,
          duplicateBatches: 0,
          packetsProcessed: 0,
          packetsStoredBefore: 0,
          deadLettered: 0,
          eventsEmitted: 0,
          lateInWindow: 0,
          lateBeyondWindow: 0,
        }),
        latenciesMs: () => new ValueCounts(),
        webhookStats: async () => null,
        status: {
          hiveStatuses: async (ids) => ids.map(() => null),
          sensorStatuses: async (ids) => ids.map(() => null),
        },
      },
    });
  }, 60_000);
  afterAll(async () => server?.close());

  /** node:http, not fetch: fetch does not let a caller choose Host, and a rebinding browser sends a foreign one. */
  const get = (path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: server.port, path, headers }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });

  const ROUTES = [
    '/api/docs/',
    '/api/graphiql',
    '/api/openapi.json',
    '/metrics',
    '/.well-known/jwks.json',
    '/api/v3/graphql?query=%7B__typename%7D',
    '/mcp',
  ];

  it('refuses a foreign Host, alone or with a matching Origin, on every route (403 FORBIDDEN)', async () => {
    for (const path of ROUTES) {
      const rebound = await get(path, {
        host: `rebind.evil.example:${server.port}`,
        origin: `http://rebind.evil.example:${server.port}`,
      });
      expect(rebound.status, path).toBe(403);
      expect(JSON.parse(rebound.body), path).toMatchObject({ code: 'FORBIDDEN' });
      expect((await get(path, { host: 'rebind.evil.example' })).status, path).toBe(403);
      expect((await get(path, { host: `127.0.0.1:${server.port}`, origin: 'http://evil.example' })).status, path).toBe(
        403,
      );
    }
  });

  it("serves this address, localhost and the operator's names, and does not echo a long Host back", async () => {
    for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`, 'proxy.example']) {
      expect((await get('/api/openapi.json', { host, origin: `http://${host}` })).status, host).toBe(200);
    }
    const long = await get('/metrics', { host: `${'a'.repeat(5000)}.example` });
    expect(long.status).toBe(403);
    expect(long.body.length).toBeLessThan(400);
  });
});
