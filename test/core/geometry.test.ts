import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  area,
  pointInPolygon,
  segmentInsidePolygon,
  segmentOnBoundary,
  selfIntersections,
  type Vec2,
} from '../../src/core/geometry.js';

const square: Vec2[] = [
  [0, 0],
  [4, 0],
  [4, 4],
  [0, 4],
];
const lShape: Vec2[] = [
  [0, 0],
  [6, 0],
  [6, 2],
  [2, 2],
  [2, 6],
  [0, 6],
];

describe('polygons', () => {
  it('measure area in either orientation', () => {
    expect(area(square)).toBe(16);
    expect(area([...square].reverse())).toBe(16);
  });

  it('contain their interior points and not their exterior ones', () => {
    expect(pointInPolygon(1, 1, square)).toBe(true);
    expect(pointInPolygon(5, 1, square)).toBe(false);
    expect(pointInPolygon(4, 4, lShape)).toBe(false);
  });

  it('report self-intersection of a bow-tie and none for simple shapes', () => {
    expect(
      selfIntersections([
        [0, 0],
        [4, 4],
        [4, 0],
        [0, 4],
      ]),
    ).not.toHaveLength(0);
    expect(selfIntersections(square)).toHaveLength(0);
    expect(selfIntersections(lShape)).toHaveLength(0);
  });

  it('know when a segment lies on the boundary', () => {
    expect(segmentOnBoundary([0, 1], [0, 2], square)).toBe(true);
    expect(segmentOnBoundary([1, 1], [1, 2], square)).toBe(false);
  });

  it('see that a straight walk across the inner corner of an L leaves the room', () => {
    expect(segmentInsidePolygon([5, 1], [1, 5], lShape)).toBe(false);
    expect(segmentInsidePolygon([5, 1], [1, 1], lShape)).toBe(true);
  });

  it('agree that every point of a rectangle interior is inside (fast-check seed 99)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.01, max: 3.99, noNaN: true }),
        fc.double({ min: 0.01, max: 3.99, noNaN: true }),
        (x, y) => pointInPolygon(x, y, square),
      ),
      { seed: 99, numRuns: 500 },
    );
  });
});
