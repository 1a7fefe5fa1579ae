import { footprintTransform, type FootprintTransform } from '../core/footprint.js';
import { groupBy } from '../core/group-by.js';
import { bbox, pointInPolygon, type BBox, type Polygon } from '../core/geometry.js';
import type { AssetSnapshot, Hive, Sensor, Zone } from '../assets/model.js';

/**
 * The cloud's ingest tables, derived from a snapshot of the asset catalogue (rebuilt when it changes): hives by serial, sensors
 * by MAC, each sensor's footprint transform (sensor-local → world, built when asked for) and, per floor, a spatial
 * lookup of rooms and zones so assigning a detection to spaces is a few bbox tests plus
 * point-in-polygon on the candidates.
 */
export interface IndexedSpace {
  readonly id: string;
  readonly polygon: Polygon;
  readonly box: BBox;
}

export interface FloorIndex {
  readonly floorId: string;
  /** Rooms of the floor, sorted by id. */
  readonly rooms: readonly IndexedSpace[];
  /** Zones of the floor, sorted by id. */
  readonly zones: readonly IndexedSpace[];
}

export interface AssetRegistry {
  /** The assets the registry was built from (the hot path derives its tables from them). */
  readonly assets: AssetSnapshot;
  hiveBySerial(serial: string): Hive | undefined;
  /** MACs are matched case-insensitively. */
  sensorByMac(mac: string): Sensor | undefined;
  sensor(sensorId: string): Sensor | undefined;
  /** Footprint transform of a sensor; throws RangeError for an unknown id. */
  transform(sensorId: string): FootprintTransform;
  /** Floor lookup; throws RangeError for an unknown id. */
  floor(floorId: string): FloorIndex;
  /**
   * Space ids (room, zone, floor) that a presence sensor's report makes "sampled" at its
   * sensing instant (docs/occupancy.md): its room, the zones of that room or naming it,
   * every floor-zone, and its floor. Empty for traffic sensors.
   */
  sampledSpaces(sensorId: string): readonly string[];
  /** Every space that any presence sensor samples, sorted. */
  presenceSpaceIds(): readonly string[];
}

function indexSpace(id: string, polygon: Polygon): IndexedSpace {
  return { id, polygon, box: bbox(polygon) };
}

function byId<T extends { id: string }>(a: T, b: T): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function buildFloorIndexes(model: AssetSnapshot): Map<string, FloorIndex> {
  const floors = new Map<string, FloorIndex>();
  const roomsOf = groupBy(model.rooms, (r) => r.floorId);
  const zonesOf = groupBy(model.zones, (z) => z.floorId);
  for (const f of model.floors) {
    const rooms = (roomsOf.get(f.id) ?? []).map((r) => indexSpace(r.id, r.polygon));
    const zones = (zonesOf.get(f.id) ?? []).map((z) => indexSpace(z.id, z.polygon));
    floors.set(f.id, { floorId: f.id, rooms: rooms.sort(byId), zones: zones.sort(byId) });
  }
  return floors;
}

/** Which zones a presence sensor samples: zone of its room, the zone it names, floor-zones. */
function zonesSampledBy(floorZones: readonly Zone[], s: Sensor): string[] {
  return floorZones
    .filter((z) => (z.roomId === null ? true : z.roomId === s.roomId) || z.id === s.zoneId)
    .map((z) => z.id);
}

function buildSampledSpaces(model: AssetSnapshot): Map<string, readonly string[]> {
  const out = new Map<string, readonly string[]>();
  const zonesOf = groupBy(model.zones, (z) => z.floorId);
  for (const s of model.sensors) {
    if (s.mode !== 'presence') {
      out.set(s.id, []);
      continue;
    }
    const ids = new Set<string>([s.floorId, ...zonesSampledBy(zonesOf.get(s.floorId) ?? [], s)]);
    if (s.roomId !== null) ids.add(s.roomId);
    out.set(s.id, [...ids].sort());
  }
  return out;
}

export function buildRegistry(model: AssetSnapshot): AssetRegistry {
  const hives = new Map(model.hives.map((h) => [h.serial, h] as const));
  const sensorsByMac = new Map(model.sensors.map((s) => [s.mac.toLowerCase(), s] as const));
  const sensors = new Map(model.sensors.map((s) => [s.id, s] as const));
  // Transforms are built on demand, not kept per sensor: each is four closures and their
  // context (~400 bytes), ~12 MB of the platform thread's live heap at 30k sensors that every
  // mark-compact traced (bench/README.md, "why-platform"). The kernels copy what they need into
  // flat arrays once; the one per-packet caller (sensor events) asks for one sensor at a time.
  let last: { id: string; transform: FootprintTransform } | null = null;
  const floors = buildFloorIndexes(model);
  const sampled = buildSampledSpaces(model);
  const presenceSpaces = [...new Set([...sampled.values()].flat())].sort();
  return {
    assets: model,
    hiveBySerial: (serial) => hives.get(serial),
    sensorByMac: (mac) => sensorsByMac.get(mac.toLowerCase()),
    sensor: (id) => sensors.get(id),
    transform(id) {
      if (last?.id === id) return last.transform;
      const s = sensors.get(id);
      if (!s) throw new RangeError(`unknown sensor ${id}`);
      last = { id, transform: footprintTransform(s) };
      return last.transform;
    },
    floor(id) {
      const f = floors.get(id);
      if (!f) throw new RangeError(`unknown floor ${id}`);
      return f;
    },
    sampledSpaces: (id) => sampled.get(id) ?? [],
    presenceSpaceIds: () => presenceSpaces,
  };
}

/** Spaces of the list whose polygon contains (x, y): bbox first, polygon only on a hit. */
export function spacesContaining(spaces: readonly IndexedSpace[], x: number, y: number): IndexedSpace[] {
  const hits: IndexedSpace[] = [];
  for (const s of spaces) {
    const b = s.box;
    if (x < b.minX || x > b.maxX || y < b.minY || y > b.maxY) continue;
    if (pointInPolygon(x, y, s.polygon)) hits.push(s);
  }
  return hits;
}
