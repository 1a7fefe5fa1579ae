import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runScenario } from '../../src/run/run-scenario.js';
import { schedule } from '../support/schedule.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { storedRunText } from '../support/stored-series.js';

const QUICKSTART = 'scenarios/quickstart.yaml';
interface Stored {
  presence: unknown;
  traffic: unknown;
  events: Array<{ eventId: string; minuteMs: number; emittedAtMs: number; revision: number }>;
}
const loaded = loadScenarioFile(QUICKSTART);
if (!loaded.ok) throw new Error('quickstart does not load');
const model = loaded.model;
const dir = mkdtempSync(join(tmpdir(), 'occusim-platform-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The platform_restart fault (src/run/platform-restarts.ts): stopped at each instant, resumed from the store. */
describe('platform_restart fault', () => {
  it('stops the run and resumes it from its store: the same stored series and result as the uninterrupted run, and its outbox but the stops’ repeats', async () => {
    const durationMs = 20 * 60_000;
    const [restartedDb, wholeDb] = [join(dir, 'restarted.sqlite'), join(dir, 'whole.sqlite')];
    const restarted = await runScenario(QUICKSTART, {
      durationMs,
      dbPath: restartedDb,
      faults: schedule('platform_restart@7m; hive_outage@9m+2m:hive=Hive 1; platform_restart@13m'),
    });
    const whole = await runScenario(QUICKSTART, {
      durationMs,
      dbPath: wholeDb,
      faults: schedule('hive_outage@9m+2m:hive=Hive 1'),
    });
    // 08:00 in Paris is 07:00 UTC.
    expect(restarted.platformRestarts).toEqual(['2026-03-02T07:07:00.000Z', '2026-03-02T07:13:00.000Z']);
    expect(restarted.result.messages.lost).toBe(0);
    expect(restarted.result.presence).toEqual(whole.result.presence);
    expect(restarted.result.traffic).toEqual(whole.result.traffic);
    const [r, w] = [restartedDb, wholeDb].map((db) => JSON.parse(storedRunText(db, model)) as Stored) as [
      Stored,
      Stored,
    ];
    expect(r.presence).toEqual(w.presence);
    expect(r.traffic).toEqual(w.traffic);
    // The outbox: every event of the restarted run is the uninterrupted run's, value and revision
    // alike. Missing are only repeats: the stop finalised every minute (docs/platform.md), so the
    // resumed run's recomputes no longer send those minutes again, as the uninterrupted run's did.
    const wholeEvents = new Map(w.events.map((e) => [e.eventId, JSON.stringify(e)]));
    expect(r.events.filter((e) => wholeEvents.get(e.eventId) !== JSON.stringify(e))).toEqual([]);
    const held = new Set(r.events.map((e) => e.eventId));
    const missing = w.events.filter((e) => !held.has(e.eventId));
    const restarts = (restarted.platformRestarts ?? []).map((t) => Date.parse(t));
    // Those repeats: of a minute before a restart, sent within the recompute window (5 minutes) after it.
    const WINDOW_MS = 6 * 60_000;
    const explained = (e: Stored['events'][number]): boolean =>
      restarts.some((t) => e.minuteMs < t && e.emittedAtMs >= t && e.emittedAtMs < t + WINDOW_MS);
    expect(missing.length).toBeGreaterThan(0);
    expect(missing.filter((e) => !explained(e))).toEqual([]);
  }, 180_000);

  // Found by `occusim explore quickstart --seed 20261128` (test/explore/bounded-search.slow.test.ts):
  // the resumed run's replay delivered each batch of the duplicate_batch window twice, and both
  // copies were counted as stored before the restart (the ledger went 144 packets negative).
  it('duplicate_batch@201s+15s:hive=Hive 1; platform_restart@238s: a batch arriving twice is counted as stored before once', async () => {
    const faults = 'duplicate_batch@201s+15s:hive=Hive 1; platform_restart@238s';
    const [restarted, clean] = await Promise.all([
      runScenario(QUICKSTART, { durationMs: 600_000, faults: schedule(faults), keepStore: false }),
      runScenario(QUICKSTART, { durationMs: 600_000, faults: [], keepStore: false }),
    ]);
    expect(restarted.result.messages.lost).toBe(0);
    expect(restarted.result.messages.packetsDelivered).toBe(clean.result.messages.packetsDelivered);
    expect(restarted.result.messages.packetsSent).toBe(clean.result.messages.packetsSent);
  }, 120_000);

  // Found by the bounded explore (test/explore/bounded-search.slow.test.ts, seed 20261128) once it
  // drew store_restart and ingest_kill too: the resumed run's hive sent batch 2 into its reboot
  // (lost on the way), then dropped it on an ack covering what the first leg stored, so the cloud
  // never counted it as stored before (30 packets lost from the ledger, none from the store).
  it('hive_reboot@13s+9s:hive=Hive 1; platform_restart@64s: a batch whose only send was lost is sent again, not dropped on an ack covering it', async () => {
    const faults = 'hive_reboot@13s+9s:hive=Hive 1; platform_restart@64s';
    const [restarted, clean] = await Promise.all([
      runScenario(QUICKSTART, { durationMs: 600_000, faults: schedule(faults), keepStore: false }),
      runScenario(QUICKSTART, {
        durationMs: 600_000,
        faults: schedule('hive_reboot@13s+9s:hive=Hive 1'),
        keepStore: false,
      }),
    ]);
    expect(restarted.result.messages.lost).toBe(0);
    expect(restarted.result.messages.packetsDelivered).toBe(clean.result.messages.packetsDelivered);
    expect(restarted.result.presence).toEqual(clean.result.presence);
  }, 120_000);

  it('is refused with a duration, at the start, or with --record, naming the fault', async () => {
    await expect(
      runScenario(QUICKSTART, { durationMs: 60_000, faults: schedule('platform_restart@30s+1m'), keepStore: false }),
    ).rejects.toThrow(/faults\[0\]\.duration.*platform_restart has no duration|platform_restart has no duration/);
    await expect(
      runScenario(QUICKSTART, { durationMs: 60_000, faults: schedule('platform_restart@0s'), keepStore: false }),
    ).rejects.toThrow(/platform_restart must come after the start/);
    await expect(
      runScenario(QUICKSTART, {
        durationMs: 60_000,
        faults: schedule('platform_restart@30s'),
        keepStore: false,
        record: join(dir, 'capture.jsonl'),
      }),
    ).rejects.toThrow(/platform_restart cannot be recorded/);
  });
});
