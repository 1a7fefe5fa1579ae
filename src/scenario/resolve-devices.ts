import { pointInPolygon, type Vec2 } from '../core/geometry.js';
import { footprintTransform } from '../core/footprint.js';
import { hiveSerialFor, macFor, secretFor, stableId } from '../core/ids.js';
import { parseDuration } from '../core/time.js';
import type { Seg } from './diagnostics.js';
import { lookup, type FloorScope } from './floor-scope.js';
import type { DoorModel, HiveModel, RoomModel, SensorModel, ZoneModel } from './model.js';
import { claimId, error, NameSet, parseAt, warn, type Ctx } from './resolve-context.js';
import { checkSensorView } from './resolve-thermal.js';
import { hiveSchema, sensorSchema, type SensorFile } from './schema.js';
import { fmtPoint, insideOrOn } from './shape-checks.js';

/** Firmware reported by hives whose item gives none. */
export const DEFAULT_FIRMWARE = '1.4.2';
/** Mounting heights the sensor is specified for (platform-reference §6); outside: a warning. */
export const SUPPORTED_HEIGHT_M = { min: 2.4, max: 4.6 } as const;

export function resolveHives(ctx: Ctx, fs: FloorScope, items: readonly unknown[]): void {
  const names = new NameSet('hive', `floor \`${fs.floor.name}\``);
  items.forEach((raw, i) => {
    const path = [...fs.path, 'hives', i];
    const h = parseAt(ctx, hiveSchema, raw, path);
    if (h === null || !names.add(ctx, h.name, i, path)) return;
    if (fs.floor.outline.length >= 3 && !insideOrOn(h.position, fs.floor.outline)) {
      error(ctx, [...path, 'position'], `hive \`${h.name}\` at ${fmtPoint(h.position)} is outside the floor`);
    }
    const room =
      h.room === undefined ? roomAt(fs, h.position) : lookup<RoomModel>(ctx, fs, 'room', h.room, [...path, 'room']);
    const serial = h.serial ?? hiveSerialFor(...fs.names, h.name);
    const hive: HiveModel = {
      id: stableId('hive', ...fs.names, h.name),
      name: h.name,
      serial,
      floorId: fs.floor.id,
      roomId: room?.id ?? null,
      position: h.position,
      backhaul: h.backhaul ?? 'wifi',
      password: h.password ?? secretFor(ctx.seed, 'hive', serial),
      firmwareVersion: h.firmware ?? DEFAULT_FIRMWARE,
      src: ctx.pointerOf(path),
    };
    claimId(ctx, hive.id, path, `hive \`${h.name}\``);
    claimId(ctx, serial, path, `hive serial of \`${h.name}\``);
    fs.hives.set(hive.name, hive);
    fs.floor.hiveIds.push(hive.id);
    ctx.lists.hives.push(hive);
  });
}

export function resolveSensors(ctx: Ctx, fs: FloorScope, items: readonly unknown[]): void {
  const names = new NameSet('sensor', `floor \`${fs.floor.name}\``);
  items.forEach((raw, i) => {
    const path = [...fs.path, 'sensors', i];
    const s = parseAt(ctx, sensorSchema, raw, path);
    if (s === null || !names.add(ctx, s.name, i, path)) return;
    const sensor = resolveSensor(ctx, fs, s, path);
    if (sensor === null) return;
    claimId(ctx, sensor.id, path, `sensor \`${s.name}\``);
    fs.floor.sensorIds.push(sensor.id);
    ctx.lists.sensors.push(sensor);
  });
}

function resolveSensor(ctx: Ctx, fs: FloorScope, s: SensorFile, path: readonly Seg[]): SensorModel | null {
  if (fs.floor.outline.length >= 3 && !insideOrOn(s.center, fs.floor.outline)) {
    error(ctx, [...path, 'center'], `sensor \`${s.name}\` centre ${fmtPoint(s.center)} is outside the floor outline`);
  }
  const place = s.mode === 'traffic' ? trafficPlace(ctx, fs, s, path) : presencePlace(ctx, fs, s, path);
  const hive = sensorHive(ctx, fs, s, path);
  if (place === null || hive === null) return null;
  const d = ctx.defaults;
  const height = s.height ?? d.height;
  if (height < SUPPORTED_HEIGHT_M.min || height > SUPPORTED_HEIGHT_M.max) {
    warn(
      ctx,
      [...path, 'height'],
      `sensor \`${s.name}\`: height ${height} m is outside the supported ${SUPPORTED_HEIGHT_M.min}–${SUPPORTED_HEIGHT_M.max} m`,
    );
  }
  const reportText = s.report_interval;
  const reportMs =
    reportText === undefined
      ? s.mode === 'traffic'
        ? d.trafficReportMs
        : d.presenceReportMs
      : (parseDuration(reportText) ?? 0);
  if (reportMs <= 0) error(ctx, [...path, 'report_interval'], `sensor \`${s.name}\`: report_interval must be > 0`);
  const sensor: SensorModel = {
    id: stableId('sensor', ...fs.names, s.name),
    name: s.name,
    mac: s.mac === undefined ? uniqueMac(ctx, [...fs.names, s.name]) : givenMac(ctx, s.mac, [...path, 'mac']),
    floorId: fs.floor.id,
    roomId: place.room?.id ?? null,
    zoneId: place.zone?.id ?? null,
    doorId: place.door?.id ?? null,
    hiveId: hive.id,
    mode: s.mode,
    model: s.model ?? d.model,
    center: s.center,
    height,
    orientationDeg: (((s.orientation ?? d.orientation) % 360) + 360) % 360,
    fovDeg: s.field_of_view ?? d.fieldOfView,
    sensitivity: s.sensitivity ?? d.sensitivity,
    reportIntervalMs: reportMs,
    ...((s.fps ?? d.fps) !== undefined ? { fps: (s.fps ?? d.fps) as number } : {}),
    src: ctx.pointerOf(path),
  };
  if (place.door !== null) checkDoorSeen(ctx, sensor, place.door, path);
  checkSensorView(ctx, sensor, place.room, place.door, path);
  return sensor;
}

interface Place {
  room: RoomModel | null;
  zone: ZoneModel | null;
  door: DoorModel | null;
}

function presencePlace(ctx: Ctx, fs: FloorScope, s: SensorFile, path: readonly Seg[]): Place | null {
  for (const k of ['door', 'in'] as const) {
    if (s[k] !== undefined)
      return fail(
        ctx,
        [...path, k],
        `sensor \`${s.name}\`: \`${k}\` is for traffic sensors (this one has mode presence)`,
      );
  }
  const zone = s.zone === undefined ? null : lookup<ZoneModel>(ctx, fs, 'zone', s.zone, [...path, 'zone']);
  if (s.zone !== undefined && zone === null) return null;
  const given = s.room === undefined ? null : lookup<RoomModel>(ctx, fs, 'room', s.room, [...path, 'room']);
  if (s.room !== undefined && given === null) return null;
  const zoneRoom = zone?.roomId == null ? null : ([...fs.rooms.values()].find((r) => r.id === zone.roomId) ?? null);
  if (given !== null && zoneRoom !== null && given.id !== zoneRoom.id) {
    return fail(
      ctx,
      [...path, 'zone'],
      `sensor \`${s.name}\`: zone \`${zone?.name ?? ''}\` is in room \`${zoneRoom.name}\`, not \`${given.name}\``,
    );
  }
  const room = given ?? zoneRoom ?? roomAt(fs, s.center);
  if (
    room !== null &&
    (given !== null || zoneRoom !== null) &&
    !pointInPolygon(s.center[0], s.center[1], room.polygon)
  ) {
    warn(
      ctx,
      [...path, 'center'],
      `sensor \`${s.name}\` centre ${fmtPoint(s.center)} is outside its room \`${room.name}\``,
    );
  }
  return { room, zone, door: null };
}

function trafficPlace(ctx: Ctx, fs: FloorScope, s: SensorFile, path: readonly Seg[]): Place | null {
  for (const k of ['room', 'zone'] as const) {
    if (s[k] !== undefined)
      return fail(
        ctx,
        [...path, k],
        `sensor \`${s.name}\`: a traffic sensor counts a door; use \`door:\` (and \`in:\`), not \`${k}:\``,
      );
  }
  if (s.door === undefined) return fail(ctx, path, `sensor \`${s.name}\`: a traffic sensor needs \`door:\``);
  const door = lookup<DoorModel>(ctx, fs, 'door', s.door, [...path, 'door']);
  if (door === null) return null;
  const toRoom = [...fs.rooms.values()].find((r) => r.id === door.toRoomId) ?? null;
  if (s.in === undefined) return { room: toRoom, zone: null, door };
  const inRoom = lookup<RoomModel>(ctx, fs, 'room', s.in, [...path, 'in']);
  if (inRoom === null) return null;
  if (inRoom.id !== door.toRoomId && inRoom.id !== door.fromRoomId) {
    return fail(
      ctx,
      [...path, 'in'],
      `sensor \`${s.name}\`: room \`${inRoom.name}\` is not on either side of door \`${door.name}\``,
    );
  }
  return { room: inRoom, zone: null, door };
}

function sensorHive(ctx: Ctx, fs: FloorScope, s: SensorFile, path: readonly Seg[]): HiveModel | null {
  if (s.hive !== undefined) return lookup<HiveModel>(ctx, fs, 'hive', s.hive, [...path, 'hive']);
  if (fs.hives.size === 1) return fs.hives.values().next().value ?? null;
  if (fs.raw.hive.size === 1) return null; // the floor's only hive is invalid: already reported
  const why = fs.raw.hive.size === 0 ? 'the floor has no hive' : `the floor has ${fs.raw.hive.size} hives`;
  return fail(ctx, path, `sensor \`${s.name}\`: ${why}; name one with \`hive:\``);
}

function checkDoorSeen(ctx: Ctx, sensor: SensorModel, door: DoorModel, path: readonly Seg[]): void {
  const [a, b] = door.line;
  const view = footprintTransform({
    center: sensor.center,
    height: sensor.height,
    orientationDeg: sensor.orientationDeg,
    fovDeg: sensor.fovDeg,
  });
  if (!view.sees((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)) {
    warn(
      ctx,
      [...path, 'center'],
      `sensor \`${sensor.name}\` does not see the middle of door \`${door.name}\` (centre it on the door)`,
    );
  }
}

/** The room whose polygon contains the point (first in file order), or null. */
export function roomAt(fs: FloorScope, p: Vec2): RoomModel | null {
  for (const room of fs.rooms.values()) if (pointInPolygon(p[0], p[1], room.polygon)) return room;
  return null;
}

/**
 * macFor keeps only 24 bits of hash, so a fleet of tens of thousands of sensors has a few
 * collisions; the later sensor (file order) is re-derived with a salt until unique.
 */
function uniqueMac(ctx: Ctx, names: readonly string[]): string {
  let mac = macFor(...names);
  for (let salt = 1; ctx.macs.has(mac); salt++) mac = macFor(...names, `#${salt}`);
  ctx.macs.add(mac);
  return mac;
}

/** A MAC the file gives (a real sensor's): unique across the scenario like derived ones. */
function givenMac(ctx: Ctx, mac: string, path: readonly Seg[]): string {
  if (ctx.macs.has(mac)) error(ctx, path, `MAC ${mac} is already used by another sensor`);
  ctx.macs.add(mac);
  return mac;
}

function fail(ctx: Ctx, path: readonly Seg[], message: string): null {
  error(ctx, path, message);
  return null;
}
