import { segmentInsidePolygon, type Vec2 } from '../core/geometry.js';
import type { RoomGeo } from './floorplan.js';

/**
 * Walking inside one room: straight when the room lets you, otherwise the shortest way
 * over the room's turn points (its inside corners pulled into the room), found on the
 * visibility graph {from, turn points, to}. Rooms have a handful of corners, so a plain
 * O(n²) Dijkstra is the simple and fast choice.
 *
 * Returns the waypoints after `from`, ending with `to`.
 */
export function pathInRoom(room: RoomGeo, from: Vec2, to: Vec2): Vec2[] {
  if (room.turnPoints.length === 0 || segmentInsidePolygon(from, to, room.polygon)) return [to];
  const nodes: Vec2[] = [from, to, ...room.turnPoints];
  const n = nodes.length;
  const dist = new Array<number>(n).fill(Infinity);
  const prev = new Array<number>(n).fill(-1);
  const done = new Array<boolean>(n).fill(false);
  dist[0] = 0;
  for (;;) {
    const u = closestOpen(dist, done);
    if (u < 0 || u === 1) break;
    done[u] = true;
    for (let v = 1; v < n; v++) {
      if (done[v] || !visible(room, nodes, u, v)) continue;
      const d = (dist[u] as number) + length(nodes[u] as Vec2, nodes[v] as Vec2);
      if (d < (dist[v] as number)) {
        dist[v] = d;
        prev[v] = u;
      }
    }
  }
  // No way round (a degenerate room): walk straight rather than stop, and let tests catch it.
  if (prev[1] === -1) return [to];
  const out: Vec2[] = [];
  for (let v = 1; v > 0; v = prev[v] as number) out.push(nodes[v] as Vec2);
  return out.reverse();
}

function closestOpen(dist: readonly number[], done: readonly boolean[]): number {
  let best = -1;
  for (let i = 0; i < dist.length; i++) {
    if (!done[i] && (dist[i] as number) < Infinity && (best < 0 || (dist[i] as number) < (dist[best] as number)))
      best = i;
  }
  return best;
}

function visible(room: RoomGeo, nodes: readonly Vec2[], u: number, v: number): boolean {
  // Indices ≥ 2 are turn points, whose mutual visibility was precomputed.
  if (u >= 2 && v >= 2) return room.turnVisible[u - 2]?.[v - 2] === true;
  return segmentInsidePolygon(nodes[u] as Vec2, nodes[v] as Vec2, room.polygon);
}

function length(a: Vec2, b: Vec2): number {
  return Math.hypot(b[0] - a[0], b[1] - a[1]);
}
