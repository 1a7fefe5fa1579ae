import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_AUDIENCE } from '../../src/api/server.js';
import { SqliteStore } from '../../src/cloud/store/sqlite-store.js';
import { loadScenarioFile } from '../../src/scenario/load.js';

const root = new URL('../../', import.meta.url).pathname;

/** Spawns `occusim run … --serve` and resolves with the API URL once it listens. */
function startServing(args: string[]): { child: ReturnType<typeof spawn>; ready: Promise<{ api: string; out: string }> } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/cli/fixtures/cli-entry.ts'), ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const ready = new Promise<{ api: string; out: string }>((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /api listening on (http:\/\/\S+)/.exec(out);
      if (m && /client \S+: client_id/.test(out)) resolve({ api: m[1] as string, out });
    });
    child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  return { child, ready };
}

describe('occusim run --serve', () => {
  it('serves the run\'s store over real HTTP: reported occupancy equals what the store holds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-serve-'));
    const db = join(dir, 'store.sqlite');
    const scenario = join(root, 'scenarios/quickstart.yaml');
    const { child, ready } = startServing(['run', scenario, '--duration', '40m', '--db', db, '--serve', '--port', '0', '--mqtt-port', '0', '--quiet']);
    try {
      const { api, out } = await ready;
      expect(out).toMatch(/mqtt listening on mqtt:\/\/127\.0\.0\.1:\d+/);
      const [, clientId, secret] = /client \S+: client_id (\S+) client_secret (\S+)/.exec(out) as unknown as [string, string, string];
      const login = await fetch(`${api}/api/v2/clients/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: clientId, client_secret: secret, audience: DEFAULT_AUDIENCE, grant_type: 'client_credentials' }),
      });
      const { access_token: token } = (await login.json()) as { access_token: string };
      const model = (loadScenarioFile(scenario) as { ok: true; model: { startMs: number; rooms: Array<{ id: string; name: string }> } }).model;
      const office = model.rooms.find((r) => r.name === 'Open office')!;
      const start = model.startMs;
      const stop = start + 40 * 60_000;
      const res = await fetch(`${api}/api/v3/reporting`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          window: { every: '1m', function: 'max', timezone: 'Europe/Paris' },
          filter: { measurements: ['room_occupancy'], rooms: { eq: [office.id] }, start: new Date(start).toISOString(), stop: new Date(stop).toISOString() },
        }),
      });
      expect(res.status).toBe(200);
      const points = ((await res.json()) as { data: Array<{ start: string; value: number }> }).data;
      const store = new SqliteStore(db);
      const stored = store.presenceSeries(office.id, '1m', start, stop);
      store.close();
      expect(stored.length).toBeGreaterThan(30);
      expect(points.map((p) => [Date.parse(p.start), p.value])).toEqual(stored.map((s) => [s.bucketMs, s.value]));
      expect(points.some((p) => p.value > 0)).toBe(true);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});
