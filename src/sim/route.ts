import { pointInPolygon, type Vec2 } from '../core/geometry.js';
import type { Rng } from '../core/rng.js';
import { doorPoint, doorSide, type DoorGeo, type FloorPlan, type RoomGeo } from './floorplan.js';
import { pathInRoom } from './roompath.js';

/**
 * Planning a walk across a floor: rooms are linked only by doors, so a route is a sequence
 * of doors (shortest by door-to-door distance), and inside each room the walk goes straight
 * or around inside corners. Each door is passed perpendicular to its line: an approach point
 * ~0.5 m before it, then a point ~0.5 m past it, at a small random offset along the door.
 * The door crossings are found on the finished polyline, once per plan, so the per-tick
 * loop only compares distances.
 */
export type Endpoint =
  | { readonly kind: 'inside'; readonly roomId: string; readonly at: Vec2 }
  /** Just outside an entrance (the side away from its room, not on the floor). */
  | { readonly kind: 'outside'; readonly door: DoorGeo };

export interface PathCrossing {
  /** Distance along the path at which the door line is crossed. */
  readonly dist: number;
  readonly doorId: string;
  readonly direction: 'in' | 'out';
  readonly along: number;
  /** The room the walker is in after the crossing (null = off the floor). */
  readonly intoRoomId: string | null;
}

export interface PlannedPath {
  readonly xs: Float64Array;
  readonly ys: Float64Array;
  /** Cumulative distance at each waypoint (cum[0] = 0). */
  readonly cum: Float64Array;
  readonly total: number;
  readonly crossings: readonly PathCrossing[];
}

const APPROACH_M = [0.5, 0.3, 0.15];
const OUTSIDE_M = 1.0;
/** Standard deviation of where along a door people pass, metres. */
const DOOR_SPREAD_M = 0.2;
/** People keep this far from each door end (jamb). */
const JAMB_M = 0.1;

/** Plans a walk between two endpoints; null when no chain of doors links them. */
export function planPath(plan: FloorPlan, from: Endpoint, to: Endpoint, rng: Rng): PlannedPath | null {
  const pts: Vec2[] = [];
  let room: string;
  let cur: Vec2;
  if (from.kind === 'outside') {
    const u = drawAlong(from.door, rng);
    pts.push(doorPoint(from.door, u, -OUTSIDE_M));
    room = from.door.toRoomId;
    cur = sidePoint(from.door, u, 1, plan.rooms.get(room));
    pts.push(cur);
  } else {
    room = from.roomId;
    cur = from.at;
    pts.push(cur);
  }
  const goalRoom = to.kind === 'inside' ? to.roomId : to.door.toRoomId;
  const goalPt = to.kind === 'inside' ? to.at : to.door.mid;
  const seq = doorSequence(plan, room, cur, goalRoom, goalPt);
  if (!seq) return null;
  for (const { door, into } of seq) {
    const s = into === door.toRoomId ? 1 : -1;
    const u = drawAlong(door, rng);
    const approach = sidePoint(door, u, -s, plan.rooms.get(room));
    pts.push(...walkIn(plan, room, cur, approach));
    cur = sidePoint(door, u, s, plan.rooms.get(into));
    pts.push(cur);
    room = into;
  }
  if (to.kind === 'inside') {
    pts.push(...walkIn(plan, room, cur, to.at));
  } else {
    const u = drawAlong(to.door, rng);
    pts.push(...walkIn(plan, room, cur, sidePoint(to.door, u, 1, plan.rooms.get(room))));
    pts.push(doorPoint(to.door, u, -OUTSIDE_M));
  }
  return finishPath(plan, pts);
}

function walkIn(plan: FloorPlan, roomId: string, from: Vec2, to: Vec2): Vec2[] {
  const room = plan.rooms.get(roomId);
  return room ? pathInRoom(room, from, to) : [to];
}

function drawAlong(door: DoorGeo, rng: Rng): number {
  const draw = rng.normal(0, DOOR_SPREAD_M);
  if (door.length <= 2 * JAMB_M) return 0.5;
  const half = door.length / 2 - JAMB_M;
  return 0.5 + Math.max(-half, Math.min(half, draw)) / door.length;
}

/** A point beside the door on side `sign` (+1 = toRoom side), inside `room` when one is given. */
function sidePoint(door: DoorGeo, along: number, sign: number, room: RoomGeo | undefined): Vec2 {
  if (!room) return doorPoint(door, along, sign * OUTSIDE_M);
  let p = doorPoint(door, along, sign * (APPROACH_M[0] as number));
  for (const k of APPROACH_M) {
    p = doorPoint(door, along, sign * k);
    if (pointInPolygon(p[0], p[1], room.polygon)) return p;
  }
  return p;
}

interface Pass {
  door: DoorGeo;
  into: string;
}

/**
 * Shortest door chain from a point in `fromRoom` to a point in `toRoom` (Dijkstra; a state
 * is "just through door d, now in room r"). Entrances are never used as shortcuts.
 */
function doorSequence(plan: FloorPlan, fromRoom: string, fromPt: Vec2, toRoom: string, toPt: Vec2): Pass[] | null {
  const inner = plan.doors.filter((d) => d.fromRoomId !== null);
  const states: Pass[] = inner.flatMap((d) => [
    { door: d, into: d.toRoomId },
    { door: d, into: d.fromRoomId as string },
  ]);
  const n = states.length;
  const goal = n; // index of the goal node
  const dist = new Array<number>(n + 1).fill(Infinity);
  const prev = new Array<number>(n + 1).fill(-1);
  const done = new Array<boolean>(n + 1).fill(false);
  if (fromRoom === toRoom) dist[goal] = gap(fromPt, toPt);
  states.forEach((s, i) => {
    if (other(s) === fromRoom) dist[i] = gap(fromPt, s.door.mid);
  });
  for (;;) {
    const u = closestOpen(dist, done);
    if (u < 0 || u === goal) break;
    done[u] = true;
    const s = states[u] as Pass;
    relax(dist, prev, u, goal, s.into === toRoom ? gap(s.door.mid, toPt) : Infinity);
    states.forEach((t, v) => {
      if (t.door !== s.door && other(t) === s.into) relax(dist, prev, u, v, gap(s.door.mid, t.door.mid));
    });
  }
  if (dist[goal] === Infinity) return null;
  const out: Pass[] = [];
  for (let v = prev[goal] as number; v >= 0; v = prev[v] as number) out.push(states[v] as Pass);
  return out.reverse();
}

function other(s: Pass): string | null {
  return s.into === s.door.toRoomId ? s.door.fromRoomId : s.door.toRoomId;
}

function relax(dist: number[], prev: number[], u: number, v: number, w: number): void {
  const d = (dist[u] as number) + w;
  if (d < (dist[v] as number)) {
    dist[v] = d;
    prev[v] = u;
  }
}

function closestOpen(dist: readonly number[], done: readonly boolean[]): number {
  let best = -1;
  for (let i = 0; i < dist.length; i++) {
    if (!done[i] && (dist[i] as number) < Infinity && (best < 0 || (dist[i] as number) < (dist[best] as number)))
      best = i;
  }
  return best;
}

function gap(a: Vec2, b: Vec2): number {
  return Math.hypot(b[0] - a[0], b[1] - a[1]);
}

/** Drops repeated points, measures the polyline and finds every door line it crosses. */
function finishPath(plan: FloorPlan, raw: readonly Vec2[]): PlannedPath {
  const pts = raw.filter((p, i) => i === 0 || gap(raw[i - 1] as Vec2, p) > 1e-9);
  const xs = Float64Array.from(pts, (p) => p[0]);
  const ys = Float64Array.from(pts, (p) => p[1]);
  const cum = new Float64Array(pts.length);
  for (let i = 1; i < pts.length; i++) cum[i] = (cum[i - 1] as number) + gap(pts[i - 1] as Vec2, pts[i] as Vec2);
  const crossings: PathCrossing[] = [];
  for (let i = 1; i < pts.length; i++) {
    for (const door of plan.doors) {
      const c = legCrossing(door, pts[i - 1] as Vec2, pts[i] as Vec2, cum[i - 1] as number);
      if (c) crossings.push(c);
    }
  }
  crossings.sort((a, b) => a.dist - b.dist);
  return { xs, ys, cum, total: cum[pts.length - 1] ?? 0, crossings };
}

/** Where the leg p→q crosses the door line (strictly from one side to the other), if it does. */
export function legCrossing(door: DoorGeo, p: Vec2, q: Vec2, distAtP: number): PathCrossing | null {
  const sp = doorSide(door, p[0], p[1]);
  const sq = doorSide(door, q[0], q[1]);
  if (!(sp * sq < 0)) return null;
  const t = sp / (sp - sq);
  const x = p[0] + (q[0] - p[0]) * t;
  const y = p[1] + (q[1] - p[1]) * t;
  const dx = door.b[0] - door.a[0];
  const dy = door.b[1] - door.a[1];
  const along = ((x - door.a[0]) * dx + (y - door.a[1]) * dy) / (door.length * door.length || 1);
  if (along < 0 || along > 1) return null;
  const direction = sp < 0 ? 'in' : 'out';
  return {
    dist: distAtP + gap(p, q) * t,
    doorId: door.id,
    direction,
    along,
    intoRoomId: direction === 'in' ? door.toRoomId : door.fromRoomId,
  };
}
