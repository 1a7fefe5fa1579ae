import type { Seg } from './diagnostics.js';
import { didYouMean } from './diagnostics.js';
import type { DoorModel, FloorModel, HiveModel, RoomModel, ZoneModel } from './model.js';
import { error, rawList, rawName, type Ctx } from './resolve-context.js';

/**
 * What the items of one floor may refer to by name: references never leave their floor.
 * `raw` holds every name written on the floor, valid item or not, so a reference to an item
 * that already failed validation is not reported a second time as unknown.
 */
export type RefKind = 'room' | 'zone' | 'door' | 'hive';

export interface FloorScope {
  path: readonly Seg[];
  /** Naming path for ids: org, site, building, floor. */
  names: readonly string[];
  floor: FloorModel;
  rooms: Map<string, RoomModel>;
  /** Index of each valid room in the floor's `rooms` list. */
  roomIndex: Map<string, number>;
  zones: Map<string, ZoneModel>;
  doors: Map<string, DoorModel>;
  hives: Map<string, HiveModel>;
  raw: Record<RefKind, Set<string>>;
}

const LIST_OF: Record<RefKind, string> = { room: 'rooms', zone: 'zones', door: 'doors', hive: 'hives' };

export function rawNames(rawFloor: unknown, kind: RefKind): Set<string> {
  const list =
    typeof rawFloor === 'object' && rawFloor !== null
      ? (rawFloor as Record<string, unknown>)[LIST_OF[kind]]
      : undefined;
  const out = new Set<string>();
  for (const item of rawList(list)) {
    const n = rawName(item);
    if (n !== null) out.add(n);
  }
  return out;
}

/** Resolves a name on the floor, reporting an unknown one with the closest existing name. */
export function lookup<T>(ctx: Ctx, fs: FloorScope, kind: RefKind, name: string, path: readonly Seg[]): T | null {
  const map = { room: fs.rooms, zone: fs.zones, door: fs.doors, hive: fs.hives }[kind] as Map<string, T>;
  const hit = map.get(name);
  if (hit !== undefined) return hit;
  if (!fs.raw[kind].has(name)) {
    error(ctx, path, `unknown ${kind} \`${name}\` on floor \`${fs.floor.name}\`${didYouMean(name, fs.raw[kind])}`);
  }
  return null;
}

/** The site and building a floor belongs to, as its resolvers need them. */
export interface FloorParent {
  siteId: string;
  buildingId: string;
  /** org, site, building names. */
  names: readonly string[];
}
