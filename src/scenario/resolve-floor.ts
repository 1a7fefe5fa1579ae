import { z } from 'zod';
import { bbox, distancePointSegment, segmentOnBoundary, type Polygon, type Vec2 } from '../core/geometry.js';
import { stableId } from '../core/ids.js';
import type { Seg } from './diagnostics.js';
import { lookup, rawNames, type FloorParent, type FloorScope } from './floor-scope.js';
export type { FloorParent } from './floor-scope.js';
import type { DoorModel, FloorModel, RoomModel } from './model.js';
import { claimId, error, NameSet, parseAt, rawList, rawName, type Ctx } from './resolve-context.js';
import { resolveHives, resolveSensors } from './resolve-devices.js';
import { resolveMeetings, resolvePeople } from './resolve-people.js';
import { resolveWarmObjects } from './resolve-thermal.js';
import { doorSchema, floorSchema, roomSchema, zoneSchema } from './schema.js';
import { resolveCalibrationPoints } from './resolve-calibration.js';
import { fmtPoint, insideOrOn, ON_EDGE_TOL_M, polygonProblem, polygonWithin } from './shape-checks.js';

/** A floor's own fields; its lists are walked item by item so one bad item hides nothing else. */
const floorOwnSchema = floorSchema.extend({
  rooms: z.array(z.unknown()).min(1),
  zones: z.array(z.unknown()).optional(),
  doors: z.array(z.unknown()).optional(),
  hives: z.array(z.unknown()).optional(),
  sensors: z.array(z.unknown()).optional(),
  people: z.array(z.unknown()).optional(),
  meetings: z.array(z.unknown()).optional(),
  warm_objects: z.array(z.unknown()).optional(),
});

/** Resolves one floor and everything on it; returns the floor id. */
export function resolveFloor(ctx: Ctx, raw: unknown, path: readonly Seg[], parent: FloorParent): string {
  const own = parseAt(ctx, floorOwnSchema, raw, path);
  const name = own?.name ?? rawName(raw) ?? `#${String(path.at(-1))}`;
  const names = [...parent.names, name];
  const floor: FloorModel = {
    id: stableId('space', ...names),
    name,
    siteId: parent.siteId,
    buildingId: parent.buildingId,
    level: own?.level ?? 0,
    customId: own?.custom_id ?? null,
    outline: [],
    roomIds: [],
    zoneIds: [],
    doorIds: [],
    hiveIds: [],
    sensorIds: [],
    src: ctx.pointerOf(path),
    ...resolveCalibrationPoints(ctx, own?.calibration_points, path, parent.siteId),
  };
  claimId(ctx, floor.id, path, `floor \`${name}\``);
  const fs: FloorScope = {
    path,
    names,
    floor,
    rooms: new Map(),
    roomIndex: new Map(),
    zones: new Map(),
    doors: new Map(),
    hives: new Map(),
    raw: {
      room: rawNames(raw, 'room'),
      zone: rawNames(raw, 'zone'),
      door: rawNames(raw, 'door'),
      hive: rawNames(raw, 'hive'),
    },
  };
  const field = (k: string): unknown[] => rawList((raw as Record<string, unknown> | null)?.[k]);
  resolveRooms(ctx, fs, field('rooms'));
  floor.outline = resolveOutline(ctx, fs, own?.outline);
  resolveZones(ctx, fs, field('zones'));
  resolveDoors(ctx, fs, field('doors'));
  resolveHives(ctx, fs, field('hives'));
  resolveSensors(ctx, fs, field('sensors'));
  resolvePeople(ctx, fs, field('people'), parent);
  resolveMeetings(ctx, fs, field('meetings'));
  resolveWarmObjects(ctx, fs, field('warm_objects'));
  ctx.lists.floors.push(floor);
  return floor.id;
}

function resolveRooms(ctx: Ctx, fs: FloorScope, items: readonly unknown[]): void {
  const names = new NameSet('room', `floor \`${fs.floor.name}\``);
  items.forEach((raw, i) => {
    const path = [...fs.path, 'rooms', i];
    const r = parseAt(ctx, roomSchema, raw, path);
    if (r === null || !names.add(ctx, r.name, i, path)) return;
    const problem = polygonProblem(r.polygon);
    if (problem !== null) error(ctx, [...path, 'polygon'], `room \`${r.name}\`: ${problem}`);
    const room: RoomModel = {
      id: stableId('room', ...fs.names, r.name),
      name: r.name,
      floorId: fs.floor.id,
      customId: r.custom_id ?? null,
      capacity: r.capacity ?? null,
      polygon: r.polygon,
      src: ctx.pointerOf(path),
      ...resolveCalibrationPoints(ctx, r.calibration_points, path, fs.floor.siteId),
    };
    claimId(ctx, room.id, path, `room \`${r.name}\``);
    fs.rooms.set(room.name, room);
    fs.roomIndex.set(room.name, i);
    fs.floor.roomIds.push(room.id);
    ctx.lists.rooms.push(room);
  });
}

/** The given outline (checked), else the bounding box of the floor's rooms. */
function resolveOutline(ctx: Ctx, fs: FloorScope, given: Polygon | undefined): Polygon {
  const path = [...fs.path, 'outline'];
  if (given !== undefined) {
    const problem = polygonProblem(given);
    if (problem !== null) error(ctx, path, `floor outline: ${problem}`);
    for (const room of fs.rooms.values()) {
      const at = [...fs.path, 'rooms', fs.roomIndex.get(room.name) ?? 0, 'polygon'];
      if (!polygonWithin(room.polygon, given))
        error(ctx, at, `room \`${room.name}\` extends outside the floor outline`);
    }
    return given;
  }
  const b = bbox([...fs.rooms.values()].flatMap((r) => r.polygon));
  if (!Number.isFinite(b.minX)) return [];
  return [
    [b.minX, b.minY],
    [b.maxX, b.minY],
    [b.maxX, b.maxY],
    [b.minX, b.maxY],
  ];
}

function resolveZones(ctx: Ctx, fs: FloorScope, items: readonly unknown[]): void {
  const names = new NameSet('zone', `floor \`${fs.floor.name}\``);
  items.forEach((raw, i) => {
    const path = [...fs.path, 'zones', i];
    const z = parseAt(ctx, zoneSchema, raw, path);
    if (z === null || !names.add(ctx, z.name, i, path)) return;
    const problem = polygonProblem(z.polygon);
    if (problem !== null) error(ctx, [...path, 'polygon'], `zone \`${z.name}\`: ${problem}`);
    const room = z.room === undefined ? null : lookup<RoomModel>(ctx, fs, 'room', z.room, [...path, 'room']);
    if (room !== null && problem === null && !polygonWithin(z.polygon, room.polygon)) {
      error(ctx, [...path, 'polygon'], `zone \`${z.name}\` extends outside its room \`${room.name}\``);
    } else if (
      z.room === undefined &&
      problem === null &&
      fs.floor.outline.length >= 3 &&
      !polygonWithin(z.polygon, fs.floor.outline)
    ) {
      error(ctx, [...path, 'polygon'], `zone \`${z.name}\` extends outside the floor outline`);
    }
    const zone = {
      id: stableId('zone', ...fs.names, z.name),
      name: z.name,
      floorId: fs.floor.id,
      roomId: room?.id ?? null,
      customId: z.custom_id ?? null,
      polygon: z.polygon,
      src: ctx.pointerOf(path),
    };
    claimId(ctx, zone.id, path, `zone \`${z.name}\``);
    fs.zones.set(zone.name, zone);
    fs.floor.zoneIds.push(zone.id);
    ctx.lists.zones.push(zone);
  });
}

function resolveDoors(ctx: Ctx, fs: FloorScope, items: readonly unknown[]): void {
  const names = new NameSet('door', `floor \`${fs.floor.name}\``);
  items.forEach((raw, i) => {
    const path = [...fs.path, 'doors', i];
    const d = parseAt(ctx, doorSchema, raw, path);
    if (d === null || !names.add(ctx, d.name, i, path)) return;
    const door = resolveDoorRooms(ctx, fs, d, path);
    if (door === null) return;
    claimId(ctx, door.id, path, `door \`${d.name}\``);
    fs.doors.set(door.name, door);
    fs.floor.doorIds.push(door.id);
    ctx.lists.doors.push(door);
  });
}

type DoorFile = z.output<typeof doorSchema>;

function resolveDoorRooms(ctx: Ctx, fs: FloorScope, d: DoorFile, path: readonly Seg[]): DoorModel | null {
  const line = d.line as readonly [Vec2, Vec2];
  if (d.between !== undefined && d.entrance !== undefined)
    return fail(ctx, path, `door \`${d.name}\`: give either \`between\` or \`entrance\`, not both`);
  if (d.between === undefined && d.entrance === undefined) {
    return fail(ctx, path, `door \`${d.name}\`: missing \`between: [roomA, roomB]\` or \`entrance: room\``);
  }
  if (distancePointSegment(line[0], line[1], line[1]) < ON_EDGE_TOL_M)
    return fail(ctx, [...path, 'line'], `door \`${d.name}\`: the line has (almost) zero length`);
  const sides = d.between ?? [null, d.entrance as string];
  const rooms = sides.map((n, k) =>
    n === null
      ? null
      : lookup<RoomModel>(ctx, fs, 'room', n, d.between ? [...path, 'between', k] : [...path, 'entrance']),
  );
  const [from, to] = rooms as [RoomModel | null, RoomModel | null];
  if ((sides[0] !== null && from === null) || to === null) return null;
  if (from !== null && from.id === to.id)
    return fail(ctx, [...path, 'between'], `door \`${d.name}\` joins room \`${to.name}\` to itself`);
  for (const room of [from, to]) {
    if (room !== null && !segmentOnBoundary(line[0], line[1], room.polygon, ON_EDGE_TOL_M)) {
      error(
        ctx,
        [...path, 'line'],
        `door \`${d.name}\` ${fmtPoint(line[0])}–${fmtPoint(line[1])} is not on the boundary of room \`${room.name}\``,
      );
    }
  }
  const mid: Vec2 = [(line[0][0] + line[1][0]) / 2, (line[0][1] + line[1][1]) / 2];
  if (fs.floor.outline.length >= 3 && !insideOrOn(mid, fs.floor.outline))
    error(ctx, [...path, 'line'], `door \`${d.name}\` is outside the floor outline`);
  return {
    id: stableId('door', ...fs.names, d.name),
    name: d.name,
    floorId: fs.floor.id,
    line,
    fromRoomId: from?.id ?? null,
    toRoomId: to.id,
    entrance: from === null,
    src: ctx.pointerOf(path),
  };
}

function fail(ctx: Ctx, path: readonly Seg[], message: string): null {
  error(ctx, path, message);
  return null;
}
