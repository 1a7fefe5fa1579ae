import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { sqliteStore } from '../../src/store/sqlite-async.js';
import { guardStore } from '../../src/store/guard.js';
import { guardedStore } from '../../src/store/open.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { cli } from '../cli/fixtures/run-cli.js';
import { storedSeries } from '../support/stored-series.js';

const scenario = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;
const loaded = loadScenarioFile(scenario);
if (!loaded.ok) throw new Error('quickstart.yaml does not load');
const model: ScenarioModel = loaded.model;
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
    const { result } = JSON.parse(readFileSync(report, 'utf8')) as {
      result: { messages: { lost: number; duplicateBatches: number } };
    };
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

describe('resuming a store whose run ended at its --duration', () => {
  it('forgets what the store received from that end on (the end-of-run drain) only for a run that sends everything again, and marks the new end', async () => {
    const path = join(dir, 'drained.sqlite');
    const location = { kind: 'sqlite' as const, path };
    const T = Date.UTC(2026, 2, 2, 7, 0);
    await guardStore(guardedStore(location), 'new', 'run', T + 10_000);
    const store = sqliteStore(path);
    for (const seq of [1, 2])
      await store.writeBatch({
        hiveSerial: 'HV1',
        seq,
        sentAtMs: T + seq * 10_000 - 5_000,
        receivedAtMs: T + seq * 10_000 - 5_000,
        ackedSeq: seq,
        packetCount: 0,
        raw: null,
        deadLetters: [],
      });
    await store.close();
    const state = async (): Promise<[boolean, number, number | undefined]> => {
      const s = sqliteStore(path);
      try {
        return [await s.hasBatch('HV1', 2), await s.ackedSeq('HV1'), await s.getState('drain_from_ms')];
      } finally {
        await s.close();
      }
    };
    // `serve` continues a store without sending anything again: nothing is forgotten.
    await guardStore(guardedStore(location), 'resume', 'run', null);
    expect(await state()).toEqual([true, 2, T + 10_000]);
    await guardStore(guardedStore(location), 'resume', 'run', T + 20 * 60_000);
    expect(await state()).toEqual([false, 1, T + 20 * 60_000]);
  });
});

describe('a run resumed after SIGKILL', () => {
  it('loses nothing and counts nothing twice: the stored series of an uninterrupted run, each stored batch resent once as a duplicate', async () => {
    const db = join(dir, 'killed.sqlite');
    const root = new URL('../../', import.meta.url).pathname;
    // Paced at 300x so the kill lands mid-run, once the store holds some batches.
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(root, 'test/cli/fixtures/cli-entry.ts'),
        'run',
        scenario,
        '--speed',
        '300',
        '--quiet',
        '--db',
        db,
      ],
      { cwd: root, stdio: 'ignore' },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    const read = <T>(f: (s: SqliteStore) => T, none: T): T => {
      try {
        const s = new SqliteStore(db);
        try {
          return f(s);
        } finally {
          s.close();
        }
      } catch {
        return none;
      }
    };
    const deadline = Date.now() + 30_000;
    while (read((s) => s.getState('finalised_before') ?? 0, 0) === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    // Batches stored by the killed run (each hive's stored progress).
    const storedAtKill = read((s) => model.hives.reduce((n, h) => n + s.ackedSeq(h.serial), 0), 0);
    expect(storedAtKill).toBeGreaterThan(0);
    const resumed = join(dir, 'resumed.json');
    const clean = join(dir, 'clean.json');
    const cleanDb = join(dir, 'clean.sqlite');
    expect((await cli('run', scenario, '--quiet', '--db', db, '--resume', '--report', resumed)).code).toBe(0);
    expect((await cli('run', scenario, '--quiet', '--db', cleanDb, '--report', clean)).code).toBe(0);
    type Result = {
      messages: {
        lost: number;
        packetsDelivered: number;
        packetsSent: number;
        batchesProcessed: number;
        duplicateBatches: number;
        deadLettered: number;
      };
      presence: unknown;
      traffic: unknown;
      trafficOccupancy: unknown;
    };
    const a = (JSON.parse(readFileSync(resumed, 'utf8')) as { result: Result }).result;
    const b = (JSON.parse(readFileSync(clean, 'utf8')) as { result: Result }).result;
    // The ledger: every packet sent is stored now or was before, or dead-lettered.
    expect(a.messages.lost).toBe(0);
    expect(a.messages.packetsSent).toBe(b.messages.packetsSent);
    expect(a.messages.packetsDelivered).toBe(b.messages.packetsSent);
    expect(a.messages.deadLettered).toBe(b.messages.deadLettered);
    // Each batch the killed run stored comes again, the same batch: a duplicate, not stored twice.
    expect(a.messages.duplicateBatches).toBe(storedAtKill);
    expect(a.messages.batchesProcessed + storedAtKill).toBe(b.messages.batchesProcessed);
    expect(await storedSeriesAt(db)).toEqual(await storedSeriesAt(cleanDb));
    expect(a.presence).toEqual(b.presence);
    expect(a.traffic).toEqual(b.traffic);
    expect(a.trafficOccupancy).toEqual(b.trafficOccupancy);
  }, 180_000);
});

async function storedSeriesAt(path: string): ReturnType<typeof storedSeries> {
  const store = sqliteStore(path);
  try {
    return await storedSeries(store, model);
  } finally {
    await store.close();
  }
}
