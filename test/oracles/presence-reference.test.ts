import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countInstant, mergeDetections, PresenceAggregator } from './presence-reference.js';
import { buildRegistry } from '../../src/cloud/registry.js';
import { footprintTransform } from '../../src/core/footprint.js';
import type { Vec2 } from '../../src/core/geometry.js';
import type { SensorModel } from '../../src/scenario/model.js';
import { FLOOR, ROOM_A, ROOM_B, SENSOR_PA, SENSOR_PB, T0, tinyModel, ZONE_A1 } from '../cloud/fixture.js';

const registry = buildRegistry(tinyModel());
const local = (s: SensorModel, world: readonly Vec2[]): Array<readonly [number, number]> => {
  const t = footprintTransform(s);
  return world.map(([x, y]) => t.toLocal(x, y));
};
const valueOf = (rows: ReturnType<PresenceAggregator['finalise']>, spaceId: string) =>
  rows.find((r) => r.spaceId === spaceId);

describe('merging detections of overlapping sensors', () => {
  it('counts a person seen by two sensors once', () => {
    const merged = mergeDetections([
      { sensorId: 'sensor_b', points: [[9.6, 5.1]] },
      { sensorId: 'sensor_a', points: [[9.5, 5]] },
    ]);
    // Sensor ids are processed in order, so sensor_a's detection is the one kept.
    expect(merged).toEqual([[9.5, 5]]);
  });

  it('keeps two people close together when the same sensor sees both', () => {
    const merged = mergeDetections([
      {
        sensorId: 'sensor_a',
        points: [
          [1, 1],
          [1.3, 1],
        ],
      },
    ]);
    expect(merged).toHaveLength(2);
  });

  it('keeps detections of different sensors more than 0.5 m apart', () => {
    const merged = mergeDetections([
      { sensorId: 'sensor_a', points: [[1, 1]] },
      { sensorId: 'sensor_b', points: [[1.51, 1]] },
    ]);
    expect(merged).toHaveLength(2);
  });

  it('finds duplicates across grid cell borders', () => {
    const merged = mergeDetections([
      { sensorId: 'sensor_a', points: [[0.99, 0.99]] },
      { sensorId: 'sensor_b', points: [[1.01, 1.01]] },
    ]);
    expect(merged).toHaveLength(1);
  });
});

describe('instant counts', () => {
  it('counts rooms, zones and the floor from merged detections', () => {
    const counts = countInstant(registry.floor(FLOOR), [
      [2, 5],
      [9.5, 5],
      [15, 5],
      [25, 5],
    ]);
    expect(counts.get(ROOM_A)).toBe(2);
    expect(counts.get(ROOM_B)).toBe(1);
    expect(counts.get(ZONE_A1)).toBe(1);
    // (25, 5) lies outside every room, so it is not on the floor either.
    expect(counts.get(FLOOR)).toBe(3);
  });
});

describe('presence aggregation per minute', () => {
  it('counts a person in the overlap of two sensors once in the room and the floor', () => {
    const agg = new PresenceAggregator(registry);
    agg.add(SENSOR_PA.id, T0, local(SENSOR_PA, [[9.5, 5]]));
    agg.add(SENSOR_PB.id, T0, local(SENSOR_PB, [[9.5, 5]]));
    const rows = agg.finalise(T0);
    expect(valueOf(rows, ROOM_A)).toMatchObject({ value: 1, samples: 1 });
    expect(valueOf(rows, ZONE_A1)).toMatchObject({ value: 1, samples: 1 });
    expect(valueOf(rows, FLOOR)).toMatchObject({ value: 1, samples: 1 });
    // Room B was sampled (its sensor reported) and is empty.
    expect(valueOf(rows, ROOM_B)).toMatchObject({ value: 0, samples: 1 });
  });

  it('takes the median of the instant counts over the minute', () => {
    const agg = new PresenceAggregator(registry);
    const counts = [1, 3, 2, 2, 0];
    counts.forEach((n, i) =>
      agg.add(
        SENSOR_PA.id,
        T0 + i * 1000,
        local(
          SENSOR_PA,
          Array.from({ length: n }, (_, k) => [5 + k, 5] as Vec2),
        ),
      ),
    );
    const rows = agg.finalise(T0);
    expect(valueOf(rows, ROOM_A)).toEqual({ spaceId: ROOM_A, minuteMs: T0, value: 2, samples: 5 });
  });

  it('averages the two middle counts for an even number of samples', () => {
    const agg = new PresenceAggregator(registry);
    agg.add(SENSOR_PA.id, T0, local(SENSOR_PA, [[5, 5]]));
    agg.add(
      SENSOR_PA.id,
      T0 + 1000,
      local(SENSOR_PA, [
        [5, 5],
        [6, 5],
      ]),
    );
    expect(valueOf(agg.finalise(T0), ROOM_A)?.value).toBe(1.5);
  });

  it('samples a room only at instants where one of its own sensors reported', () => {
    const agg = new PresenceAggregator(registry);
    // Only room A's sensor reports; room B is never sampled, so it gets no row.
    agg.add(SENSOR_PA.id, T0, local(SENSOR_PA, [[9.5, 5]]));
    const rows = agg.finalise(T0);
    expect(valueOf(rows, ROOM_B)).toBeUndefined();
    expect(rows.map((r) => r.spaceId)).toEqual([ROOM_A, FLOOR, ZONE_A1].sort());
  });

  it('puts instants into the minute that contains them and keeps minutes apart', () => {
    const agg = new PresenceAggregator(registry);
    agg.add(SENSOR_PA.id, T0 + 59_999, local(SENSOR_PA, [[5, 5]]));
    agg.add(
      SENSOR_PA.id,
      T0 + 60_000,
      local(SENSOR_PA, [
        [5, 5],
        [6, 6],
      ]),
    );
    expect(agg.openMinutes()).toEqual([T0, T0 + 60_000]);
    expect(valueOf(agg.finalise(T0 + 60_000), ROOM_A)?.value).toBe(2);
    expect(valueOf(agg.finalise(T0), ROOM_A)?.value).toBe(1);
    expect(agg.openMinutes()).toEqual([]);
  });

  it('ignores a repeated report of the same sensor and instant', () => {
    const agg = new PresenceAggregator(registry);
    agg.add(SENSOR_PA.id, T0, local(SENSOR_PA, [[5, 5]]));
    agg.add(SENSOR_PA.id, T0, local(SENSOR_PA, [[5, 5]]));
    expect(valueOf(agg.finalise(T0), ROOM_A)).toMatchObject({ value: 1, samples: 1 });
  });

  it('gives the same rows whatever order the reports arrive in (seed 42)', () => {
    const point = fc.tuple(
      fc.double({ min: 0.02, max: 0.98, noNaN: true }),
      fc.double({ min: 0.02, max: 0.98, noNaN: true }),
    );
    const report = fc.record({
      sensorId: fc.constantFrom(SENSOR_PA.id, SENSOR_PB.id),
      at: fc.integer({ min: 0, max: 150 }).map((s) => T0 + s * 1000),
      points: fc.array(point, { maxLength: 4 }),
    });
    const reportsAndShuffle = fc
      .array(report, { maxLength: 30 })
      .chain((rs) =>
        fc.tuple(fc.constant(rs), fc.shuffledSubarray(rs, { minLength: rs.length, maxLength: rs.length })),
      );
    const prop = fc.property(reportsAndShuffle, ([reports, shuffled]) => {
      const run = (order: typeof reports) => {
        const agg = new PresenceAggregator(registry);
        for (const r of order) agg.add(r.sensorId, r.at, r.points);
        return agg.openMinutes().flatMap((m) => agg.finalise(m));
      };
      expect(run(shuffled)).toEqual(run(reports));
    });
    fc.assert(prop, { seed: 42, numRuns: 100 });
  });
});
