import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_AUDIENCE } from '../../src/api/server.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';

/**
 * Two tenants end to end (issue 16, finding 11): `occusim run scenarios/two-tenants.yaml
 * --serve` simulates both organisations' sensors through one broker and cloud, and each
 * organisation's client sees its own assets and occupancy, never the other's.
 */
const root = new URL('../../', import.meta.url).pathname;
const scenario = join(root, 'scenarios/two-tenants.yaml');
const model = (loadScenarioFile(scenario) as { ok: true; model: ScenarioModel }).model;

function serve(args: string[]): { child: ReturnType<typeof spawn>; ready: Promise<{ api: string; out: string }> } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/cli/fixtures/cli-entry.ts'), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const ready = new Promise<{ api: string; out: string }>((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /api listening on (http:\/\/\S+)/.exec(out);
      if (m && /run finished; serving until Ctrl-C/.test(out)) resolve({ api: m[1] as string, out });
    });
    child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  return { child, ready };
}

async function login(api: string, clientId: string, secret: string): Promise<string> {
  const res = await fetch(`${api}/api/v2/clients/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_id: clientId,
      client_secret: secret,
      audience: DEFAULT_AUDIENCE,
      grant_type: 'client_credentials',
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

async function post(
  api: string,
  path: string,
  token: string,
  body: unknown,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${api}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

describe('occusim run --serve with two organisations', () => {
  it("stores both tenants' occupancy and shows each tenant only its own", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-tenants-'));
    const { child, ready } = serve([
      'run',
      scenario,
      '--duration',
      '40m',
      '--db',
      join(dir, 'store.sqlite'),
      '--serve',
      '--port',
      '0',
      '--mqtt-port',
      '0',
      '--quiet',
    ]);
    try {
      const { api, out } = await ready;
      const printed = [...out.matchAll(/client \S+: client_id (\S+) client_secret (\S+)/g)].map(
        (m) => [m[1], m[2]] as [string, string],
      );
      expect(printed).toHaveLength(2);
      const orgs = model.organisations!;
      for (const [i, org] of orgs.entries()) {
        const other = orgs[1 - i]!;
        const [clientId, secret] = printed.find(([id]) => org.clientIds.includes(id))!;
        const token = await login(api, clientId, secret);
        const floorsOf = (o: typeof org) =>
          new Set(model.floors.filter((f) => o.siteIds.includes(f.siteId)).map((f) => f.id));
        const mine = model.sensors
          .filter((s) => floorsOf(org).has(s.floorId))
          .map((s) => s.id)
          .sort();
        const theirs = model.rooms.filter((r) => floorsOf(other).has(r.floorId));
        const gql = await post(api, '/api/v3/graphql', token, {
          query: '{ sensors { data { id } } sites { data { id name } } }',
        });
        const data = (
          gql.json as { data: { sensors: { data: Array<{ id: string }> }; sites: { data: Array<{ id: string }> } } }
        ).data;
        expect(data.sensors.data.map((s) => s.id).sort()).toEqual(mine);
        expect(data.sites.data.map((s) => s.id)).toEqual(org.siteIds);
        // Its own office has occupancy; the other tenant's rooms read as rooms that do not exist.
        const office = model.rooms.find((r) => r.name === 'Open office' && floorsOf(org).has(r.floorId))!;
        const report = (rooms: string[]) => ({
          window: { every: '1m', function: 'max', timezone: 'UTC' },
          filter: {
            measurements: ['room_occupancy'],
            rooms: { eq: rooms },
            start: new Date(model.startMs).toISOString(),
            stop: new Date(model.startMs + 40 * 60_000).toISOString(),
          },
        });
        const own = await post(api, '/api/v3/reporting', token, report([office.id]));
        expect(own.status).toBe(200);
        expect((own.json as { data: Array<{ value: number }> }).data.some((p) => p.value > 0)).toBe(true);
        const cross = await post(api, '/api/v3/reporting', token, report(theirs.map((r) => r.id)));
        const unknown = await post(api, '/api/v3/reporting', token, report(['room_doesnotexist']));
        expect(cross.status).toBe(unknown.status);
        expect(JSON.stringify(cross.json)).not.toMatch(/"value":\s*[1-9]/);
      }
    } finally {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
