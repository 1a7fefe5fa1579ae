import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_AUDIENCE } from '../../src/api/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { cli } from './fixtures/run-cli.js';

const root = new URL('../../', import.meta.url).pathname;

/**
 * Spawns `occusim run … --serve` (or `serve --feed`) and resolves with the API URL once it
 * listens and stdout matches `until`; `output()` reads what it printed so far.
 */
function startServing(
  args: string[],
  until = /run finished; serving until Ctrl-C/,
): { child: ReturnType<typeof spawn>; ready: Promise<{ api: string; out: string }>; output: () => string } {
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
      if (m && /client \S+: client_id/.test(out) && until.test(out)) resolve({ api: m[1] as string, out });
    });
    child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  return { child, ready, output: () => out };
}

const scenario = join(root, 'scenarios/quickstart.yaml');
const model = (
  loadScenarioFile(scenario) as { ok: true; model: { startMs: number; rooms: Array<{ id: string; name: string }> } }
).model;
const office = model.rooms.find((r) => r.name === 'Open office')!;

async function login(api: string, out: string): Promise<string> {
  const [, clientId, secret] = /client \S+: client_id (\S+) client_secret (\S+)/.exec(out) as unknown as [
    string,
    string,
    string,
  ];
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
  return ((await res.json()) as { access_token: string }).access_token;
}

/** The open office's per-minute occupancy through the reporting API, as [minute, value] pairs. */
async function officeMinutes(
  api: string,
  token: string,
  start: number,
  stop: number,
): Promise<Array<[number, number]>> {
  const res = await fetch(`${api}/api/v3/reporting`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      window: { every: '1m', function: 'max', timezone: 'Europe/Paris' },
      filter: {
        measurements: ['room_occupancy'],
        rooms: { eq: [office.id] },
        start: new Date(start).toISOString(),
        stop: new Date(stop).toISOString(),
      },
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Array<{ start: string; value: number }> }).data.map((p) => [
    Date.parse(p.start),
    p.value,
  ]);
}

function storedMinutes(db: string, start: number, stop: number): Array<[number, number]> {
  const store = new SqliteStore(db);
  try {
    return store.presenceSeries(office.id, '1m', start, stop).map((s) => [s.bucketMs, s.value]);
  } finally {
    store.close();
  }
}

async function stop(child: ReturnType<typeof spawn>): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  return exited;
}

describe('occusim run --serve', () => {
  it("serves the run's store over real HTTP: reported occupancy equals what the store holds", async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'occusim-serve-')), 'store.sqlite');
    const { child, ready } = startServing([
      'run',
      scenario,
      '--duration',
      '40m',
      '--db',
      db,
      '--serve',
      '--port',
      '0',
      '--mqtt-port',
      '0',
      '--quiet',
    ]);
    try {
      const { api, out } = await ready;
      expect(out).toMatch(/mqtt listening on mqtt:\/\/127\.0\.0\.1:\d+/);
      const token = await login(api, out);
      const start = model.startMs;
      const stopMs = start + 40 * 60_000;
      const points = await officeMinutes(api, token, start, stopMs);
      const stored = storedMinutes(db, start, stopMs);
      expect(stored.length).toBeGreaterThan(30);
      expect(points).toEqual(stored);
      expect(points.some(([, v]) => v > 0)).toBe(true);
      // Device status comes from the heartbeats the cloud stored during the run.
      const gql = await fetch(`${api}/api/v3/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          query:
            '{ hives { data { isOnline isStreaming lastHeartbeat } } sensors { data { is_online is_streaming } } }',
        }),
      });
      const status = (
        (await gql.json()) as {
          data: {
            hives: { data: Array<{ isOnline: boolean; isStreaming: boolean; lastHeartbeat: string | null }> };
            sensors: { data: Array<{ is_online: boolean; is_streaming: boolean }> };
          };
        }
      ).data;
      expect(status.hives.data.length).toBeGreaterThan(0);
      for (const h of status.hives.data) {
        expect(h.isOnline).toBe(true);
        expect(Date.parse(h.lastHeartbeat ?? '')).toBeGreaterThan(start + 30 * 60_000);
        expect(Date.parse(h.lastHeartbeat ?? '')).toBeLessThanOrEqual(stopMs + 60_000); // the drain after the last tick
      }
      expect(status.sensors.data.every((x) => x.is_online && x.is_streaming)).toBe(true);
    } finally {
      await stop(child);
    }
  });
});

describe('occusim serve --feed', () => {
  it('serves a real-time run while it runs: the API sees minutes arrive, then all of them, and SIGTERM exits 0', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'occusim-feed-')), 'store.sqlite');
    // 20 simulated minutes at 120× real time: about 10 s of wall time, so that a loaded machine's
    // slow login still leaves minutes to watch arrive (at 240× it once saw none).
    const { child, ready, output } = startServing(
      [
        'serve',
        '--scenario',
        scenario,
        '--feed',
        '--speed',
        '120',
        '--duration',
        '20m',
        '--db',
        db,
        '--port',
        '0',
        '--mqtt-port',
        '0',
        '--quiet',
      ],
      /store /,
    );
    try {
      const { api, out } = await ready;
      expect(out).not.toMatch(/run finished/);
      const token = await login(api, out);
      const start = model.startMs;
      const stopMs = start + 20 * 60_000;
      // While the simulation runs, the served store fills minute by minute.
      const seen: number[] = [];
      while (!/run finished; serving until Ctrl-C/.test(output())) {
        seen.push((await officeMinutes(api, token, start, stopMs)).length);
        await new Promise((r) => setTimeout(r, 250));
      }
      const during = seen.filter((n) => n > 0 && n < 20);
      expect(during.length).toBeGreaterThan(0);
      const final = await officeMinutes(api, token, start, stopMs);
      expect(final.length).toBe(20);
      expect(final).toEqual(storedMinutes(db, start, stopMs));
      expect(await stop(child)).toBe(0);
    } finally {
      await stop(child);
    }
  });

  it('ends a real-time run early on SIGTERM: the run is reported interrupted and the process exits 0', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'occusim-feed-')), 'store.sqlite');
    const { child, ready, output } = startServing(
      ['serve', '--scenario', scenario, '--feed', '--db', db, '--port', '0', '--mqtt-port', '0'],
      /store /,
    );
    try {
      await ready;
      const t0 = process.hrtime.bigint();
      expect(await stop(child)).toBe(0);
      expect(Number(process.hrtime.bigint() - t0) / 1e6).toBeLessThan(15_000);
      expect(output()).toMatch(/run interrupted; serving until Ctrl-C/);
    } finally {
      await stop(child);
    }
  });

  it('refuses --speed max and a missing --scenario with usage errors', async () => {
    const max = await cli('serve', '--scenario', scenario, '--feed', '--speed', 'max');
    expect(max.code).toBe(2);
    expect(max.err).toMatch(/real time: --speed must be a factor/);
    const none = await cli('serve', '--feed');
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/needs --scenario/);
  });

  it('takes --metrics-token and --allowed-host: the operator scrapes per tenant, a proxy name is served, a foreign Host is not', async () => {
    const token = 'ops-scraper-token-42abcdef';
    const { child, ready } = startServing([
      'run',
      scenario,
      '--duration',
      '2m',
      '--serve',
      '--port',
      '0',
      '--mqtt-port',
      '0',
      '--quiet',
      '--metrics-token',
      token,
      '--allowed-host',
      'proxy.example',
      '--allowed-host',
      'dash.example,other.example',
    ]);
    try {
      const { api } = await ready;
      const operator = await (await fetch(`${api}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
      expect(operator).toMatch(/occusim_hive_online\{org="/);
      const open = await (await fetch(`${api}/metrics`)).text();
      expect(open).not.toMatch(/org="|serial="/);
      expect(open).toMatch(/occusim_hives_online\{state="online"\}/);
      const { request } = await import('node:http');
      const status = (host: string): Promise<number> =>
        new Promise((resolve, reject) => {
          const u = new URL(api);
          request(
            { host: u.hostname, port: u.port, path: '/api/openapi.json', headers: { host } },
            (res) => (res.resume(), resolve(res.statusCode ?? 0)),
          )
            .on('error', reject)
            .end();
        });
      expect(await status('proxy.example')).toBe(200);
      expect(await status('other.example:443')).toBe(200);
      expect(await status('rebind.evil.example')).toBe(403);
    } finally {
      await stop(child);
    }
  }, 120_000);

  it('refuses a short --metrics-token and an --allowed-host that is a URL, with usage errors', async () => {
    const short = await cli('serve', '--scenario', scenario, '--metrics-token', 'abc');
    expect(short.code).toBe(2);
    expect(short.err).toMatch(/--metrics-token must be 16–256 characters/);
    const url = await cli('run', scenario, '--serve', '--allowed-host', 'http://proxy.example');
    expect(url.code).toBe(2);
    expect(url.err).toMatch(/--allowed-host must be a host name/);
  });
});
