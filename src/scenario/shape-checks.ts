import { MAX_POLYGON_VERTICES } from './schema.js';
import {
  area,
  distanceToBoundary,
  pointInPolygon,
  segmentsCrossProperly,
  selfIntersections,
  type Polygon,
  type Vec2,
} from '../core/geometry.js';

/**
 * Geometric rules of the file format, as messages (null when the rule holds). Tolerances are
 * in metres: plans are drawn by hand, a door 2 cm off the wall is still on it.
 */
export const ON_EDGE_TOL_M = 0.05;

/** Problem with a polygon's shape: zero area or crossing edges. */
export function polygonProblem(poly: Polygon): string | null {
  // The schema refuses larger polygons; never run the quadratic check on one.
  if (poly.length > MAX_POLYGON_VERTICES) return `a polygon has at most ${MAX_POLYGON_VERTICES} vertices`;
  const crossings = selfIntersections(poly);
  const first = crossings[0];
  if (first !== undefined) return `polygon is self-intersecting: edge ${first[0]} crosses edge ${first[1]}`;
  if (area(poly) < 1e-6) return 'polygon has zero area';
  return null;
}

export function insideOrOn(p: Vec2, poly: Polygon): boolean {
  return pointInPolygon(p[0], p[1], poly) || distanceToBoundary(p, poly) <= ON_EDGE_TOL_M;
}

/** True when `inner` lies within `outer` (edges may touch; no vertex out, no edge crossing). */
export function polygonWithin(inner: Polygon, outer: Polygon): boolean {
  if (!inner.every((p) => insideOrOn(p, outer))) return false;
  for (let i = 0, j = inner.length - 1; i < inner.length; j = i++) {
    for (let k = 0, l = outer.length - 1; k < outer.length; l = k++) {
      if (segmentsCrossProperly(inner[j] as Vec2, inner[i] as Vec2, outer[l] as Vec2, outer[k] as Vec2)) return false;
    }
  }
  return true;
}

export function fmtPoint(p: Vec2): string {
  return `[${+p[0].toFixed(3)}, ${+p[1].toFixed(3)}]`;
}
