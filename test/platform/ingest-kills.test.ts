import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runScenario, type RunReport } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { schedule } from '../support/schedule.js';
import { storedRunText } from '../support/stored-series.js';

/**
 * The `ingest_kill` fault (src/platform/ingest-kills.ts, platform-faults.ts): the run's ingest
 * dies without warning in the flush the kill falls in (that flush's batches stored, none acked),
 * a successor resumes from the store, the hives send the unacked batches again after their ack
 * timeout. Quickstart slices of 8 simulated minutes against the fault-free run.
 */
const QUICKSTART = 'scenarios/quickstart.yaml';
const DURATION_MS = 8 * 60_000;
const loaded = loadScenarioFile(QUICKSTART);
if (!loaded.ok) throw new Error('quickstart does not load');
const model = loaded.model;
const dir = mkdtempSync(join(tmpdir(), 'occusim-ingest-kill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Stored {
  presence: unknown;
  traffic: unknown;
}
const stored = (db: string): Stored => {
  const { presence, traffic } = JSON.parse(storedRunText(db, model)) as Stored;
  return { presence, traffic };
};

async function run(
  name: string,
  faults: string,
  extra: { platformThread?: boolean } = {},
): Promise<[RunReport, string]> {
  const dbPath = join(dir, `${name}.sqlite`);
  const report = await runScenario(QUICKSTART, { durationMs: DURATION_MS, dbPath, faults: schedule(faults), ...extra });
  return [report, dbPath];
}

describe('ingest_kill fault', () => {
  it('kills the ingest mid-run and its successor resumes from the store: the stored series and the ledger are the fault-free run’s', async () => {
    const [[killed, killedDb], [clean, cleanDb]] = [
      await run('killed', 'ingest_kill@3m5s; ingest_kill@5m30s'),
      await run('clean', ''),
    ];
    expect(killed.result.delivery?.ingestKills).toBe(2);
    expect(clean.result.delivery?.ingestKills).toBeUndefined();
    const m = killed.result.messages;
    expect(m.lost).toBe(0);
    expect(m.packetsDelivered).toBe(clean.result.messages.packetsDelivered);
    expect(m.batchesProcessed).toBe(clean.result.messages.batchesProcessed);
    expect(stored(killedDb)).toEqual(stored(cleanDb));
    expect(killed.result.presence).toEqual(clean.result.presence);
    expect(killed.result.traffic).toEqual(clean.result.traffic);
  }, 120_000);

  // Acks are cumulative: the successor's first ack covers what the killed process stored and never
  // acked, unless no ack comes before the hive's ack timeout, as here, with its uplink down.
  it('ingest_kill@3m5s; hive_outage@3m10s+1m:hive=Hive 1: the batches the killed process stored are sent again after the outage and counted as duplicates, stored once', async () => {
    const [[killed, killedDb], [clean, cleanDb]] = [
      await run('killed-outage', 'ingest_kill@3m5s; hive_outage@3m10s+1m:hive=Hive 1'),
      await run('clean-outage', 'hive_outage@3m10s+1m:hive=Hive 1'),
    ];
    const m = killed.result.messages;
    expect(m.duplicateBatches).toBeGreaterThan(clean.result.messages.duplicateBatches);
    expect(m.lost).toBe(0);
    expect(m.batchesProcessed).toBe(clean.result.messages.batchesProcessed);
    expect(m.packetsDelivered).toBe(clean.result.messages.packetsDelivered);
    expect(stored(killedDb)).toEqual(stored(cleanDb));
  }, 120_000);

  it('is deterministic: the same schedule gives the same stored bytes, with the platform in its own thread or not', async () => {
    const [[a, aDb], [b, bDb]] = [
      await run('again-1', 'ingest_kill@2m; store_restart@2m30s+20s'),
      await run('again-2', 'ingest_kill@2m; store_restart@2m30s+20s', { platformThread: true }),
    ];
    expect(storedRunText(aDb, model)).toBe(storedRunText(bDb, model));
    expect(a.result).toEqual(b.result);
    expect(a.result.messages.lost).toBe(0);
  }, 120_000);

  it('is refused where the run has no ingest of its own to kill, or a store that would not survive it', async () => {
    await expect(
      runScenario(QUICKSTART, { durationMs: 60_000, faults: schedule('ingest_kill@30s'), externalIngest: true }),
    ).rejects.toThrow(/store_restart and ingest_kill need the run’s own ingest: not with --external-ingest/);
    await expect(
      runScenario(QUICKSTART, { durationMs: 60_000, faults: schedule('ingest_kill@30s'), dbPath: ':memory:' }),
    ).rejects.toThrow(/a SQLite store in memory \(:memory:\) is gone once closed/);
  }, 60_000);
});
