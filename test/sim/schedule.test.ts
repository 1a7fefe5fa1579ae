import { describe, expect, it } from 'vitest';
import { rngFor } from '../../src/core/rng.js';
import { localToEpoch } from '../../src/core/time.js';
import { drawDayPlan, localInstant, MIN_STAY_MS, nextDailyAt } from '../../src/sim/schedule.js';
import { population, TZ } from './fixtures.js';

const at = (local: string): number => localToEpoch(local, TZ)!;

describe('daily schedules', () => {
  it('turns fractional local minutes into instants, seconds included', () => {
    expect(localInstant(at('2026-03-02T00:00'), 8 * 60 + 30.5, TZ)).toBe(at('2026-03-02T08:30:30'));
  });

  it('clamps times of day to the local day', () => {
    expect(localInstant(at('2026-03-02T12:00'), -30, TZ)).toBe(at('2026-03-02T00:00'));
    expect(localInstant(at('2026-03-02T12:00'), 24 * 60 + 90, TZ)).toBeLessThan(at('2026-03-03T00:00'));
  });

  it('keeps wall-clock times across a DST change', () => {
    // Europe/Berlin springs forward on 2026-03-29.
    expect(localInstant(at('2026-03-29T00:00'), 8 * 60, TZ)).toBe(at('2026-03-29T08:00'));
  });

  it('puts a departure earlier in the day than the arrival on the next morning: a night shift', () => {
    const pop = population('p', 1, {
      arrival: { meanMin: 20 * 60 + 30, sdMin: 0 },
      departure: { meanMin: 90, sdMin: 0 },
    });
    const plan = drawDayPlan(pop, TZ, at('2026-03-02T00:00'), rngFor(1, 'p'));
    expect(plan.arriveMs).toBe(at('2026-03-02T20:30'));
    expect(plan.leaveMs).toBe(at('2026-03-03T01:30'));
  });

  it('makes people stay at least 30 minutes when a draw puts the departure right after the arrival', () => {
    const pop = population('p', 1, { arrival: { meanMin: 600, sdMin: 0 }, departure: { meanMin: 610, sdMin: 0 } });
    const plan = drawDayPlan(pop, TZ, at('2026-03-02T00:00'), rngFor(1, 'p'));
    expect(plan.arriveMs).toBe(at('2026-03-02T10:00'));
    expect(plan.leaveMs).toBe(plan.arriveMs + MIN_STAY_MS);
  });

  it('finds the next occurrence of a daily time, today or tomorrow', () => {
    const day = at('2026-03-02T00:00');
    expect(nextDailyAt(600, TZ, day, at('2026-03-02T09:00'))).toBe(at('2026-03-02T10:00'));
    expect(nextDailyAt(600, TZ, day, at('2026-03-02T10:00'))).toBe(at('2026-03-02T10:00'));
    expect(nextDailyAt(600, TZ, day, at('2026-03-02T11:00'))).toBe(at('2026-03-03T10:00'));
  });
});
