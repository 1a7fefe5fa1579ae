import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runScenario, type RunReport } from '../../src/run/run-scenario.js';
import { isAppError } from '../../src/core/errors.js';

const QUICKSTART = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;

// End to end over real sockets: embedded Aedes on a localhost TCP port, hive and cloud MQTT
// clients, a real SQLite file.
describe('runScenario on the quickstart office', () => {
  let first: RunReport;

  it('measures room occupancy within one person of truth and loses nothing', async () => {
    first = await runScenario(QUICKSTART, { seed: 7 });
    const r = first.result;
    expect(r.presence.rooms.minutes).toBeGreaterThan(500);
    expect(r.presence.rooms.mae).toBeLessThan(1);
    expect(r.messages.lost).toBe(0);
    expect(r.messages.deadLettered).toBe(0);
    expect(r.messages.packetsDelivered).toBe(r.messages.packetsSent);
    expect(r.traffic.overall.trueCrossings).toBeGreaterThan(20);
    expect(r.traffic.overall.recall).toBeGreaterThan(0.85);
    expect(existsSync(first.db)).toBe(true);
  });

  it('gives a byte-identical result for the same seed', async () => {
    const again = await runScenario(QUICKSTART, { seed: 7 });
    expect(JSON.stringify(again.result)).toBe(JSON.stringify(first.result));
  });

  it('gives a different result for another seed', async () => {
    const other = await runScenario(QUICKSTART, { seed: 8 });
    expect(other.result.scenario.seed).toBe(8);
    expect(JSON.stringify(other.result.presence)).not.toBe(JSON.stringify(first.result.presence));
  });

  it('refuses an invalid scenario with every located problem', async () => {
    const err = await runScenario({ version: 1, name: 'x', sites: [{ name: 'S', timezone: 'Nowhere/City' }], bogus: 1 }).catch((e: unknown) => e);
    expect(isAppError(err, 'SCENARIO_INVALID')).toBe(true);
    expect((err as Error).message).toMatch(/timezone/);
    expect((err as Error).message).toMatch(/bogus/);
  });

  it('runs frame fidelity too (workers and determinism: test/edge/frame-run.test.ts)', async () => {
    const r = await runScenario(QUICKSTART, { fidelity: 'frame', workers: 0, durationMs: 60_000 });
    expect(r.result.scenario.fidelity).toBe('frame');
    expect(r.result.messages.lost).toBe(0);
  });
});
