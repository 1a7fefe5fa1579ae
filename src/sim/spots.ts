import { centroid, distanceToBoundary, pointInPolygon, type Vec2 } from '../core/geometry.js';
import type { Rng } from '../core/rng.js';
import type { RoomGeo } from './floorplan.js';

/** People sit and stand at least this far from walls (a chair, a body). */
export const WALL_CLEARANCE_M = 0.4;
const TRIES = 200;

/**
 * A uniformly random point of the room at least `clearance` from its walls and, when
 * `taken` is given, at least `spacing` from every taken point (seats at a meeting table).
 * Rejection sampling in the bounding box; after many misses the spacing rule, then the
 * clearance, are relaxed rather than failing, so a tiny room still gets a spot.
 */
export function randomSpot(room: RoomGeo, rng: Rng, taken: readonly Vec2[] = [], spacing = 0): Vec2 {
  const { minX, minY, maxX, maxY } = room.box;
  let fallback: Vec2 | null = null;
  for (let i = 0; i < TRIES; i++) {
    const p: Vec2 = [rng.uniform(minX, maxX), rng.uniform(minY, maxY)];
    if (!pointInPolygon(p[0], p[1], room.polygon)) continue;
    if (distanceToBoundary(p, room.polygon) < WALL_CLEARANCE_M) continue;
    if (taken.every((q) => Math.hypot(q[0] - p[0], q[1] - p[1]) >= spacing)) return p;
    fallback ??= p;
  }
  if (fallback) return fallback;
  const c = centroid(room.polygon);
  return pointInPolygon(c[0], c[1], room.polygon) ? c : (room.turnPoints[0] ?? c);
}
