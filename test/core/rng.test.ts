import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rngFor } from '../../src/core/rng.js';

const draws = (seed: number, id: string, n = 20): number[] => {
  const r = rngFor(seed, id);
  return Array.from({ length: n }, () => r.next());
};

describe('seeded streams', () => {
  it('replay exactly for the same seed and entity', () => {
    expect(draws(7, 'sensor_a')).toEqual(draws(7, 'sensor_a'));
  });

  it('differ between seeds and between entities', () => {
    expect(draws(7, 'sensor_a')).not.toEqual(draws(8, 'sensor_a'));
    expect(draws(7, 'sensor_a')).not.toEqual(draws(7, 'sensor_b'));
  });

  it('of one entity do not depend on draws made from another entity', () => {
    const alone = draws(3, 'person_1');
    const other = rngFor(3, 'person_2');
    for (let i = 0; i < 1000; i++) other.next();
    expect(draws(3, 'person_1')).toEqual(alone);
  });

  it('keep every helper within its range (fast-check seed 1234)', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.string(),
        fc.integer({ min: -50, max: 50 }),
        fc.integer({ min: 0, max: 50 }),
        (seed, id, lo, span) => {
          const r = rngFor(seed, id);
          const u = r.uniform(lo, lo + span + 1);
          const k = r.int(lo, lo + span);
          const e = r.exponential(2);
          const n = r.normal(0, 1);
          return (
            u >= lo &&
            u < lo + span + 1 &&
            Number.isInteger(k) &&
            k >= lo &&
            k <= lo + span &&
            e >= 0 &&
            Number.isFinite(n)
          );
        },
      ),
      { seed: 1234, numRuns: 300 },
    );
  });

  it('draw normals with about the requested mean and spread', () => {
    const r = rngFor(1, 'normal');
    const xs = Array.from({ length: 20_000 }, () => r.normal(10, 2));
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
    expect(mean).toBeCloseTo(10, 1);
    expect(sd).toBeGreaterThan(1.9);
    expect(sd).toBeLessThan(2.1);
  });
});
