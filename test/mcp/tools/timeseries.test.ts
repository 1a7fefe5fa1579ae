import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Asset } from '../../../src/mcp/catalog.js';
import { POINTS_PER_REQUEST, batchesOf } from '../../../src/mcp/tools/timeseries.js';

/** The time series' reporting batches (issue 28, item 5): bounded answers, every id once, one kind and zone each. */
const SEED = 2806;

const space = (i: number, kind: 'floor' | 'room' | 'zone', timezone: string) =>
  ({ id: `${kind}_${i}`, kind, timezone }) as Asset & { kind: 'floor' | 'room' | 'zone' };

describe('batchesOf', () => {
  it('splits a day of minutes of 50 rooms into requests of at most POINTS_PER_REQUEST points', () => {
    const rooms = Array.from({ length: 50 }, (_, i) => space(i, 'room', 'Europe/Paris'));
    const batches = batchesOf(rooms, 1440);
    expect(batches.map((b) => b.length)).toEqual([...Array(16).fill(3), 2]);
    expect(batchesOf(rooms, 24)).toHaveLength(1);
  });

  it('keeps every space once, in order, each batch of one kind and time zone and within the budget', () => {
    console.log(`fast-check seed ${SEED}`);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('floor', 'room', 'zone'), fc.constantFrom('UTC', 'Asia/Tokyo')), {
          minLength: 1,
          maxLength: 50,
        }),
        fc.integer({ min: 1, max: 527_040 }),
        (kinds, windows) => {
          const spaces = kinds.map(([k, tz], i) => space(i, k as 'floor' | 'room' | 'zone', tz));
          const batches = batchesOf(spaces, windows);
          expect(
            batches
              .flat()
              .map((s) => s.id)
              .sort(),
          ).toEqual(spaces.map((s) => s.id).sort());
          for (const b of batches) {
            expect(new Set(b.map((s) => `${s.kind}|${s.timezone}`)).size).toBe(1);
            expect(b.length === 1 || b.length * windows <= POINTS_PER_REQUEST).toBe(true);
          }
        },
      ),
      { seed: SEED, numRuns: 200 },
    );
  });
});
