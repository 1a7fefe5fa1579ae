import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAppError } from '../../src/core/errors.js';
import { ownsFloor, parsePartition } from '../../src/platform/ingest-partition.js';

describe('ingest partitions', () => {
  it('reads j/k and refuses anything else in one line (USAGE)', () => {
    expect(parsePartition('2/3')).toEqual({ index: 2, count: 3 });
    for (const text of ['0/2', '3/2', '2', 'a/b', '1/0']) {
      let err: unknown = null;
      try {
        parsePartition(text);
      } catch (e) {
        err = e;
      }
      expect(isAppError(err, 'USAGE')).toBe(true);
      expect((err as Error).message).toBe(`--partition ${text}: want j/k with 1 ≤ j ≤ k`);
    }
  });

  it('gives every floor exactly one owner, the same in every process (fast-check seed 14)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 8 }),
        (floors, k) => {
          for (const f of floors)
            expect(
              Array.from({ length: k }, (_, j) => ownsFloor({ index: j + 1, count: k }, f)).filter(Boolean),
            ).toHaveLength(1);
        },
      ),
      { seed: 14, numRuns: 100 },
    );
    // Pinned (FNV-1a 32 mod k): processes of different versions must agree on the owner of a floor.
    const owner = (f: string, k: number): number =>
      Array.from({ length: k }, (_, j) => j + 1).find((index) => ownsFloor({ index, count: k }, f)) ?? 0;
    expect([owner('space_ground', 3), owner('space_f1', 3), owner('a', 3)]).toEqual([3, 3, 2]);
  });
});
