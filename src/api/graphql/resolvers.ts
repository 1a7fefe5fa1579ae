import { GraphQLScalarType, valueFromASTUntyped, type GraphQLResolveInfo } from 'graphql';
import { area } from '../../core/geometry.js';
import type { Building, Floor, Hive, Room, Sensor, Site, Zone } from '../../assets/model.js';
import { gqlError, need, type GqlContext } from './context.js';
import type { DeviceFlags } from '../status.js';
import { createMutations } from './create-mutations.js';
import { mutationResolvers } from './mutations.js';
import { floorBatteryDates, sensorExtras } from './sensor-extras.js';
import { afterSensorStatus } from './status-preload.js';
import { sensorViews, type SensorView } from './views.js';
import { webhookMutations, webhookQueries } from './webhook-resolvers.js';

/**
 * Resolvers over the asset catalogue. Every lookup goes through the caller's organisation;
 * nested lists resolve through id indexes, so deep queries over thousands of sensors stay
 * linear without a loader.
 */
export type { GqlContext } from './context.js';

const wrap = <T>(data: T[]): { data: T[] } => ({ data });
const byIds = <T extends { id: string }>(items: T[], ids: readonly string[] | null | undefined): T[] =>
  ids ? items.filter((x) => ids.includes(x.id)) : items;
const present = <T>(xs: ReadonlyArray<T | undefined>): T[] => xs.filter((x): x is T => x !== undefined);

function byCustom<T extends { id: string; customId: string | null }>(
  items: T[],
  args: { id?: string | null; customID?: string | null },
): T | null {
  if (!args.id && !args.customID) throw gqlError('BAD_USER_INPUT', 'give id or customID');
  return items.find((x) => (args.id ? x.id === args.id : x.customId === args.customID)) ?? null;
}

function byTags<T extends { id: string }>(
  ctx: GqlContext,
  items: T[],
  tagIDs: readonly string[],
  useOR: boolean | null | undefined,
): T[] {
  const tags = tagIDs.map((id) => ctx.assets.tag(ctx.principal.orgId, id));
  return items.filter((x) => {
    const has = tags.map((t) => t?.spaceIds.has(x.id) ?? false);
    return useOR ? has.some(Boolean) : has.every(Boolean);
  });
}

const queries = {
  sites: (_: unknown, __: unknown, ctx: GqlContext) => (
    need(ctx, 'read:spaces'),
    wrap(ctx.assets.list('site', ctx.principal.orgId))
  ),
  site: (_: unknown, a: { id?: string; customID?: string }, ctx: GqlContext) => (
    need(ctx, 'read:spaces'),
    byCustom(ctx.assets.list('site', ctx.principal.orgId), a)
  ),
  buildings: (_: unknown, __: unknown, ctx: GqlContext) => (
    need(ctx, 'read:spaces'),
    wrap(ctx.assets.list('building', ctx.principal.orgId))
  ),
  building: (_: unknown, a: { id?: string; customID?: string }, ctx: GqlContext) => (
    need(ctx, 'read:spaces'),
    byCustom(ctx.assets.list('building', ctx.principal.orgId), a)
  ),
  floors: (_: unknown, a: { ids?: string[] }, ctx: GqlContext) => (
    need(ctx, 'read:spaces'),
    wrap(byIds(ctx.assets.list('floor', ctx.principal.orgId), a.ids))
  ),
  floor: (_: unknown, a: { id?: string; customID?: string }, ctx: GqlContext) => (
    need(ctx, 'read:spaces'),
    byCustom(ctx.assets.list('floor', ctx.principal.orgId), a)
  ),
  floorsByTag: (_: unknown, a: { tagIDs: string[]; useOR?: boolean }, ctx: GqlContext) => (
    need(ctx, 'read:spaces'),
    wrap(byTags(ctx, ctx.assets.list('floor', ctx.principal.orgId), a.tagIDs, a.useOR))
  ),
  rooms: (_: unknown, a: { ids?: string[] }, ctx: GqlContext) => (
    need(ctx, 'read:rooms'),
    wrap(byIds(ctx.assets.list('room', ctx.principal.orgId), a.ids))
  ),
  room: (_: unknown, a: { id?: string; customID?: string }, ctx: GqlContext) => (
    need(ctx, 'read:rooms'),
    byCustom(ctx.assets.list('room', ctx.principal.orgId), a)
  ),
  roomsByTag: (_: unknown, a: { tagIDs: string[]; useOR?: boolean }, ctx: GqlContext) => (
    need(ctx, 'read:rooms'),
    wrap(byTags(ctx, ctx.assets.list('room', ctx.principal.orgId), a.tagIDs, a.useOR))
  ),
  zones: (_: unknown, a: { ids?: string[] }, ctx: GqlContext) => (
    need(ctx, 'read:spaces'),
    wrap(byIds(ctx.assets.list('zone', ctx.principal.orgId), a.ids))
  ),
  zone: (_: unknown, a: { id?: string; customID?: string }, ctx: GqlContext) => (
    need(ctx, 'read:spaces'),
    byCustom(ctx.assets.list('zone', ctx.principal.orgId), a)
  ),
  zonesByTag: (_: unknown, a: { tagIDs: string[]; useOR?: boolean }, ctx: GqlContext) => (
    need(ctx, 'read:spaces'),
    wrap(byTags(ctx, ctx.assets.list('zone', ctx.principal.orgId), a.tagIDs, a.useOR))
  ),
  // returnPlaceholders: the reference lists hives reserved but not yet installed; occusim has none.
  hives: (_: unknown, a: { ids?: string[] | null; serial_numbers?: string[] | null }, ctx: GqlContext) => {
    need(ctx, 'read:hives');
    const all = byIds(ctx.assets.list('hive', ctx.principal.orgId), a.ids);
    return wrap(a.serial_numbers ? all.filter((h) => a.serial_numbers?.includes(h.serial)) : all);
  },
  sensors: (_: unknown, a: SensorArgs, ctx: GqlContext, info?: GraphQLResolveInfo) => {
    need(ctx, 'read:sensors');
    const views = sensorViews(ctx, filterSensors(ctx, byIds(ctx.assets.list('sensor', ctx.principal.orgId), a.ids), a));
    return afterSensorStatus(ctx, info, views, () => wrap(views));
  },
  tags: (_: unknown, a: { ids?: string[] }, ctx: GqlContext) => {
    need(ctx, 'read:spaces');
    const all = [...ctx.assets.tags.values()].filter((t) => t.orgId === ctx.principal.orgId);
    return a.ids ? all.filter((t) => a.ids?.includes(t.id)) : all;
  },
};

interface SensorArgs {
  ids?: string[] | null;
  mac_addresses?: string[] | null;
  floor_ids?: string[] | null;
  room_ids?: string[] | null;
  hive_ids?: string[] | null;
  hive_serials?: string[] | null;
}

/** The `sensors` filters, all of them that are given (an omitted or null filter selects all). */
function filterSensors(ctx: GqlContext, sensors: Sensor[], a: SensorArgs): Sensor[] {
  const macs = a.mac_addresses?.map((m) => m.toLowerCase());
  const hiveIds = a.hive_serials
    ? new Set(
        ctx.assets
          .list('hive', ctx.principal.orgId)
          .filter((h) => a.hive_serials?.includes(h.serial))
          .map((h) => h.id),
      )
    : null;
  return sensors.filter(
    (s) =>
      (!macs || macs.includes(s.mac)) &&
      (!a.floor_ids || a.floor_ids.includes(s.floorId)) &&
      (!a.room_ids || (s.roomId !== null && a.room_ids.includes(s.roomId))) &&
      (!a.hive_ids || a.hive_ids.includes(s.hiveId)) &&
      (!hiveIds || hiveIds.has(s.hiveId)),
  );
}

const org = (_: unknown, __: unknown, ctx: GqlContext): string => ctx.principal.orgId;

const tagFields = {
  organization_id: org,
  rooms: (t: { spaceIds: Set<string> }, _: unknown, ctx: GqlContext) =>
    present([...t.spaceIds].map((id) => ctx.assets.get('room', ctx.principal.orgId, id))),
  zones: (t: { spaceIds: Set<string> }, _: unknown, ctx: GqlContext) =>
    present([...t.spaceIds].map((id) => ctx.assets.get('zone', ctx.principal.orgId, id))),
  floors: (t: { spaceIds: Set<string> }, _: unknown, ctx: GqlContext) =>
    present([...t.spaceIds].map((id) => ctx.assets.get('floor', ctx.principal.orgId, id))),
};

const floorOf = (x: { floorId: string }, _: unknown, ctx: GqlContext): Floor | null =>
  ctx.assets.get('floor', ctx.principal.orgId, x.floorId) ?? null;
const roomOf = (x: { roomId: string | null }, _: unknown, ctx: GqlContext): Room | null =>
  x.roomId ? (ctx.assets.get('room', ctx.principal.orgId, x.roomId) ?? null) : null;
const polygonArea = (poly: Room['polygon']) => ({ value: Math.round(area(poly) * 100) / 100, unit: 'm2' });
const tagsOf = (x: { id: string }, _: unknown, ctx: GqlContext) => ctx.assets.tagsOf(ctx.principal.orgId, x.id);

const types = {
  Site: {
    siteNumber: (s: Site) => s.siteNumber,
    customID: (s: Site) => s.customId,
    org_id: org,
    buildings: (s: Site, _: unknown, ctx: GqlContext) =>
      present(s.buildingIds.map((id) => ctx.assets.get('building', ctx.principal.orgId, id))),
  },
  Building: {
    site_id: (b: Building) => b.siteId,
    building_number: (b: Building) => b.buildingNumber,
    buildingNumber: (b: Building) => b.buildingNumber,
    customID: (b: Building) => b.customId,
    floors: (b: Building, _: unknown, ctx: GqlContext) =>
      present(b.floorIds.map((id) => ctx.assets.get('floor', ctx.principal.orgId, id))),
    site: (b: Building, _: unknown, ctx: GqlContext) => ctx.assets.get('site', ctx.principal.orgId, b.siteId),
  },
  Floor: {
    floor_id: (f: Floor) => f.id,
    client_id: org,
    building_id: (f: Floor) => f.buildingId,
    floorNumber: (f: Floor) => f.level,
    timezone: (f: Floor, _: unknown, ctx: GqlContext) => ctx.assets.timezoneOf(f.id),
    installation_date: () => null,
    customID: (f: Floor) => f.customId,
    capacity: () => null,
    area: (f: Floor) => polygonArea(f.outline),
    rooms: (f: Floor, _: unknown, ctx: GqlContext) =>
      present(f.roomIds.map((id) => ctx.assets.get('room', ctx.principal.orgId, id))),
    zones: (f: Floor, _: unknown, ctx: GqlContext) =>
      present(f.zoneIds.map((id) => ctx.assets.get('zone', ctx.principal.orgId, id))),
    sensors: (f: Floor, _: unknown, ctx: GqlContext, info?: GraphQLResolveInfo) => {
      const views = sensorViews(
        ctx,
        present(f.sensorIds.map((id) => ctx.assets.get('sensor', ctx.principal.orgId, id))),
      );
      return afterSensorStatus(ctx, info, views, () => views);
    },
    hives: (f: Floor, _: unknown, ctx: GqlContext) =>
      present(f.hiveIds.map((id) => ctx.assets.get('hive', ctx.principal.orgId, id))),
    tags: tagsOf,
    building: (f: Floor, _: unknown, ctx: GqlContext) =>
      ctx.assets.get('building', ctx.principal.orgId, f.buildingId) ?? null,
    // Every floor of a catalogue is installed and in service: occusim models no commissioning.
    installation_status: () => 'installed',
    service_status: () => 'active',
    // One plan per floor: its outline (the catalogue keeps no drawings, so no url).
    floor_plans: (f: Floor) => [{ floor_plan_id: `${f.id}_plan`, name: f.name, url: null, coordinates: f.outline }],
    last_battery_change_date: async (f: Floor, _: unknown, ctx: GqlContext) => (await floorBatteryDates(ctx, f)).last,
    next_battery_change_date: async (f: Floor, _: unknown, ctx: GqlContext) => (await floorBatteryDates(ctx, f)).next,
  },
  Room: {
    room_id: (r: Room) => r.id,
    client_id: org,
    floor_id: (r: Room) => r.floorId,
    floorID: (r: Room) => r.floorId,
    floor: floorOf,
    roomType: () => null,
    customID: (r: Room) => r.customId,
    area: (r: Room) => polygonArea(r.polygon),
    coordinates: (r: Room) => r.polygon,
    note: (r: Room) => r.note ?? null,
    rotation: (r: Room) => r.rotationDeg ?? 0,
    // Not modelled: no metadata, no PIR zeroing (the sensors are thermopiles only).
    metadata: () => null,
    pir_zero_enable: () => null,
    pir_zero_threshold: () => null,
    pir_zero_window: () => null,
    sensors: (r: Room, _: unknown, ctx: GqlContext) => sensorsWhere(ctx, r.floorId, (s) => s.roomId === r.id),
    tags: tagsOf,
  },
  Zone: {
    zone_id: (z: Zone) => z.id,
    client_id: org,
    floor_id: (z: Zone) => z.floorId,
    floorID: (z: Zone) => z.floorId,
    room_id: (z: Zone) => z.roomId,
    roomID: (z: Zone) => z.roomId,
    floor: floorOf,
    room: roomOf,
    customID: (z: Zone) => z.customId,
    capacity: () => null,
    area: (z: Zone) => polygonArea(z.polygon),
    coordinates: (z: Zone) => z.polygon,
    rotation: (z: Zone) => z.rotationDeg ?? 0,
    note: (z: Zone) => z.note ?? null,
    metadata: () => null,
    sensors: (z: Zone, _: unknown, ctx: GqlContext) => sensorsWhere(ctx, z.floorId, (s) => s.zoneId === z.id),
    tags: tagsOf,
  },
  Sensor: sensorFields(),
  Hive: {
    hive_id: (h: Hive) => h.id,
    client_id: org,
    serialNumber: (h: Hive) => h.serial,
    serial_number: (h: Hive) => h.serial,
    floor_id: (h: Hive) => h.floorId,
    floorID: (h: Hive) => h.floorId,
    room_id: (h: Hive) => h.roomId,
    roomID: (h: Hive) => h.roomId,
    floor: floorOf,
    isOnline: hiveFlag('online', true),
    isStreaming: hiveFlag('streaming', true),
    hiveVersion: (h: Hive) => h.firmwareVersion,
    hiveType: (h: Hive) => h.backhaul,
    lastHeartbeat: hiveFlag('lastHeartbeat', null),
    netPathStability: () => null,
    coordinates: (h: Hive) => h.position,
    installed: () => true,
    note: () => null,
  },
  Tag: tagFields,
  // The association mutations answer the tag itself: `tag` is it, and its fields resolve as a Tag's.
  TagAssociationPayload: { tag: <T>(t: T): T => t, ...tagFields },
};

/**
 * A device status field: read from the store (batched per request, status.ts) when the API has
 * device status, else the default (an API without a store reports every device as up).
 */
function hiveFlag<K extends keyof DeviceFlags>(k: K, fallback: DeviceFlags[K]) {
  return (h: Hive, _: unknown, ctx: GqlContext): DeviceFlags[K] | Promise<DeviceFlags[K]> =>
    ctx.status ? ctx.status.hive(h.id).then((f) => f[k]) : fallback;
}

function sensorFlag<K extends keyof DeviceFlags>(k: K, fallback: DeviceFlags[K]) {
  return (s: Sensor, _: unknown, ctx: GqlContext): DeviceFlags[K] | Promise<DeviceFlags[K]> => {
    if (!ctx.status) return fallback;
    // Read already when the list was preloaded (status-preload.ts): no promise per field.
    const now = ctx.status.sensorEntryNow(s.id);
    return now ? now.flags[k] : ctx.status.sensorEntry(s.id).then((e) => e.flags[k]);
  };
}

function sensorsWhere(ctx: GqlContext, floorId: string, pred: (s: Sensor) => boolean): SensorView[] {
  const floor = ctx.assets.get('floor', ctx.principal.orgId, floorId);
  return floor
    ? sensorViews(
        ctx,
        present(floor.sensorIds.map((id) => ctx.assets.get('sensor', ctx.principal.orgId, id))).filter(pred),
      )
    : [];
}

/** Sensor fields computed on demand; the renamed scalars are plain properties of `SensorView` (views.ts). */
function sensorFields() {
  return {
    ...sensorExtras,
    floor: floorOf,
    room: roomOf,
    door_line: (s: Sensor, _: unknown, ctx: GqlContext) =>
      s.doorId ? (ctx.assets.doors.get(s.doorId)?.item.line ?? null) : null,
    is_entrance: (s: Sensor, _: unknown, ctx: GqlContext) =>
      s.doorId ? (ctx.assets.doors.get(s.doorId)?.item.entrance ?? false) : false,
    is_online: sensorFlag('online', true),
    is_streaming: sensorFlag('streaming', true),
    last_heartbeat: sensorFlag('lastHeartbeat', null),
    installation_status: () => 'installed',
  };
}

/** `metadata`: any JSON value, passed through as is. */
const JSON_SCALAR = new GraphQLScalarType({
  name: 'JSON',
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral: (ast) => valueFromASTUntyped(ast),
});

export const resolvers = {
  Query: { ...queries, ...webhookQueries },
  Mutation: { ...mutationResolvers, ...createMutations, ...webhookMutations },
  JSON: JSON_SCALAR,
  ...types,
};
