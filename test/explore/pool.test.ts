import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRunPool, type RunPool } from '../../src/explore/pool.js';
import { runOne } from '../../src/explore/run-one.js';
import { runScenario } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import type { FaultFile } from '../../src/scenario/network-schema.js';

/**
 * `--jobs`: worker threads given the scenario loaded once. A schedule run there (or in place
 * by runOne) must give the bytes `occusim run --faults` gives, which loads the file per run.
 */
const DURATION_MS = 5 * 60_000;
const SCHEDULES: FaultFile[][] = [
  [{ kind: 'hive_outage', at: '60s', duration: '90s', hive: 'Hive 1' }],
  [
    { kind: 'sensor_offline', at: '30s', duration: '100s', sensors: ['Kitchen'] },
    { kind: 'broker_restart', at: '200s' },
  ],
];

describe('explore run pool', () => {
  let model: ScenarioModel;
  let pool: RunPool;
  beforeAll(async () => {
    const loaded = loadScenarioFile('scenarios/quickstart.yaml', { durationMs: DURATION_MS });
    if (!loaded.ok) throw new Error('quickstart does not load');
    model = { ...loaded.model, faults: [] };
    pool = await startRunPool(2, { model, invariantCmd: null });
  }, 60_000);
  afterAll(() => pool.close());

  it('runs each schedule on the model loaded once to the same result as a run that loads the file with --faults', async () => {
    const pooled = await Promise.all(SCHEDULES.map((faults) => pool.run(faults)));
    for (const [i, faults] of SCHEDULES.entries()) {
      const alone = (
        await runScenario('scenarios/quickstart.yaml', { durationMs: DURATION_MS, faults, keepStore: false })
      ).result;
      expect(JSON.stringify(pooled[i]!.result)).toBe(JSON.stringify(alone));
      expect(JSON.stringify((await runOne({ model, invariantCmd: null }, faults)).result)).toBe(JSON.stringify(alone));
      expect(pooled[i]!.cost!.simulationMs).toBeGreaterThan(0);
    }
  }, 240_000);

  it('refuses a schedule naming a hive the scenario does not have, as the loader does', async () => {
    await expect(pool.run([{ kind: 'hive_outage', at: '60s', duration: '90s', hive: 'Hive 9' }])).rejects.toThrow(
      /--faults: fault 1: unknown hive `Hive 9`/,
    );
  });
});
