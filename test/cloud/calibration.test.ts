import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { calibrate, QUIET_EMPTY_MINUTES } from '../../src/cloud/calibration.js';
import { LocalDays } from '../../src/cloud/local-day.js';
import type { OccupancyPoint } from '../../src/cloud/traffic-occupancy.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 2, 3, 5, 0); // 06:00 in Berlin
const days = new LocalDays('Europe/Berlin');
const series = (values: readonly number[]): OccupancyPoint[] =>
  values.map((value, i) => ({ minuteMs: T0 + i * MIN, value }));
const steps = fc.array(fc.integer({ min: -2, max: 2 }), { minLength: 1, maxLength: 300 });

/** A true occupancy walk that never goes below 0. */
const truthOf = (deltas: readonly number[]): number[] => {
  let v = 0;
  return deltas.map((d) => (v = Math.max(0, v + d)));
};

describe('calibrated traffic occupancy', () => {
  it('is never negative, whatever the raw series and hints (seed 42)', () => {
    fc.assert(
      fc.property(
        steps,
        fc.array(fc.tuple(fc.nat(299), fc.nat(20)), { maxLength: 5 }),
        fc.array(fc.nat(5), { maxLength: 300 }),
        (deltas, points, seen) => {
          let v = 0;
          const raw = series(deltas.map((d) => (v += d)));
          const presence = new Map(seen.map((n, i) => [T0 + i * MIN, n] as const));
          const cal = calibrate(raw, days, {
            calibrationPoints: points.map(([i, occupancy]) => ({ timestampMs: T0 + i * MIN + 5000, occupancy })),
            presence,
          });
          expect(cal.every((p) => p.value >= 0)).toBe(true);
        },
      ),
      { seed: 42, numRuns: 200 },
    );
  });

  it('equals the raw series when raw is exact and the hints agree with it (seed 42)', () => {
    fc.assert(
      fc.property(
        steps,
        fc.array(fc.nat(299), { maxLength: 5 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (deltas, at, share) => {
          const truth = truthOf(deltas);
          const raw = series(truth);
          // Presence sees part of the people (a lower bound); calibration points are right.
          const presence = new Map(truth.map((n, i) => [T0 + i * MIN, Math.floor(n * share)] as const));
          for (let i = 0; i < truth.length; i++) if (truth[i] === 0) presence.set(T0 + i * MIN, 0);
          // Hints must be consistent: a quiet-empty stretch only while truly empty.
          const quiet = truth.some(
            (_, i) =>
              i >= QUIET_EMPTY_MINUTES - 1 &&
              truth
                .slice(i - QUIET_EMPTY_MINUTES + 1, i + 1)
                .every((_, k) => presence.get(T0 + (i - QUIET_EMPTY_MINUTES + 1 + k) * MIN) === 0) &&
              truth[i] !== 0,
          );
          fc.pre(!quiet);
          const cal = calibrate(raw, days, {
            calibrationPoints: at
              .filter((i) => i < truth.length)
              .map((i) => ({ timestampMs: T0 + i * MIN, occupancy: truth[i] as number })),
            presence,
          });
          expect(cal).toEqual(raw);
        },
      ),
      { seed: 42, numRuns: 200 },
    );
  });

  it('returns to zero inside known-empty periods and after a quiet empty stretch', () => {
    const raw = series([...Array(60).fill(5), ...Array(60).fill(3)]); // drifted: 3 people never counted out
    const cal = calibrate(raw, days, { emptyPeriods: [{ fromMs: T0 + 100 * MIN, toMs: T0 + 110 * MIN }] });
    expect(cal.slice(100, 110).every((p) => p.value === 0)).toBe(true);
    expect(cal[119]?.value).toBe(0); // the offset learnt in the empty period stays
    const quiet = calibrate(raw, days, { presence: new Map(raw.slice(60).map((p) => [p.minuteMs, 0] as const)) });
    expect(quiet[60 + QUIET_EMPTY_MINUTES - 1]?.value).toBe(0);
    expect(quiet[60 + QUIET_EMPTY_MINUTES - 2]?.value).toBe(3);
  });

  it('follows a manual calibration point and restarts with the raw series at the local day start', () => {
    const start = Date.UTC(2026, 2, 3, 22, 0); // 23:00 Berlin
    const raw: OccupancyPoint[] = Array.from({ length: 120 }, (_, i) => ({
      minuteMs: start + i * MIN,
      value: i < 60 ? 10 : 2,
    }));
    const cal = calibrate(raw, days, { calibrationPoints: [{ timestampMs: start + 10 * MIN, occupancy: 4 }] });
    expect(cal[9]?.value).toBe(10);
    expect(cal[10]?.value).toBe(4);
    expect(cal[59]?.value).toBe(4);
    expect(cal[60]?.value).toBe(2); // 00:00: a new day, no correction carried over
  });
});
