import { describe, expect, it } from 'vitest';
import { runScenario } from '../../src/run/run-scenario.js';
import { parseFaultSchedule } from '../../src/scenario/fault-schedule.js';

/** The duplicate_batch fault (src/hive/hive-node.ts `#twice`): every batch delivered twice while it lasts, none counted twice. */
describe('duplicate_batch fault', () => {
  it('delivers each batch of the window twice; the cloud stores each once and the ledger names every copy', async () => {
    const schedule = parseFaultSchedule('duplicate_batch@60s+60s:hive=Hive 1');
    if (!schedule.ok) throw new Error(schedule.message);
    const durationMs = 4 * 60_000;
    const [dup, clean] = await Promise.all([
      runScenario('scenarios/quickstart.yaml', { durationMs, faults: schedule.faults, keepStore: false }),
      runScenario('scenarios/quickstart.yaml', { durationMs, faults: [], keepStore: false }),
    ]);
    const m = dup.result.messages;
    // 6 intervals of 10 s in the window, one batch each.
    expect(m.duplicateBatches).toBe(6);
    expect(dup.result.delivery?.overall.duplicated).toBe(6);
    expect(m.batchesProcessed).toBe(clean.result.messages.batchesProcessed);
    expect(m.lost).toBe(0);
    expect(dup.result.presence).toEqual(clean.result.presence);
    expect(dup.result.traffic).toEqual(clean.result.traffic);
  }, 120_000);
});
