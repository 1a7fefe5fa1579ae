import type { Sensor } from '../../assets/model.js';
import type { AssetCatalogue } from '../../assets/catalogue.js';
import { AppError, ErrorCodes } from '../../core/errors.js';
import type { Measurement, ReportingQuery } from './request.js';

/**
 * What a reporting request is about: for each measurement, the floors, rooms, zones or
 * sensors of the caller's organisation its filters select, with the metadata every point
 * carries. An id that is not the organisation's is a 404, as for an id that does not exist.
 */
export interface Target {
  /** Floor, room, zone or sensor id the series is read for. */
  seriesId: string;
  kind: 'floor' | 'room' | 'zone' | 'sensor';
  /** Every metadata field of a flat point (platform-reference §3), null where it does not apply. */
  meta: Record<string, string | null>;
}

/** The metadata fields every point carries, in the reference's order; custom ids follow when set. */
const META_KEYS = [
  'building_id',
  'building_name',
  'space_id',
  'space_name',
  'room_id',
  'room_name',
  'zone_id',
  'zone_name',
  'sensor_id',
  'hive_id',
  'hive_serial',
  'mac_address',
  'tag_id',
] as const;
const CUSTOM_KEYS = ['floor_custom_id', 'room_custom_id', 'zone_custom_id'] as const;

function complete(meta: Record<string, string>, tagId: string | null): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const k of META_KEYS) out[k] = meta[k] ?? null;
  out.tag_id = tagId;
  // Custom ids are returned only when a value exists (spec §4.4).
  for (const k of CUSTOM_KEYS) if (meta[k] !== undefined) out[k] = meta[k];
  return out;
}

const notFound = (what: string, id: string): AppError =>
  new AppError(ErrorCodes.NOT_FOUND, `${what} ${id} does not exist`);

export function resolveTargets(assets: AssetCatalogue, orgId: string, q: ReportingQuery, m: Measurement): Target[] {
  // A space selected through a tag names that tag (the first requested tag holding it).
  const tagOf = (id: string): string | null =>
    (q.ids.tags ?? []).find((t) => assets.tag(orgId, t)?.spaceIds.has(id)) ?? null;
  return selectTargets(assets, orgId, q, m).map((t) => ({
    seriesId: t.seriesId,
    kind: t.kind,
    meta: complete(t.meta, t.kind === 'sensor' ? null : tagOf(t.seriesId)),
  }));
}

/** A target as selected, with the metadata that applies to it only. */
interface Selected {
  seriesId: string;
  kind: Target['kind'];
  meta: Record<string, string>;
}

function selectTargets(assets: AssetCatalogue, orgId: string, q: ReportingQuery, m: Measurement): Selected[] {
  const ids = checkIds(assets, orgId, q);
  const floors = assets.list('floor', orgId);
  const rooms = assets.list('room', orgId);
  const zones = assets.list('zone', orgId);
  const floorIds = new Set([
    ...(ids.spaces ?? []),
    ...floors.filter((f) => ids.buildings?.includes(f.buildingId)).map((f) => f.id),
  ]);
  const tagged = new Set((ids.tags ?? []).flatMap((t) => [...(assets.tag(orgId, t)?.spaceIds ?? [])]));
  const any = (...xs: Array<unknown[] | undefined>): boolean => xs.some((x) => x !== undefined);
  switch (m) {
    case 'floor_occupancy':
    case 'traffic_floor_occupancy': {
      const sel = any(ids.spaces, ids.buildings, ids.tags)
        ? floors.filter((f) => floorIds.has(f.id) || tagged.has(f.id))
        : floors;
      return sel.map((f) => ({ seriesId: f.id, kind: 'floor', meta: floorMeta(assets, orgId, f.id) }));
    }
    case 'room_occupancy':
    case 'traffic_room_occupancy': {
      const sel = any(ids.rooms, ids.spaces, ids.buildings, ids.tags)
        ? rooms.filter((r) => ids.rooms?.includes(r.id) || floorIds.has(r.floorId) || tagged.has(r.id))
        : rooms;
      return sel.map((r) => ({ seriesId: r.id, kind: 'room', meta: roomMeta(assets, orgId, r.id) }));
    }
    case 'zone_occupancy': {
      const sel = any(ids.zones, ids.rooms, ids.spaces, ids.buildings, ids.tags)
        ? zones.filter(
            (z) =>
              ids.zones?.includes(z.id) ||
              (z.roomId !== null && ids.rooms?.includes(z.roomId)) ||
              floorIds.has(z.floorId) ||
              tagged.has(z.id),
          )
        : zones;
      return sel.map((z) => ({ seriesId: z.id, kind: 'zone', meta: zoneMeta(assets, orgId, z.id) }));
    }
    case 'traffic': {
      const traffic = assets.list('sensor', orgId).filter((s) => s.mode === 'traffic');
      const sel = any(ids.sensors, ids.hives, ids.rooms, ids.spaces, ids.buildings)
        ? traffic.filter(
            (s) =>
              ids.sensors?.includes(s.id) ||
              ids.hives?.includes(s.hiveId) ||
              (s.roomId !== null && ids.rooms?.includes(s.roomId)) ||
              floorIds.has(s.floorId),
          )
        : traffic;
      return sel.map((s) => ({ seriesId: s.id, kind: 'sensor', meta: sensorMeta(assets, orgId, s) }));
    }
  }
}

function checkIds(assets: AssetCatalogue, orgId: string, q: ReportingQuery): ReportingQuery['ids'] {
  const kinds = {
    spaces: 'floor',
    rooms: 'room',
    zones: 'zone',
    buildings: 'building',
    sensors: 'sensor',
    hives: 'hive',
  } as const;
  for (const [key, kind] of Object.entries(kinds) as Array<[keyof typeof kinds, (typeof kinds)[keyof typeof kinds]]>) {
    for (const id of q.ids[key] ?? []) if (!assets.get(kind, orgId, id)) throw notFound(kind, id);
  }
  for (const id of q.ids.tags ?? []) if (!assets.tag(orgId, id)) throw notFound('tag', id);
  return q.ids;
}

function withCustom(meta: Record<string, string>, key: string, value: string | null): Record<string, string> {
  // Custom ids are returned only when a value exists (spec §4.4).
  if (value !== null && value !== '') meta[key] = value;
  return meta;
}

export function floorMeta(assets: AssetCatalogue, orgId: string, floorId: string): Record<string, string> {
  const f = assets.get('floor', orgId, floorId);
  const b = f ? assets.get('building', orgId, f.buildingId) : undefined;
  const meta = {
    building_id: b?.id ?? '',
    building_name: b?.name ?? '',
    space_id: f?.id ?? '',
    space_name: f?.name ?? '',
  };
  return withCustom(meta, 'floor_custom_id', f?.customId ?? null);
}

function roomMeta(assets: AssetCatalogue, orgId: string, roomId: string): Record<string, string> {
  const r = assets.get('room', orgId, roomId);
  const meta = { ...floorMeta(assets, orgId, r?.floorId ?? ''), room_id: roomId, room_name: r?.name ?? '' };
  return withCustom(meta, 'room_custom_id', r?.customId ?? null);
}

function zoneMeta(assets: AssetCatalogue, orgId: string, zoneId: string): Record<string, string> {
  const z = assets.get('zone', orgId, zoneId);
  const base = z?.roomId ? roomMeta(assets, orgId, z.roomId) : floorMeta(assets, orgId, z?.floorId ?? '');
  return withCustom({ ...base, zone_id: zoneId, zone_name: z?.name ?? '' }, 'zone_custom_id', z?.customId ?? null);
}

function sensorMeta(assets: AssetCatalogue, orgId: string, s: Sensor): Record<string, string> {
  const base = s.roomId ? roomMeta(assets, orgId, s.roomId) : floorMeta(assets, orgId, s.floorId);
  const hive = assets.get('hive', orgId, s.hiveId);
  return { ...base, sensor_id: s.id, hive_id: s.hiveId, hive_serial: hive?.serial ?? '', mac_address: s.mac };
}
