import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runScenario } from '../../src/run/run-scenario.js';

/**
 * End to end across a DST change with a missing midnight: scenarios/dst-santiago.yaml cut to
 * 23:00 −04:00 to 01:30 −03:00 on 5–6 September 2026 (90 minutes), when America/Santiago jumps from 24:00 −04:00 to
 * 01:00 −03:00: local 00:00 never exists and the day starts at 01:00.
 */
describe('DST scenario', () => {
  it('resets traffic occupancy at 01:00 −03:00 and keeps presence within the documented tolerance', async () => {
    const doc = parse(readFileSync(new URL('../../scenarios/dst-santiago.yaml', import.meta.url), 'utf8')) as Record<
      string,
      unknown
    >;
    const report = await runScenario({ ...doc, start: '2026-09-05T23:00', duration: '90m' });
    const r = report.result;
    expect(r.messages.lost).toBe(0);
    const floor = r.trafficOccupancy.spaces.find((s) => s.kind === 'floor');
    expect(floor?.resets).toBe(1);
    // docs/occupancy.md, "Accuracy": MAE ≤ 0.25 people per room-minute, ≥ 95 % within ±1.
    expect(r.presence.rooms.mae).toBeLessThanOrEqual(0.25);
    expect(r.presence.rooms.withinOneRate).toBeGreaterThanOrEqual(0.95);
    expect(floor?.maeCalibrated).toBeLessThanOrEqual(floor?.maeRaw ?? 0);
    expect(r.pipeline.eventsEmitted).toBeGreaterThan(0);
  }, 60_000);
});
