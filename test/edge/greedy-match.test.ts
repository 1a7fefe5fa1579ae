import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GreedyMatcher } from '../../src/edge/greedy-match.js';

const SEED = 2612;
const MATCH_M = 1;

/** The matching as accuracy.ts wrote it before the reused arrays: every pair sorted, sets of the taken. */
function reference(
  det: Array<[number, number]>,
  truth: Array<[number, number]>,
  sumSoFar: number,
): { matched: number; sum: number } {
  const pairs: Array<[number, number, number]> = [];
  det.forEach(([x, y], d) => truth.forEach(([tx, ty], t) => pairs.push([Math.hypot(x - tx, y - ty), d, t])));
  pairs.sort((p, q) => p[0] - q[0] || p[1] - q[1] || p[2] - q[2]);
  const usedD = new Set<number>();
  const usedT = new Set<number>();
  let sum = sumSoFar;
  let matched = 0;
  for (const [dist, d, t] of pairs) {
    if (dist > MATCH_M) break;
    if (usedD.has(d) || usedT.has(t)) continue;
    usedD.add(d);
    usedT.add(t);
    sum += dist;
    matched++;
  }
  return { matched, sum };
}

describe('greedy nearest matching', () => {
  it(`matches exactly as the sorted list of every pair did, ties included (fast-check seed ${SEED})`, () => {
    const matcher = new GreedyMatcher(MATCH_M);
    // Coordinates on a 0.25 m grid, so equal distances (ties) are common; up to 40 × 40 pairs grows the arrays.
    const point = fc
      .tuple(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 12 }))
      .map(([x, y]): [number, number] => [x / 4, y / 4]);
    fc.assert(
      fc.property(
        fc.array(point, { maxLength: 40 }),
        fc.array(point, { maxLength: 40 }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        (det, truth, sumSoFar) => {
          matcher.reset(det.length, truth.length);
          det.forEach(([x, y], d) => truth.forEach(([tx, ty], t) => matcher.pair(d, t, Math.hypot(x - tx, y - ty))));
          const matched = matcher.solve(sumSoFar);
          expect({ matched, sum: matcher.sum }).toEqual(reference(det, truth, sumSoFar));
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });
});
