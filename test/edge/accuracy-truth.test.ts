import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PresenceTruth } from '../../src/edge/accuracy-truth.js';

/** What a (sensor, instant) held in the Map of arrays the flat tables replaced. */
function positionsOf(truth: PresenceTruth, entry: number): number[] {
  return [...truth.positions.subarray(truth.startOf(entry), truth.startOf(entry) + truth.countOf(entry))];
}

describe('presence truth per batch interval', () => {
  it('finds each sensor’s positions by instant, once', () => {
    const truth = new PresenceTruth(2);
    truth.begin(0, 1000);
    truth.add(1, 2);
    truth.end();
    truth.begin(1, 1000);
    truth.end();
    truth.begin(0, 2000);
    truth.add(3, 4);
    truth.add(5, 6);
    truth.end();
    const e = truth.take(0, 2000);
    expect(positionsOf(truth, e)).toEqual([3, 4, 5, 6]);
    expect(truth.take(0, 2000)).toBe(-1);
    expect(positionsOf(truth, truth.take(1, 1000))).toEqual([]);
    expect(positionsOf(truth, truth.take(0, 1000))).toEqual([1, 2]);
    expect(truth.take(1, 3000)).toBe(-1);
  });

  it('forgets the interval on clear and reuses its tables, growing past their first size', () => {
    const truth = new PresenceTruth(3);
    for (let round = 0; round < 3; round++) {
      for (let t = 0; t < 900; t++) {
        for (let s = 0; s < 3; s++) {
          truth.begin(s, t);
          for (let k = 0; k < s; k++) truth.add(round, t + k);
          truth.end();
        }
      }
      expect(positionsOf(truth, truth.take(2, 899))).toEqual([round, 899, round, 900]);
      truth.clear();
      expect(truth.take(2, 898)).toBe(-1);
    }
  });

  it('answers like a Map of position arrays per sensor, whatever the order of the takes (fast-check seed 14)', () => {
    // A run observes each (sensor, instant) once: distinct keys, in any order of instants.
    const entry = fc.record({
      sensor: fc.integer({ min: 0, max: 4 }),
      atMs: fc.integer({ min: 0, max: 6 }),
      people: fc.array(fc.tuple(fc.double({ noNaN: true }), fc.double({ noNaN: true })), { maxLength: 3 }),
    });
    const entries = fc.uniqueArray(entry, { selector: (e) => `${e.sensor}@${e.atMs}`, maxLength: 35 });
    const take = fc.record({ sensor: fc.integer({ min: 0, max: 4 }), atMs: fc.integer({ min: 0, max: 6 }) });
    fc.assert(
      fc.property(fc.array(fc.tuple(entries, fc.array(take, { maxLength: 50 })), { maxLength: 4 }), (intervals) => {
        const truth = new PresenceTruth(5);
        for (const [observed, takes] of intervals) {
          const reference = new Map<string, number[]>();
          for (const { sensor, atMs, people } of observed) {
            truth.begin(sensor, atMs);
            for (const [x, y] of people) truth.add(x, y);
            truth.end();
            reference.set(`${sensor}@${atMs}`, people.flat());
          }
          for (const { sensor, atMs } of takes) {
            const key = `${sensor}@${atMs}`;
            const expected = reference.get(key);
            reference.delete(key);
            const e = truth.take(sensor, atMs);
            if (expected === undefined) expect(e).toBe(-1);
            else expect(positionsOf(truth, e)).toEqual(expected);
          }
          truth.clear();
        }
      }),
      { seed: 14, numRuns: 300 },
    );
  });
});
