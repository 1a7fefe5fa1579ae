import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../../src/store/sqlite-async.js';
import { runScenario, type RunReport } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { storedSeries } from '../support/stored-series.js';

const QUICKSTART = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;
const loaded = loadScenarioFile(QUICKSTART);
if (!loaded.ok) throw new Error('quickstart.yaml does not load');
const model = loaded.model;
const dir = mkdtempSync(join(tmpdir(), 'occusim-resume-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MIN = 60_000;

async function seriesOf(path: string): ReturnType<typeof storedSeries> {
  const store = sqliteStore(path);
  try {
    return await storedSeries(store, model);
  } finally {
    await store.close();
  }
}

// A run stopped at its --duration drains the mesh and the hives' buffers: the batches cut then
// hold only packets sensed before the end, while a longer run's batches of the same seqs hold
// the next seconds too. Resumed, the store forgets that drain and takes the longer batches.
describe('a run stopped at its --duration and resumed with a longer one', () => {
  const whole = join(dir, 'whole.sqlite');
  let uninterrupted: RunReport;

  it('stores what an uninterrupted run stores, minute for minute, and its ledger balances', async () => {
    uninterrupted = await runScenario(QUICKSTART, { durationMs: 20 * MIN, dbPath: whole, platformThread: false });
    const parts = join(dir, 'parts.sqlite');
    const first = await runScenario(QUICKSTART, { durationMs: 10 * MIN, dbPath: parts, platformThread: false });
    const resumed = await runScenario(QUICKSTART, {
      durationMs: 20 * MIN,
      dbPath: parts,
      storePolicy: 'resume',
      platformThread: false,
    });
    const w = uninterrupted.result.messages;
    const f = first.result.messages;
    const r = resumed.result.messages;
    expect(f.lost).toBe(0);
    // Sent = stored (now or before) + dead-lettered; nothing lost, the same packets as the uninterrupted run.
    expect(r.lost).toBe(0);
    expect(r.packetsSent).toBe(w.packetsSent);
    expect(r.packetsDelivered).toBe(w.packetsDelivered);
    // The first run's batches but the drain's come again as duplicates; the rest are stored once.
    expect(r.duplicateBatches).toBeGreaterThan(0);
    expect(r.duplicateBatches).toBeLessThan(f.batchesProcessed);
    expect(r.batchesProcessed + r.duplicateBatches).toBe(w.batchesProcessed);
    const a = await seriesOf(parts);
    const b = await seriesOf(whole);
    expect(a.presence.length).toBeGreaterThan(100);
    expect(a.traffic.length).toBeGreaterThan(0);
    expect(a).toEqual(b);
    expect(resumed.result.presence).toEqual(uninterrupted.result.presence);
    expect(resumed.result.traffic).toEqual(uninterrupted.result.traffic);
  }, 120_000);

  it('does so after a run stopped early by its signal (Ctrl-C) mid-interval, also within its first interval', async () => {
    const parts = join(dir, 'interrupted.sqlite');
    const stop = new AbortController();
    // Aborted from the progress callback, between two batch flushes (not on the 10 s grid).
    const onProgress = (doneMs: number): void => {
      if (doneMs >= 7 * MIN + 3_000) stop.abort();
    };
    const first = await runScenario(QUICKSTART, {
      durationMs: 20 * MIN,
      dbPath: parts,
      platformThread: true,
      signal: stop.signal,
      onProgress,
    });
    expect(first.perf.interrupted).toBe(true);
    expect(first.result.messages.lost).toBe(0);
    const resumed = await runScenario(QUICKSTART, {
      durationMs: 20 * MIN,
      dbPath: parts,
      storePolicy: 'resume',
      platformThread: false,
    });
    expect(resumed.result.messages.lost).toBe(0);
    expect(resumed.result.messages.batchesProcessed + resumed.result.messages.duplicateBatches).toBe(
      uninterrupted.result.messages.batchesProcessed,
    );
    expect(await seriesOf(parts)).toEqual(await seriesOf(whole));
    // Stopped before its first batch flush: everything it received is that stop's.
    const early = join(dir, 'early.sqlite');
    const soon = new AbortController();
    await runScenario(QUICKSTART, {
      durationMs: 20 * MIN,
      dbPath: early,
      platformThread: false,
      signal: soon.signal,
      onProgress: (doneMs) => (doneMs >= 6_000 ? soon.abort() : undefined),
    });
    const again = await runScenario(QUICKSTART, {
      durationMs: 20 * MIN,
      dbPath: early,
      storePolicy: 'resume',
      platformThread: false,
    });
    expect(again.result.messages.lost).toBe(0);
    expect(again.result.messages.duplicateBatches).toBe(0);
    expect(await seriesOf(early)).toEqual(await seriesOf(whole));
  }, 120_000);

  it('does so with the platform in its own thread, resumed twice', async () => {
    const parts = join(dir, 'thread.sqlite');
    for (const [minutes, resume] of [
      [7, false],
      [13, true],
      [20, true],
    ] as const) {
      const r = await runScenario(QUICKSTART, {
        durationMs: minutes * MIN,
        dbPath: parts,
        platformThread: true,
        ...(resume ? { storePolicy: 'resume' as const } : {}),
      });
      expect(r.perf.platformThread).toBe(true);
      expect(r.result.messages.lost).toBe(0);
    }
    expect(await seriesOf(parts)).toEqual(await seriesOf(whole));
  }, 120_000);
});

// The hive's outage (20m–30m, cellular backhaul) spans the stop: the first run's drain sends the
// batches it held after the outage, the resumed run holds and sends them again.
describe('a run stopped during a hive outage and resumed', () => {
  it('stores what an uninterrupted run stores, and its ledger balances', async () => {
    const file = new URL('../../scenarios/hive-outage.yaml', import.meta.url).pathname;
    const outage = loadScenarioFile(file);
    if (!outage.ok) throw new Error('hive-outage.yaml does not load');
    const at = (name: string) => join(dir, name);
    const whole = await runScenario(file, {
      durationMs: 40 * MIN,
      dbPath: at('outage-whole.sqlite'),
      platformThread: false,
    });
    await runScenario(file, { durationMs: 25 * MIN, dbPath: at('outage-parts.sqlite'), platformThread: false });
    const resumed = await runScenario(file, {
      durationMs: 40 * MIN,
      dbPath: at('outage-parts.sqlite'),
      storePolicy: 'resume',
      platformThread: false,
    });
    expect(resumed.result.messages.lost).toBe(0);
    expect(resumed.result.messages.packetsDelivered).toBe(whole.result.messages.packetsDelivered);
    expect(resumed.result.messages.batchesProcessed + resumed.result.messages.duplicateBatches).toBe(
      whole.result.messages.batchesProcessed,
    );
    const series = async (path: string): ReturnType<typeof storedSeries> => {
      const store = sqliteStore(path);
      try {
        return await storedSeries(store, outage.model);
      } finally {
        await store.close();
      }
    };
    expect(await series(at('outage-parts.sqlite'))).toEqual(await series(at('outage-whole.sqlite')));
  }, 180_000);
});
