import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runScenario, type RunReport } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { schedule } from '../support/schedule.js';
import { storedRunText } from '../support/stored-series.js';
import { postgresPerFile } from '../support/postgres-per-file.js';

/**
 * The `store_restart` fault (src/platform/store-restarts.ts, platform-faults.ts): the ingest's
 * store connection closed at `at` and opened again at `at + duration`; batches meanwhile are
 * not acked (the hives send them again), heartbeats wait, minutes are finalised once it is back.
 * Quickstart slices of 8 simulated minutes against the fault-free run.
 */
const QUICKSTART = 'scenarios/quickstart.yaml';
const DURATION_MS = 8 * 60_000;
const loaded = loadScenarioFile(QUICKSTART);
if (!loaded.ok) throw new Error('quickstart does not load');
const model = loaded.model;
const dir = mkdtempSync(join(tmpdir(), 'occusim-store-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const postgres = postgresPerFile();

const stored = (db: string): unknown => {
  const { presence, traffic } = JSON.parse(storedRunText(db, model)) as { presence: unknown; traffic: unknown };
  return { presence, traffic };
};

async function run(name: string, faults: string): Promise<[RunReport, string]> {
  const dbPath = join(dir, `${name}.sqlite`);
  return [await runScenario(QUICKSTART, { durationMs: DURATION_MS, dbPath, faults: schedule(faults) }), dbPath];
}

describe('store_restart fault', () => {
  it('takes the store away for 45 s and brings it back: nothing acked meanwhile, the stored series and the ledger are the fault-free run’s', async () => {
    const [[restarted, restartedDb], [clean, cleanDb]] = [
      await run('restarted', 'store_restart@2m+45s'),
      await run('clean', ''),
    ];
    expect(restarted.result.delivery?.storeRestarts).toBe(1);
    const m = restarted.result.messages;
    expect(m.lost).toBe(0);
    expect(m.packetsDelivered).toBe(clean.result.messages.packetsDelivered);
    expect(m.batchesProcessed).toBe(clean.result.messages.batchesProcessed);
    // The four flushes inside the window were answered without an ack covering them: sent again.
    expect(restarted.result.delivery?.overall.retransmitted).toBeGreaterThan(
      clean.result.delivery?.overall.retransmitted ?? 0,
    );
    expect(stored(restartedDb)).toEqual(stored(cleanDb));
    expect(restarted.result.presence).toEqual(clean.result.presence);
    expect(restarted.result.traffic).toEqual(clean.result.traffic);
  }, 120_000);

  it('restarts the store between two flushes when the outage is shorter than a batch interval (the 5 s default), and counts each restart', async () => {
    const [[restarted, restartedDb], [, cleanDb]] = [
      await run('between', 'store_restart@1m1s; store_restart@3m+2s; store_restart@3m1s+30s'),
      await run('clean-2', ''),
    ];
    // The last two overlap: one outage.
    expect(restarted.result.delivery?.storeRestarts).toBe(2);
    expect(restarted.result.messages.lost).toBe(0);
    expect(stored(restartedDb)).toEqual(stored(cleanDb));
  }, 120_000);

  // Found by `occusim explore quickstart --seed 20261128 --duration 10m` (kinds store_restart,
  // platform_restart, …): the resumed run's batch answered while the store was away was released
  // by an ack covering what the first leg stored, and never counted as stored before (504 lost).
  it('store_restart@75s+9s; platform_restart@466s: a batch acked while the store is away, stored before, is counted once', async () => {
    const faults = 'store_restart@75s+9s; platform_restart@466s';
    const [faulty, clean] = await Promise.all([
      runScenario(QUICKSTART, { durationMs: 600_000, faults: schedule(faults), keepStore: false }),
      runScenario(QUICKSTART, { durationMs: 600_000, faults: [], keepStore: false }),
    ]);
    expect(faulty.result.messages.lost).toBe(0);
    expect(faulty.result.messages.packetsDelivered).toBe(clean.result.messages.packetsDelivered);
    expect(faulty.result.presence).toEqual(clean.result.presence);
  }, 120_000);

  it.skipIf(postgres.skip !== null)(
    'on a PostgreSQL store too, with an ingest kill after it: the ingest reconnects, its successor resumes, and the results are the fault-free run’s',
    async () => {
      const [faultyDb, cleanDb] = [await postgres.createDatabase(), await postgres.createDatabase()];
      const options = { durationMs: DURATION_MS, keepStore: false };
      const faulty = await runScenario(QUICKSTART, {
        ...options,
        dbPath: faultyDb,
        faults: schedule('store_restart@2m+30s; ingest_kill@4m5s'),
      });
      const clean = await runScenario(QUICKSTART, { ...options, dbPath: cleanDb, faults: [] });
      expect([faulty.result.delivery?.storeRestarts, faulty.result.delivery?.ingestKills]).toEqual([1, 1]);
      expect(faulty.result.messages.lost).toBe(0);
      expect(faulty.result.messages.packetsDelivered).toBe(clean.result.messages.packetsDelivered);
      expect(faulty.result.presence).toEqual(clean.result.presence);
      expect(faulty.result.traffic).toEqual(clean.result.traffic);
    },
    120_000,
  );
});
