import { describe, expect, it } from 'vitest';
import { runScenario } from '../../src/run/run-scenario.js';
import { parseFaultSchedule } from '../../src/scenario/fault-schedule.js';
import { schedule } from '../support/schedule.js';

/** The battery_drain fault (src/mesh/faults.ts, src/mesh/battery.ts): the charge runs out over the window, then the sensor is dead. */
describe('battery_drain fault', () => {
  it('empties the battery by the end of its window, then stops the sensor exactly as a sensor_death there would', async () => {
    const durationMs = 5 * 60_000;
    const [drained, dead] = await Promise.all([
      runScenario('scenarios/quickstart.yaml', {
        durationMs,
        faults: schedule('battery_drain@60s+2m:sensors=Kitchen'),
        keepStore: false,
      }),
      runScenario('scenarios/quickstart.yaml', {
        durationMs,
        faults: schedule('sensor_death@180s:sensors=Kitchen'),
        keepStore: false,
      }),
    ]);
    const d = drained.result.delivery!;
    expect(d.battery.minLevel).toBe(0);
    expect(dead.result.delivery!.battery.minLevel).toBeGreaterThan(0.9);
    // From the drain's end the sensor is dead: the same packets not produced, none lost.
    expect(d.overall.offlineSuppressed).toBeGreaterThan(0);
    expect(d.overall.offlineSuppressed).toBe(dead.result.delivery!.overall.offlineSuppressed);
    expect(d.overall.lost).toBe(0);
    expect(drained.result.messages.lost).toBe(0);
  }, 120_000);

  it('is refused without a duration: a drain takes time', () => {
    const r = parseFaultSchedule('battery_drain@1m:sensors=Kitchen');
    expect(r.ok).toBe(true);
    return expect(
      runScenario('scenarios/quickstart.yaml', {
        durationMs: 60_000,
        faults: schedule('battery_drain@1m:sensors=Kitchen'),
        keepStore: false,
      }),
    ).rejects.toThrow(/battery_drain needs a duration > 0/);
  });
});
