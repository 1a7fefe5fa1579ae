import { describe, expect, it } from 'vitest';
import { runScenario } from '../../src/run/run-scenario.js';
import { parseFaultSchedule } from '../../src/scenario/fault-schedule.js';

/** The sensor_death fault (src/mesh/faults.ts: offline to the end): a sensor stops for good; what it would have sent is not generated, not lost. */
describe('sensor_death fault', () => {
  it('stops the sensor from `at` on; the ledger counts its packets as not produced, and loses none', async () => {
    const schedule = parseFaultSchedule('sensor_death@60s:sensors=Kitchen');
    if (!schedule.ok) throw new Error(schedule.message);
    const durationMs = 4 * 60_000;
    const [dead, clean] = await Promise.all([
      runScenario('scenarios/quickstart.yaml', { durationMs, faults: schedule.faults, keepStore: false }),
      runScenario('scenarios/quickstart.yaml', { durationMs, faults: [], keepStore: false }),
    ]);
    const d = dead.result.delivery!.overall;
    const c = clean.result.delivery!.overall;
    expect(c.offlineSuppressed).toBe(0);
    expect(d.offlineSuppressed).toBeGreaterThan(0);
    // Every packet the sensor would have sensed after its death is counted as not produced: the rest is the fault-free run's.
    expect(d.generated + d.offlineSuppressed).toBe(c.generated);
    expect(d.lost).toBe(0);
    expect(dead.result.messages.lost).toBe(0);
    expect(d.acked).toBe(c.acked - d.offlineSuppressed);
  }, 120_000);
});
