import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { percentile } from '../../src/core/stats.js';
import { ValueCounts } from '../../src/core/value-counts.js';

describe('value counts', () => {
  it('give exactly the nearest-rank percentiles of the values added (fast-check seed 1414)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.integer({ min: -50, max: 5000 }),
            fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }),
          ),
          { maxLength: 300 },
        ),
        fc.integer({ min: 0, max: 100 }),
        (values, p) => {
          const counts = ValueCounts.of(values);
          const expected = percentile(values, p);
          const got = counts.percentile(p);
          return counts.count === values.length && (Number.isNaN(expected) ? Number.isNaN(got) : got === expected);
        },
      ),
      { seed: 1414, numRuns: 500 },
    );
  });

  it('hold one entry per distinct value however many are added', () => {
    const counts = new ValueCounts();
    for (let i = 0; i < 100_000; i++) counts.add(i % 250);
    expect(counts.distinct).toBe(250);
    expect(counts.count).toBe(100_000);
    expect(counts.percentile(100)).toBe(249);
  });

  it('merge and cross a thread boundary as two arrays without changing a percentile', () => {
    const a = ValueCounts.of([5, 1, 5, 9]);
    const b = ValueCounts.of([2, 5]);
    a.addAll(b);
    const back = ValueCounts.fromArrays(structuredClone(a.toArrays()));
    for (const p of [0, 50, 90, 99, 100]) expect(back.percentile(p)).toBe(percentile([5, 1, 5, 9, 2, 5], p));
  });
});
