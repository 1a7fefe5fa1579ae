import {
  bbox,
  distanceToBoundary,
  pointInPolygon,
  segmentInsidePolygon,
  signedArea,
  type BBox,
  type Polygon,
  type Vec2,
} from '../core/geometry.js';
import type { FloorModel, ScenarioModel } from '../scenario/model.js';

/**
 * The walkable geometry of one floor, precomputed once: rooms with their turn points (for
 * walking around the inside corners of L-shaped rooms) and doors with the unit normal that
 * points to their `toRoomId` side. Agents only ever move along paths planned on this.
 */
export interface RoomGeo {
  readonly id: string;
  readonly polygon: Polygon;
  readonly box: BBox;
  /** Reflex (inside) corners pulled into the room: waypoints around L-shapes. */
  readonly turnPoints: readonly Vec2[];
  /** turnVisible[i][j]: the straight walk between turn points i and j stays in the room. */
  readonly turnVisible: readonly (readonly boolean[])[];
  /** Doors on this room's boundary (internal doors and entrances). */
  readonly doors: readonly DoorGeo[];
}

export interface DoorGeo {
  readonly id: string;
  readonly a: Vec2;
  readonly b: Vec2;
  readonly length: number;
  readonly mid: Vec2;
  /** Unit normal pointing to the `toRoomId` side of the door line. */
  readonly nx: number;
  readonly ny: number;
  /** null = outside the floor. */
  readonly fromRoomId: string | null;
  readonly toRoomId: string;
}

export interface FloorPlan {
  readonly floorId: string;
  readonly rooms: ReadonlyMap<string, RoomGeo>;
  readonly doors: readonly DoorGeo[];
  readonly doorsById: ReadonlyMap<string, DoorGeo>;
  /** The room containing the point, or null when it is in none (outside the floor's rooms). */
  roomAt(x: number, y: number): string | null;
}

/** How far a reflex corner is pulled into the room: clear of both walls, for a body. */
const TURN_PULL_M = 0.5;

/** Signed distance of (x, y) from the door line, positive on the `toRoomId` side. */
export function doorSide(door: DoorGeo, x: number, y: number): number {
  return (x - door.a[0]) * door.nx + (y - door.a[1]) * door.ny;
}

/** The point at fraction `along` of the door, pushed `offset` metres along its normal. */
export function doorPoint(door: DoorGeo, along: number, offset: number): Vec2 {
  return [
    door.a[0] + (door.b[0] - door.a[0]) * along + door.nx * offset,
    door.a[1] + (door.b[1] - door.a[1]) * along + door.ny * offset,
  ];
}

function buildDoor(d: ScenarioModel['doors'][number], rooms: Map<string, Polygon>): DoorGeo {
  const [a, b] = d.line;
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const length = Math.hypot(dx, dy);
  const mid: Vec2 = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
  let nx = length > 0 ? -dy / length : 0;
  let ny = length > 0 ? dx / length : 1;
  // Orient the normal towards the toRoom side by probing just beside the door's middle.
  const to = rooms.get(d.toRoomId);
  if (to && !probeInside(mid, nx, ny, to) && probeInside(mid, -nx, -ny, to)) {
    nx = -nx;
    ny = -ny;
  }
  return { id: d.id, a, b, length, mid, nx, ny, fromRoomId: d.fromRoomId, toRoomId: d.toRoomId };
}

function probeInside(mid: Vec2, nx: number, ny: number, poly: Polygon): boolean {
  return [0.05, 0.2].some((k) => pointInPolygon(mid[0] + nx * k, mid[1] + ny * k, poly));
}

/** Reflex corners of the polygon, each pulled into the interior along its bisector. */
export function turnPointsOf(poly: Polygon): Vec2[] {
  const ccw = signedArea(poly) > 0 ? 1 : -1;
  const out: Vec2[] = [];
  const n = poly.length;
  for (let i = 0; i < n; i++) {
    const prev = poly[(i + n - 1) % n] as Vec2;
    const v = poly[i] as Vec2;
    const next = poly[(i + 1) % n] as Vec2;
    const turn = (v[0] - prev[0]) * (next[1] - v[1]) - (v[1] - prev[1]) * (next[0] - v[0]);
    if (turn * ccw >= 0) continue; // convex or straight: never in the way
    const p = pulledInside(poly, prev, v, next);
    if (p) out.push(p);
  }
  return out;
}

function pulledInside(poly: Polygon, prev: Vec2, v: Vec2, next: Vec2): Vec2 | null {
  const ax = prev[0] - v[0];
  const ay = prev[1] - v[1];
  const bx = next[0] - v[0];
  const by = next[1] - v[1];
  const la = Math.hypot(ax, ay) || 1;
  const lb = Math.hypot(bx, by) || 1;
  // At a reflex corner the edge directions point outwards on average: go the other way.
  let dx = -(ax / la + bx / lb);
  let dy = -(ay / la + by / lb);
  const ld = Math.hypot(dx, dy) || 1;
  dx /= ld;
  dy /= ld;
  for (const k of [TURN_PULL_M, TURN_PULL_M / 2, TURN_PULL_M / 4]) {
    const p: Vec2 = [v[0] + dx * k, v[1] + dy * k];
    if (pointInPolygon(p[0], p[1], poly) && distanceToBoundary(p, poly) > k / 2) return p;
  }
  return null;
}

function buildRoom(id: string, polygon: Polygon, doors: DoorGeo[]): RoomGeo {
  const turnPoints = turnPointsOf(polygon);
  const turnVisible = turnPoints.map((p) => turnPoints.map((q) => p !== q && segmentInsidePolygon(p, q, polygon)));
  return { id, polygon, box: bbox(polygon), turnPoints, turnVisible, doors };
}

/** Precomputes the walkable geometry of one floor of the model. */
export function buildFloorPlan(model: ScenarioModel, floor: FloorModel): FloorPlan {
  const polys = new Map<string, Polygon>();
  for (const r of model.rooms) if (r.floorId === floor.id) polys.set(r.id, r.polygon);
  const doors = model.doors.filter((d) => d.floorId === floor.id).map((d) => buildDoor(d, polys));
  const rooms = new Map<string, RoomGeo>();
  for (const [id, poly] of polys) {
    const touching = doors.filter((d) => d.toRoomId === id || d.fromRoomId === id);
    rooms.set(id, buildRoom(id, poly, touching));
  }
  const list = [...rooms.values()];
  return {
    floorId: floor.id,
    rooms,
    doors,
    doorsById: new Map(doors.map((d) => [d.id, d])),
    roomAt(x, y) {
      for (const r of list) {
        if (x < r.box.minX || x > r.box.maxX || y < r.box.minY || y > r.box.maxY) continue;
        if (pointInPolygon(x, y, r.polygon)) return r.id;
      }
      return null;
    },
  };
}
