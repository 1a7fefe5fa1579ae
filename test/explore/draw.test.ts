import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/core/time.js';
import { rngFor } from '../../src/core/rng.js';
import { drawSchedule, EXPLORE_FAULT_KINDS, LOSS_FREE_KINDS } from '../../src/explore/draw.js';
import { formatFaultSchedule, parseFaultSchedule } from '../../src/scenario/fault-schedule.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { faultsOnModel } from '../../src/scenario/resolve-network.js';

const SEED = 20261128;

/** Drawing schedules (src/explore/draw.ts): every kind, every draw a schedule the loader takes. */
describe('explore schedule drawing', () => {
  const loaded = loadScenarioFile('scenarios/quickstart.yaml');
  if (!loaded.ok) throw new Error('quickstart does not load');
  const model = loaded.model;
  const targets = { hives: model.hives.map((h) => h.name), sensors: model.sensors.map((s) => s.name) };

  it(`draws every kind as a valid --faults argument that resolves on the scenario (seed ${SEED})`, () => {
    const seen = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const faults = drawSchedule(rngFor(SEED, `draw/${i}`), targets, 10 * 60_000, EXPLORE_FAULT_KINDS, 3);
      for (const f of faults) seen.add(f.kind);
      expect(parseFaultSchedule(formatFaultSchedule(faults))).toEqual({ ok: true, faults });
      const resolved = faultsOnModel(model, faults);
      expect(resolved.ok, JSON.stringify(faults)).toBe(true);
    }
    expect([...seen].sort()).toEqual([...EXPLORE_FAULT_KINDS].sort());
  });

  it(`draws clock skews on both sides of the protocol's 2 s tolerance, never 0, within 2 minutes; they count as loss-free (seed ${SEED})`, () => {
    const offsets: number[] = [];
    for (let i = 0; i < 200; i++) {
      for (const f of drawSchedule(rngFor(SEED, `skew/${i}`), targets, 10 * 60_000, ['clock_skew'], 3)) {
        const ms = parseDuration(f.offset!.replace(/^[+-]/, ''))! * (f.offset!.startsWith('-') ? -1 : 1);
        offsets.push(ms);
      }
    }
    expect(offsets.every((ms) => ms !== 0 && Math.abs(ms) <= 120_000)).toBe(true);
    expect(offsets.some((ms) => ms < -2_000)).toBe(true);
    expect(offsets.some((ms) => ms > 2_000)).toBe(true);
    expect(LOSS_FREE_KINDS.has('clock_skew')).toBe(true);
  });

  it(`draws store restarts of at most 5 minutes and ingest kills without a duration, both after the start and loss-free, even over a long run (seed ${SEED})`, () => {
    const drawn = Array.from({ length: 200 }, (_, i) =>
      drawSchedule(rngFor(SEED, `platform/${i}`), targets, 3 * 3_600_000, ['store_restart', 'ingest_kill'], 3),
    ).flat();
    const restarts = drawn.filter((f) => f.kind === 'store_restart');
    const kills = drawn.filter((f) => f.kind === 'ingest_kill');
    expect(restarts.length).toBeGreaterThan(0);
    expect(kills.length).toBeGreaterThan(0);
    expect(restarts.every((f) => parseDuration(f.duration!)! > 0 && parseDuration(f.duration!)! <= 300_000)).toBe(true);
    expect(kills.every((f) => f.duration === undefined)).toBe(true);
    expect(drawn.every((f) => parseDuration(f.at)! >= 1000)).toBe(true);
    expect(faultsOnModel(model, drawn).ok).toBe(true);
    expect(LOSS_FREE_KINDS.has('store_restart') && LOSS_FREE_KINDS.has('ingest_kill')).toBe(true);
  });
});
