import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUN_STEPS } from '../../src/run/run-start.js';
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
    const err = await runScenario({
      version: 1,
      name: 'x',
      sites: [{ name: 'S', timezone: 'Nowhere/City' }],
      bogus: 1,
    }).catch((e: unknown) => e);
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

// The platform's thread and the hive threads start while the run's thread builds the simulator.
describe('runScenario start-up with the platform and the hives in threads', () => {
  it('breaks the start-up into its steps, in the list’s order, that add up to it', async () => {
    const r = await runScenario(QUICKSTART, { durationMs: 2 * 60_000, platformThread: true, hiveThreads: 1 });
    const s = r.perf.startup;
    expect(s).toBeDefined();
    if (!s) return;
    expect(s.steps.map((x) => x.name)).toEqual(RUN_STEPS.map((x) => x.name));
    const phases = [s.load, ...s.steps];
    const sum = phases.reduce((a, p) => a + p.wallMs, 0);
    // Each phase is rounded on its own.
    expect(Math.abs(sum - r.perf.startupMs)).toBeLessThanOrEqual(phases.length);
    for (const p of phases) expect(p.wallMs).toBeGreaterThanOrEqual(0);
    expect(s.platformUpMs).toBeGreaterThanOrEqual(s.load.wallMs);
    expect(s.platformUpMs).toBeLessThanOrEqual(r.perf.startupMs + 1);
    expect(r.perf.hiveThreads).toBe(1);
  }, 60_000);

  it('ends the hive threads it started when the platform refuses to start', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'occusim-startup-')), 'held.sqlite');
    try {
      await runScenario(QUICKSTART, { durationMs: 60_000, dbPath: db });
      const err = await runScenario(QUICKSTART, {
        durationMs: 60_000,
        dbPath: db,
        platformThread: true,
        hiveThreads: 2,
      }).catch((e: unknown) => e);
      expect(isAppError(err, 'USAGE')).toBe(true);
    } finally {
      rmSync(dirname(db), { recursive: true, force: true });
    }
  }, 60_000);
});
