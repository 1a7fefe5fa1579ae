/**
 * Plane geometry on floor plans (metres from the floor-plan origin). Polygons are lists of
 * vertices, implicitly closed; orientation may be either way.
 */
export type Vec2 = readonly [number, number];
export type Polygon = readonly Vec2[];

export interface BBox {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

export const EPS = 1e-9;

export function bbox(points: readonly Vec2[]): BBox {
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const [x, y] of points) {
    if (x < minX) minX = x;
    if (y < minY) minY = y;
    if (x > maxX) maxX = x;
    if (y > maxY) maxY = y;
  }
  return { minX, minY, maxX, maxY };
}

/** Signed area (positive when counter-clockwise). */
export function signedArea(poly: Polygon): number {
  let a = 0;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const p = poly[i] as Vec2;
    const q = poly[j] as Vec2;
    a += (q[0] - p[0]) * (q[1] + p[1]);
  }
  return a / 2;
}

export function area(poly: Polygon): number {
  return Math.abs(signedArea(poly));
}

export function centroid(poly: Polygon): Vec2 {
  let cx = 0;
  let cy = 0;
  let a = 0;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const p = poly[j] as Vec2;
    const q = poly[i] as Vec2;
    const cross = p[0] * q[1] - q[0] * p[1];
    a += cross;
    cx += (p[0] + q[0]) * cross;
    cy += (p[1] + q[1]) * cross;
  }
  if (Math.abs(a) < EPS) {
    const b = bbox(poly);
    return [(b.minX + b.maxX) / 2, (b.minY + b.maxY) / 2];
  }
  return [cx / (3 * a), cy / (3 * a)];
}

/** Even–odd point-in-polygon test; points exactly on an edge may go either way. */
export function pointInPolygon(x: number, y: number, poly: Polygon): boolean {
  let inside = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const pi = poly[i] as Vec2;
    const pj = poly[j] as Vec2;
    if (pi[1] > y !== pj[1] > y && x < ((pj[0] - pi[0]) * (y - pi[1])) / (pj[1] - pi[1]) + pi[0]) inside = !inside;
  }
  return inside;
}

function cross(o: Vec2, a: Vec2, b: Vec2): number {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

/** True when segments p1p2 and q1q2 cross at a single interior point of both (not at endpoints, not collinear). */
export function segmentsCrossProperly(p1: Vec2, p2: Vec2, q1: Vec2, q2: Vec2): boolean {
  const d1 = cross(q1, q2, p1);
  const d2 = cross(q1, q2, p2);
  const d3 = cross(p1, p2, q1);
  const d4 = cross(p1, p2, q2);
  return ((d1 > EPS && d2 < -EPS) || (d1 < -EPS && d2 > EPS)) && ((d3 > EPS && d4 < -EPS) || (d3 < -EPS && d4 > EPS));
}

/** True when the segments share any point (touching and collinear overlap included). */
export function segmentsIntersect(p1: Vec2, p2: Vec2, q1: Vec2, q2: Vec2): boolean {
  if (segmentsCrossProperly(p1, p2, q1, q2)) return true;
  return (
    distancePointSegment(p1, q1, q2) < 1e-7 ||
    distancePointSegment(p2, q1, q2) < 1e-7 ||
    distancePointSegment(q1, p1, p2) < 1e-7 ||
    distancePointSegment(q2, p1, p2) < 1e-7
  );
}

export function distancePointSegment(p: Vec2, a: Vec2, b: Vec2): number {
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const len2 = dx * dx + dy * dy;
  let t = len2 < EPS ? 0 : ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len2;
  t = Math.max(0, Math.min(1, t));
  return Math.hypot(p[0] - (a[0] + t * dx), p[1] - (a[1] + t * dy));
}

/** Index pairs of non-adjacent edges that intersect; empty for a simple polygon. */
export function selfIntersections(poly: Polygon): Array<[number, number]> {
  const n = poly.length;
  const out: Array<[number, number]> = [];
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const adjacent = j === i + 1 || (i === 0 && j === n - 1);
      if (adjacent) continue;
      const a1 = poly[i] as Vec2;
      const a2 = poly[(i + 1) % n] as Vec2;
      const b1 = poly[j] as Vec2;
      const b2 = poly[(j + 1) % n] as Vec2;
      if (segmentsIntersect(a1, a2, b1, b2)) out.push([i, j]);
    }
  }
  return out;
}

/** Distance from p to the polygon's boundary. */
export function distanceToBoundary(p: Vec2, poly: Polygon): number {
  let best = Infinity;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    best = Math.min(best, distancePointSegment(p, poly[j] as Vec2, poly[i] as Vec2));
  }
  return best;
}

/** True when the whole segment ab lies on the polygon's boundary (within tolerance). */
export function segmentOnBoundary(a: Vec2, b: Vec2, poly: Polygon, tol = 0.05): boolean {
  const steps = 8;
  for (let k = 0; k <= steps; k++) {
    const t = k / steps;
    const p: Vec2 = [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t];
    if (distanceToBoundary(p, poly) > tol) return false;
  }
  return true;
}

/** True when the open segment ab stays inside the polygon (crosses no edge, midpoint inside). */
export function segmentInsidePolygon(a: Vec2, b: Vec2, poly: Polygon): boolean {
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    if (segmentsCrossProperly(a, b, poly[j] as Vec2, poly[i] as Vec2)) return false;
  }
  // Sample interior points: catches segments that leave through a vertex.
  for (const t of [0.25, 0.5, 0.75]) {
    if (!pointInPolygon(a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, poly)) return false;
  }
  return true;
}

export function degToRad(deg: number): number {
  return (deg * Math.PI) / 180;
}
