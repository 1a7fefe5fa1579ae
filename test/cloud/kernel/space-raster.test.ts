import fc from 'fast-check';
import { describe, it } from 'vitest';
import { SpaceRaster } from '../../../src/cloud/kernel/space-raster.js';
import { spacesContaining, type FloorIndex } from '../../../src/cloud/registry.js';
import { bbox, type Polygon, type Vec2 } from '../../../src/core/geometry.js';

/**
 * The raster classifies its grid a row at a time (each polygon cut once per row); whatever it
 * says must be what point-in-polygon says point by point (`spacesContaining`, as
 * `PresenceAggregator` assigns detections): a cell holding a set has that set at its four
 * corners and its centre, a cell holding -1 has corners or centre that disagree, and
 * `setOf` answers any point with the spaces containing it. Floors of random rooms and zones
 * (lattice rectangles with edges on grid lines, and star-shaped concave polygons with
 * arbitrary coordinates), from a fixed seed; a failure prints the counterexample.
 */
const SEED = 20_261_125;
const CELL = 0.25;

const latticeRect: fc.Arbitrary<Polygon> = fc
  .tuple(
    fc.integer({ min: 0, max: 40 }),
    fc.integer({ min: 0, max: 40 }),
    fc.integer({ min: 1, max: 24 }),
    fc.integer({ min: 1, max: 24 }),
  )
  .map(([x, y, w, h]) => {
    const [x0, y0, x1, y1] = [x * CELL, y * CELL, (x + w) * CELL, (y + h) * CELL];
    return [
      [x0, y0],
      [x1, y0],
      [x1, y1],
      [x0, y1],
    ] as const;
  });
const star: fc.Arbitrary<Polygon> = fc
  .tuple(
    fc.double({ min: 2, max: 10, noNaN: true }),
    fc.double({ min: 2, max: 10, noNaN: true }),
    fc.array(fc.double({ min: 0.3, max: 3, noNaN: true }), { minLength: 3, maxLength: 9 }),
  )
  .map(([cx, cy, radii]) =>
    radii.map((r, k): Vec2 => [
      cx + r * Math.cos((2 * Math.PI * k) / radii.length),
      cy + r * Math.sin((2 * Math.PI * k) / radii.length),
    ]),
  );
const floorArb = fc.record({
  rooms: fc.array(fc.oneof(latticeRect, star), { minLength: 0, maxLength: 4 }),
  zones: fc.array(fc.oneof(latticeRect, star), { maxLength: 3 }),
});

function floorOf(rooms: readonly Polygon[], zones: readonly Polygon[]): FloorIndex {
  const space = (id: string, polygon: Polygon) => ({ id, polygon, box: bbox(polygon) });
  return { floorId: 'f', rooms: rooms.map((p, k) => space(`r${k}`, p)), zones: zones.map((p, k) => space(`z${k}`, p)) };
}

/** The presence-space indexes containing (x, y), as the raster lists them: rooms, zones, then the floor when in a room. */
function reference(floor: FloorIndex, index: ReadonlyMap<string, number>, x: number, y: number): number[] {
  const rooms = spacesContaining(floor.rooms, x, y);
  const zones = spacesContaining(floor.zones, x, y);
  const ids = [...rooms, ...zones].map((s) => index.get(s.id) as number);
  return rooms.length > 0 ? [...ids, index.get('f') as number] : ids;
}

const key = (ids: ArrayLike<number>): string => Array.from(ids).join(',');

describe('space raster', () => {
  it('holds in each cell the spaces point-in-polygon finds at its corners and centre', () => {
    fc.assert(
      fc.property(floorArb, ({ rooms, zones }) => {
        const floor = floorOf(rooms, zones);
        const index = new Map(
          ['f', ...floor.rooms.map((s) => s.id), ...floor.zones.map((s) => s.id)].map((id, k) => [id, k] as const),
        );
        const raster = new SpaceRaster(floor, index);
        const all = [...floor.rooms, ...floor.zones];
        const area = all.length === 0 ? { minX: 0, minY: 0, maxX: 1, maxY: 1 } : bbox(all.flatMap((sp) => sp.polygon));
        const setOf = (x: number, y: number): string => key(raster.sets[raster.setOf(x, y)] as Int32Array);
        // Grid vertices lie on the CELL lattice: probe every cell of the spaces' area and its margin.
        for (let j = -20; j < 80; j++) {
          for (let i = -20; i < 80; i++) {
            const [x0, y0, x1, y1] = [i * CELL, j * CELL, (i + 1) * CELL, (j + 1) * CELL];
            const cx = i * CELL + CELL / 2;
            const cy = j * CELL + CELL / 2;
            const cell = raster.uniformSet(cx, cy, cx, cy);
            const points = [
              reference(floor, index, x0, y0),
              reference(floor, index, x1, y0),
              reference(floor, index, x0, y1),
              reference(floor, index, x1, y1),
              reference(floor, index, cx, cy),
            ];
            const keys = new Set(points.map((p) => p.join(',')));
            // The grid spans the spaces plus a 4 m margin: cells within 3 m of them are on it.
            const onGrid = x0 >= area.minX - 3 && x1 <= area.maxX + 3 && y0 >= area.minY - 3 && y1 <= area.maxY + 3;
            const at = `cell (${x0}, ${y0})`;
            if (onGrid && cell >= 0 !== (keys.size === 1))
              throw new Error(`${at}: raster ${cell}, corners and centre ${[...keys].join(' | ')}`);
            if (cell >= 0 && key(raster.sets[cell] as Int32Array) !== key(points[4] as number[]))
              throw new Error(
                `${at}: holds ${key(raster.sets[cell] as Int32Array)}, centre in ${key(points[4] as number[])}`,
              );
            if (setOf(cx, cy) !== key(points[4] as number[]))
              throw new Error(`${at}: setOf(centre) ${setOf(cx, cy)}, expected ${key(points[4] as number[])}`);
            if (setOf(x0, y0) !== key(points[0] as number[]))
              throw new Error(`${at}: setOf(corner) ${setOf(x0, y0)}, expected ${key(points[0] as number[])}`);
          }
        }
      }),
      { seed: SEED, numRuns: 60 },
    );
  });
});
