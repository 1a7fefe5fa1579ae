import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { MIN_STAY_MS } from '../../src/sim/schedule.js';
import { createWorld } from '../../src/sim/world.js';
import { DOOR, fixtureModel, population, runWorld } from './fixtures.js';

/**
 * The world model against the schedule it was given: a person's time inside (entrance in →
 * entrance out) is the stay the schedule describes, whichever order arrival and departure
 * come in, in any zone, DST nights included. Walking to and from the desk takes seconds,
 * so "to the minute" is the bound.
 */
const SEED = 1613;
const HOUR = 3_600_000;

/** Zones with DST nights of 1 h, 30 min (Lord Howe), a southern one and one without DST. */
const NIGHTS: readonly (readonly [string, string])[] = [
  ['Europe/Berlin', '2026-03-28'], // spring forward at 02:00 the next night
  ['Europe/Berlin', '2026-10-24'], // fall back at 03:00
  ['America/New_York', '2026-03-07'],
  ['America/New_York', '2026-10-31'],
  ['America/Santiago', '2026-09-05'], // local 00:00 does not exist on the 6th
  ['Australia/Lord_Howe', '2026-10-03'], // 30-minute change
  ['Asia/Kolkata', '2026-06-10'],
];

/** A model in `zone` whose only population has deterministic times and no trips. */
function oneShift(
  zone: string,
  startMs: number,
  durationMs: number,
  arriveMin: number,
  leaveMin: number,
  count = 1,
): ScenarioModel {
  const base = fixtureModel({
    durationMs,
    tickMs: 5000,
    populations: [population('pop_shift', count, { activities: [] })],
  });
  const pop = population('pop_shift', count, {
    activities: [],
    arrival: { meanMin: arriveMin, sdMin: 0 },
    departure: { meanMin: leaveMin, sdMin: 0 },
  });
  return { ...base, startMs, populations: [pop], sites: base.sites.map((s) => ({ ...s, timezone: zone })) };
}

/** Independent oracle: the wall-clock instant via luxon's own ISO parsing. */
const wall = (date: string, minute: number, zone: string, plusDays = 0): number =>
  DateTime.fromISO(date, { zone })
    .plus({ days: plusDays })
    .set({ hour: Math.floor(minute / 60), minute: minute % 60 })
    .toMillis();

function timeInside(model: ScenarioModel): number[] {
  const world = createWorld(model);
  const ins = new Map<string, number>();
  const stays: number[] = [];
  runWorld(model, world, (step) => {
    for (const c of step.crossings) {
      if (c.doorId !== DOOR.entrance) continue;
      if (c.direction === 'in') ins.set(c.personId, c.atMs);
      // A stay of nearly 24 h overlaps the previous day's: who was inside at the first instant has no entry to measure from.
      else if (ins.has(c.personId)) stays.push(c.atMs - ins.get(c.personId)!);
    }
  });
  return stays;
}

describe('night shifts in the world model', () => {
  it(`keeps each person inside for the drawn stay to the minute, for any arrival/departure order, zone and DST night (fast-check seed ${SEED})`, () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...NIGHTS),
        fc.integer({ min: 0, max: 1439 }),
        fc.integer({ min: 0, max: 1439 }),
        ([zone, date], arriveMin, leaveMin) => {
          const arriveMs = wall(date, arriveMin, zone);
          const leaveMs = wall(date, leaveMin, zone, leaveMin < arriveMin ? 1 : 0);
          const stay = Math.max(leaveMs - arriveMs, MIN_STAY_MS);
          const model = oneShift(zone, arriveMs - 10 * 60_000, stay + 20 * 60_000, arriveMin, leaveMin);
          const stays = timeInside(model);
          expect(stays).toHaveLength(1);
          expect(Math.abs(stays[0]! - stay)).toBeLessThan(60_000);
        },
      ),
      { seed: SEED, numRuns: 40 },
    );
  });

  it('fills the floor for the whole night: 25 people from 20:30 to 01:30 average the expected occupancy over three days', () => {
    // Starting at midnight also checks that last evening's shift is inside at the first instant.
    const zone = 'Europe/Berlin';
    const startMs = wall('2026-03-02', 0, zone);
    const base = oneShift(zone, startMs, 72 * HOUR, 0, 0);
    const pop = population('pop_night', 25, {
      activities: [],
      arrival: { meanMin: 20 * 60 + 30, sdMin: 30 },
      departure: { meanMin: 90, sdMin: 45 },
    });
    const model: ScenarioModel = { ...base, populations: [pop] };
    const world = createWorld(model);
    let sum = 0;
    let n = 0;
    let atStart = -1;
    runWorld(model, world, () => {
      if (atStart < 0) atStart = world.presentCount();
      sum += world.presentCount();
      n++;
    });
    // Expected: 25 people × a 5 h mean stay / 24 h = 5.21 per instant; the sampling error of
    // 75 stays (sd 54 min) is about 2 %, so 8 % is a tolerant bound that the old 30–80 min
    // stays (mean ≈ 0.7) miss by far.
    expect(sum / n).toBeGreaterThan(5.21 * 0.92);
    expect(sum / n).toBeLessThan(5.21 * 1.08);
    expect(atStart).toBe(25);
  });
});
