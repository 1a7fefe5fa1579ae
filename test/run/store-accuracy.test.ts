import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../../src/store/sqlite-async.js';
import type { Store } from '../../src/store/port.js';
import { DAY_MS } from '../../src/core/time.js';
import { mergeReports, withStoreAccuracy } from '../../src/run/report-merge.js';
import { runScenario, type RunReport } from '../../src/run/run-scenario.js';
import { replayTruth, storeAccuracy, type StoreAccuracy } from '../../src/run/store-accuracy.js';
import { loadScenarioObject } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { threeHiveScenario } from './fixtures/three-hives.js';

/**
 * `report merge --store` computes the whole run's accuracy from a store alone (no platform, no
 * shard's counters): a single-process run into a SQLite file, then the store-based figures must
 * be the run's own `result`, figure for figure — presence, traffic, traffic-based occupancy (raw
 * and calibrated, with the scenario's calibration points) and the events emitted. The same
 * against PostgreSQL through a distributed run: test/run/distributed.test.ts.
 */
const scenario = (): object => threeHiveScenario('20m', { calibrationPoints: true });

describe('storeAccuracy: the run report read from a SQLite store alone', () => {
  let dir = '';
  let run: RunReport;
  let model: ScenarioModel;
  let store: Store;
  let fromStore: StoreAccuracy;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'occusim-store-accuracy-'));
    const db = join(dir, 'run.sqlite');
    run = await runScenario(scenario(), { platformThread: false, dbPath: db });
    const loaded = loadScenarioObject(scenario());
    if (!loaded.ok) throw new Error('fixture scenario invalid');
    model = loaded.model;
    store = sqliteStore(db);
    fromStore = await storeAccuracy(model, replayTruth(model), store);
  }, 120_000);

  afterAll(async () => {
    await store?.close();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('gives the run’s traffic-based occupancy, raw and calibrated, for every traffic space', () => {
    const t = run.result.trafficOccupancy;
    // Quickstart: the floor (its one entrance counted), the lobby, the open office and the meeting room.
    expect(t.spaces.map((s) => s.id).length).toBeGreaterThanOrEqual(3);
    expect(t.spaces.some((s) => s.minutes > 0 && s.maeRaw !== s.maeCalibrated)).toBe(true);
    expect(fromStore.trafficOccupancy).toEqual(t);
  });

  it('gives the run’s presence and traffic accuracy', () => {
    expect(fromStore.presence.spaces.length).toBeGreaterThan(1);
    expect(fromStore.presence).toEqual(run.result.presence);
    expect(fromStore.traffic).toEqual(run.result.traffic);
  });

  it('counts the run’s emitted events in the outbox', () => {
    expect(run.result.pipeline.eventsEmitted).toBeGreaterThan(0);
    expect(fromStore.eventsEmitted).toBe(run.result.pipeline.eventsEmitted);
  });

  it('gives the run’s sensing → stored latency percentiles, from the stored payloads and their received instants', () => {
    expect(run.result.latencyMs.p99).toBeGreaterThan(0);
    expect(fromStore.latencyMs).toEqual(run.result.latencyMs);
  });

  it('report merge --store: the merged report carries them and no longer lists them in notMerged', () => {
    // The run as its only shard (1/1): what `report merge s.json --store run.sqlite` computes.
    const asShard: RunReport = {
      ...run,
      shard: { index: 1, count: 1, hives: model.hives.map((h) => h.serial), totalHives: model.hives.length },
    };
    const shardsOnly = mergeReports([asShard]);
    expect(shardsOnly.notMerged.map((n) => n.split(':')[0])).toEqual([
      'latencyMs p50/p90/p99',
      'pipeline.eventsEmitted',
      'trafficOccupancy',
      'presence of spaces measured by several shards (listed in presence.splitSpaces)',
      'detector, webhooks and perf',
    ]);
    const merged = withStoreAccuracy(shardsOnly, fromStore, 'run.sqlite');
    expect(merged.trafficOccupancy).toEqual(run.result.trafficOccupancy);
    expect(merged.pipeline).toEqual(run.result.pipeline);
    expect(merged.presence).toEqual({ ...run.result.presence, splitSpaces: [] });
    expect(merged.latencyMs).toEqual(run.result.latencyMs);
    expect(merged.notMerged.map((n) => n.split(':')[0])).toEqual(['detector, webhooks and perf']);
    // Events the store could not count all of stay listed, and absent.
    const uncounted = withStoreAccuracy(
      shardsOnly,
      { ...fromStore, eventsEmitted: null, latencyMs: null },
      'run.sqlite',
    );
    expect(uncounted.pipeline.eventsEmitted).toBeUndefined();
    expect(uncounted.latencyMs.p99).toBeUndefined();
    expect(uncounted.notMerged.map((n) => n.split(':')[0])).toEqual([
      'latencyMs p50/p90/p99',
      'pipeline.eventsEmitted',
      'detector, webhooks and perf',
    ]);
  });

  it('does not count events for a run longer than the outbox keeps them (the recompute prunes them)', async () => {
    const long = await storeAccuracy({ ...model, durationMs: 8 * DAY_MS }, replayTruth(model), store);
    expect(long.eventsEmitted).toBeNull();
    // The series figures do not depend on it.
    expect(long.presence).toEqual(run.result.presence);
  });
});
