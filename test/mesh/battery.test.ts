import { describe, expect, it } from 'vitest';
import { Battery, CHANGE_AT_LEVEL } from '../../src/mesh/battery.js';

const T0 = 1_700_000_000_000;

describe('a battery under a battery_drain fault', () => {
  it('keeps its natural level before the drain, falls linearly to 0 over it, and stays empty after', () => {
    const natural = new Battery(2400, T0);
    const drained = new Battery(2400, T0);
    for (const b of [natural, drained]) b.sample('presence', 60_000);
    drained.drainOver(T0 + 60_000, T0 + 180_000);
    expect(drained.level(T0 + 59_999)).toBe(natural.level(T0 + 59_999));
    // Half-way through the window, half of what was left.
    expect(drained.level(T0 + 120_000)).toBeCloseTo(natural.level(T0 + 120_000) / 2, 12);
    expect(drained.level(T0 + 180_000)).toBe(0);
    expect(drained.level(T0 + 600_000)).toBe(0);
    // Its runtime and change date follow the drain, never later than without it.
    expect(drained.runtimeS(T0 + 120_000)).toBe(60);
    expect(drained.runtimeS(T0 + 200_000)).toBe(0);
    expect(drained.changeByMs(T0 + 120_000)).toBe(T0 + 180_000 - Math.round(120_000 * CHANGE_AT_LEVEL));
    expect(drained.changeByMs(T0 + 30_000)).toBe(natural.changeByMs(T0 + 30_000));
  });

  it('keeps the earlier end when two drains overlap, and leaves a wired sensor at 1', () => {
    const b = new Battery(2400, T0);
    b.drainOver(T0, T0 + 100_000);
    b.drainOver(T0, T0 + 300_000);
    expect(b.level(T0 + 100_000)).toBe(0);
    const wired = new Battery(0, T0);
    wired.drainOver(T0, T0 + 1000);
    expect(wired.level(T0 + 5000)).toBe(1);
  });
});
