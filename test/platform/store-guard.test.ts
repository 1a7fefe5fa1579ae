import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/cloud/store/sqlite-store.js';
import { cli } from '../cli/fixtures/run-cli.js';

const scenario = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'occusim-guard-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a store that already holds a run', () => {
  const db = join(dir, 'store.sqlite');
  const run = (...flags: string[]) => cli('run', scenario, '--duration', '10m', '--quiet', '--db', db, ...flags);

  it('is refused with exit 2 and a message naming --resume and --fresh', async () => {
    expect((await run()).code).toBe(0);
    const second = await run();
    expect(second.code).toBe(2);
    expect(second.err).toMatch(/already holds a run: pass --resume .* or --fresh/);
    expect(second.err).not.toMatch(/\n\s+at /);
  });

  it('is started over with --fresh: nothing lost, nothing counted twice', async () => {
    const report = join(dir, 'fresh.json');
    const r = await run('--fresh', '--report', report);
    expect(r.code).toBe(0);
    const { result } = JSON.parse(readFileSync(report, 'utf8')) as { result: { messages: { lost: number; duplicateBatches: number } } };
    expect(result.messages.lost).toBe(0);
    expect(result.messages.duplicateBatches).toBe(0);
  });

  it('refuses --resume of another run (another seed) and --resume without --db', async () => {
    const other = await run('--resume', '--seed', '99');
    expect(other.code).toBe(2);
    expect(other.err).toMatch(/holds a different run/);
    expect((await cli('run', scenario, '--resume', '--quiet')).code).toBe(2);
    expect((await run('--resume', '--fresh')).code).toBe(2);
  });

  it('is named the same with --store sqlite:FILE, and --store with --db is refused', async () => {
    const r = await cli('run', scenario, '--duration', '10m', '--quiet', '--store', `sqlite:${db}`);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/already holds a run/);
    expect((await cli('run', scenario, '--quiet', '--store', `sqlite:${db}`, '--db', db)).code).toBe(2);
    // A PostgreSQL store that cannot be reached: a message naming it (without the password), no stack.
    const pg = await cli('run', scenario, '--quiet', '--store', 'postgres://nobody:secret@127.0.0.1:1/occusim');
    expect(pg.code).not.toBe(0);
    expect(pg.err).toMatch(/cannot connect to the PostgreSQL store postgres:\/\/nobody@127\.0\.0\.1:1\/occusim/);
    expect(pg.err).not.toContain('secret');
    expect(pg.err).not.toMatch(/\n\s+at /);
  });
});

describe('a run resumed after SIGKILL', () => {
  it('loses nothing and counts nothing twice: the same stored results as an uninterrupted run', async () => {
    const db = join(dir, 'killed.sqlite');
    const root = new URL('../../', import.meta.url).pathname;
    // Paced at 300x so the kill lands mid-run, once the store holds some batches.
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/cli/fixtures/cli-entry.ts'), 'run', scenario, '--speed', '300', '--quiet', '--db', db], { cwd: root, stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    const stored = (): number => {
      try {
        const s = new SqliteStore(db);
        try {
          return s.getState('finalised_before') ?? 0;
        } finally {
          s.close();
        }
      } catch {
        return 0;
      }
    };
    const deadline = Date.now() + 30_000;
    while (stored() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const resumed = join(dir, 'resumed.json');
    const clean = join(dir, 'clean.json');
    expect((await cli('run', scenario, '--quiet', '--db', db, '--resume', '--report', resumed)).code).toBe(0);
    expect((await cli('run', scenario, '--quiet', '--report', clean)).code).toBe(0);
    type Result = { messages: { lost: number; packetsDelivered: number; packetsSent: number; duplicateBatches: number }; presence: unknown; traffic: unknown; trafficOccupancy: unknown };
    const a = (JSON.parse(readFileSync(resumed, 'utf8')) as { result: Result }).result;
    const b = (JSON.parse(readFileSync(clean, 'utf8')) as { result: Result }).result;
    expect(a.messages.duplicateBatches).toBeGreaterThan(0);
    expect(a.messages.lost).toBe(0);
    expect(a.messages.packetsDelivered).toBe(b.messages.packetsSent);
    expect(a.presence).toEqual(b.presence);
    expect(a.traffic).toEqual(b.traffic);
    expect(a.trafficOccupancy).toEqual(b.trafficOccupancy);
  }, 120_000);
});
