import { randomBytes } from 'node:crypto';
import { selfIntersections, type Vec2 } from '../../core/geometry.js';
import { MAC_PATTERN, macFor } from '../../core/ids.js';
import { isValidSerial } from '../../core/topics.js';
import type { Floor } from '../../assets/model.js';
import { identityKey, type DeviceIdentity } from '../../assets/catalogue.js';
import { SENSOR_ARRAYS as SENSOR_MODELS, type SensorArrayName as SensorModelName } from '../../core/sensor-arrays.js';
import { nameProblem } from '../text-fields.js';
import { gqlError, mustGet, need, type GqlContext } from './context.js';
import { sensorViews } from './views.js';

/**
 * Create mutations (their names are not published by the platform: `createFloors`,
 * `createRooms`, `createZones`, `createHives`, `createSensors`, each taking a list and
 * returning the created records; documented in docs/api.md). Each list is validated whole
 * before anything is created.
 */
const newId = (prefix: string): string => `${prefix}_${randomBytes(8).toString('hex')}`;

function polygon(coords: number[][], field: string): Vec2[] {
  if (coords.length < 3) throw gqlError('BAD_USER_INPUT', `${field}: a polygon needs at least 3 points`);
  const poly = coords.map((p, i) => {
    if (p.length !== 2 || !p.every(Number.isFinite))
      throw gqlError('BAD_USER_INPUT', `${field}[${i}]: a point is [x, y] in metres`);
    return [p[0], p[1]] as Vec2;
  });
  if (selfIntersections(poly).length > 0) throw gqlError('BAD_USER_INPUT', `${field}: the polygon intersects itself`);
  return poly;
}

function floorOf(ctx: GqlContext, id: string): Floor {
  return mustGet(ctx, 'floor', id);
}

/** A name as text-fields.ts allows it (no control or bidi characters, bounded), trimmed. */
function named(name: string, field = 'name'): string {
  const problem = nameProblem(name, field);
  if (problem !== null) throw gqlError('BAD_USER_INPUT', problem);
  return name.trim();
}

/**
 * The sensor's room: one of the caller's organisation on the sensor's floor. An unknown room,
 * another organisation's, or one on another floor is NOT_FOUND, as for hives: the id was kept
 * as given, so a sensor could point at a room its reporting and events would never reach.
 */
function roomOnFloor(ctx: GqlContext, roomId: string | null | undefined, floor: Floor, field: string): string | null {
  if (roomId === null || roomId === undefined) return null;
  const room = ctx.assets.get('room', ctx.principal.orgId, roomId);
  if (!room || room.floorId !== floor.id)
    throw gqlError('NOT_FOUND', `${field}: room ${roomId} does not exist on floor ${floor.id}`);
  return room.id;
}

/**
 * Claims for a batch's device identities, checked whole before anything is created: a serial
 * or MAC held by any organisation, or named twice in the batch, is CONFLICT with one message
 * whoever holds it — the answer must not tell which serials exist in other organisations.
 */
function identityClaims(ctx: GqlContext) {
  const claimed = new Set<string>();
  const free = (identity: DeviceIdentity): boolean =>
    !claimed.has(identityKey(identity)) && ctx.assets.identityFree(identity);
  return {
    free,
    claim(identity: DeviceIdentity, field: string): void {
      if (!free(identity))
        throw gqlError(
          'CONFLICT',
          `${field}: ${identity.kind === 'hive' ? 'this serial number' : 'this MAC address'} is already registered`,
        );
      claimed.add(identityKey(identity));
    },
  };
}

/** A MAC for a sensor created without one: derived from its id, re-derived with a salt while taken (24 bits of hash collide at fleet size). */
function derivedMac(free: (identity: DeviceIdentity) => boolean, id: string): string {
  let mac = macFor('api', id);
  for (let salt = 1; !free({ kind: 'sensor', mac }); salt++) mac = macFor('api', id, `#${salt}`);
  return mac;
}

export interface FloorInput {
  building_id: string;
  name: string;
  floorNumber?: number | null;
  customID?: string | null;
  outline?: number[][] | null;
}
export interface RoomInput {
  floor_id: string;
  name: string;
  coordinates: number[][];
  customID?: string | null;
  capacityMax?: number | null;
  capacityMid?: number | null;
}
export interface ZoneInput {
  floor_id: string;
  room_id?: string | null;
  name: string;
  coordinates: number[][];
  customID?: string | null;
}
export interface HiveInput {
  floor_id: string;
  name: string;
  serial_number: string;
  coordinates?: number[] | null;
  hiveType?: string | null;
}
export interface SensorInput {
  floor_id: string;
  hive_id: string;
  name: string;
  mode: string;
  model?: string | null;
  room_id?: string | null;
  center: number[];
  height?: number | null;
  orientation?: number | null;
  field_of_view?: number | null;
  sensitivity?: number | null;
  mac_address?: string | null;
}

export const createMutations = {
  createFloors(_: unknown, { input }: { input: FloorInput[] }, ctx: GqlContext) {
    need(ctx, 'write:spaces');
    const plans = input.map((f, i) => {
      const b = mustGet(ctx, 'building', f.building_id);
      const outline = f.outline
        ? polygon(f.outline, `input[${i}].outline`)
        : ([
            [0, 0],
            [0, 0],
            [0, 0],
          ] as Vec2[]);
      return {
        b,
        floor: {
          id: newId('space'),
          name: named(f.name),
          siteId: b.siteId,
          buildingId: b.id,
          level: f.floorNumber ?? 0,
          customId: f.customID ?? null,
          outline,
          roomIds: [],
          zoneIds: [],
          doorIds: [],
          hiveIds: [],
          sensorIds: [],
        } as Floor,
      };
    });
    return plans.map(({ floor }) => {
      return ctx.assets.add('floor', ctx.principal.orgId, floor);
    });
  },

  createRooms(_: unknown, { input }: { input: RoomInput[] }, ctx: GqlContext) {
    need(ctx, 'write:rooms');
    const plans = input.map((r, i) => {
      const floor = floorOf(ctx, r.floor_id);
      const cap = r.capacityMax != null ? { max: r.capacityMax, mid: r.capacityMid ?? r.capacityMax } : null;
      return {
        floor,
        room: {
          id: newId('room'),
          name: named(r.name),
          floorId: floor.id,
          customId: r.customID ?? null,
          capacity: cap,
          polygon: polygon(r.coordinates, `input[${i}].coordinates`),
        },
      };
    });
    return plans.map(({ room }) => {
      return ctx.assets.add('room', ctx.principal.orgId, room);
    });
  },

  createZones(_: unknown, { input }: { input: ZoneInput[] }, ctx: GqlContext) {
    need(ctx, 'write:rooms');
    const plans = input.map((z, i) => {
      const floor = floorOf(ctx, z.floor_id);
      const roomId = roomOnFloor(ctx, z.room_id, floor, `input[${i}].room_id`);
      return {
        floor,
        zone: {
          id: newId('zone'),
          name: named(z.name),
          floorId: floor.id,
          roomId,
          customId: z.customID ?? null,
          polygon: polygon(z.coordinates, `input[${i}].coordinates`),
        },
      };
    });
    return plans.map(({ zone }) => {
      return ctx.assets.add('zone', ctx.principal.orgId, zone);
    });
  },

  createHives(_: unknown, { input }: { input: HiveInput[] }, ctx: GqlContext) {
    need(ctx, 'write:hives');
    const claims = identityClaims(ctx);
    const plans = input.map((h, i) => {
      const floor = floorOf(ctx, h.floor_id);
      if (!isValidSerial(h.serial_number))
        throw gqlError('BAD_USER_INPUT', `input[${i}].serial_number must be 1-64 of [A-Za-z0-9_-]`);
      claims.claim({ kind: 'hive', serial: h.serial_number }, `input[${i}].serial_number`);
      const backhaul = h.hiveType ?? 'wifi';
      if (backhaul !== 'wifi' && backhaul !== 'cellular' && backhaul !== 'ethernet')
        throw gqlError('BAD_USER_INPUT', 'hiveType must be wifi, cellular or ethernet');
      const position = (h.coordinates ?? [0, 0]) as unknown as Vec2;
      return {
        floor,
        hive: {
          id: newId('hive'),
          name: named(h.name),
          serial: h.serial_number,
          floorId: floor.id,
          roomId: null,
          position,
          backhaul,
          password: randomBytes(24).toString('base64url'),
          firmwareVersion: '1.4.2',
        } as const,
      };
    });
    return plans.map(({ hive }) => {
      return ctx.assets.add('hive', ctx.principal.orgId, { ...hive, position: [hive.position[0], hive.position[1]] });
    });
  },

  createSensors(_: unknown, { input }: { input: SensorInput[] }, ctx: GqlContext) {
    need(ctx, 'write:sensors');
    const claims = identityClaims(ctx);
    const plans = input.map((s, i) => {
      const floor = floorOf(ctx, s.floor_id);
      const hive = ctx.assets.get('hive', ctx.principal.orgId, s.hive_id);
      if (!hive || hive.floorId !== floor.id)
        throw gqlError('NOT_FOUND', `hive ${s.hive_id} does not exist on floor ${floor.id}`);
      if (s.mode !== 'presence' && s.mode !== 'traffic')
        throw gqlError('BAD_USER_INPUT', `input[${i}].mode must be presence or traffic`);
      const model = (s.model ?? 'tp-32x32') as SensorModelName;
      if (!(model in SENSOR_MODELS))
        throw gqlError('BAD_USER_INPUT', `input[${i}].model must be one of ${Object.keys(SENSOR_MODELS).join(', ')}`);
      if (s.center.length !== 2) throw gqlError('BAD_USER_INPUT', `input[${i}].center is [x, y] in metres`);
      const height = s.height ?? 3;
      if (height < 2.4 || height > 4.6) throw gqlError('BAD_USER_INPUT', `input[${i}].height must be within 2.4–4.6 m`);
      const roomId = roomOnFloor(ctx, s.room_id, floor, `input[${i}].room_id`);
      const id = newId('sensor');
      const mac =
        s.mac_address === null || s.mac_address === undefined
          ? derivedMac(claims.free, id)
          : s.mac_address.toLowerCase();
      if (!MAC_PATTERN.test(mac))
        throw gqlError(
          'BAD_USER_INPUT',
          `input[${i}].mac_address must be 8 hex bytes joined by -, e.g. 00-17-0d-00-00-00-00-01`,
        );
      claims.claim({ kind: 'sensor', mac }, `input[${i}].mac_address`);
      return {
        floor,
        sensor: {
          id,
          name: named(s.name, `input[${i}].name`),
          mac,
          floorId: floor.id,
          roomId,
          zoneId: null,
          doorId: null,
          hiveId: hive.id,
          mode: s.mode,
          model,
          center: [s.center[0] ?? 0, s.center[1] ?? 0] as Vec2,
          height,
          orientationDeg: s.orientation ?? 0,
          fovDeg: s.field_of_view ?? 60,
          sensitivity: s.sensitivity ?? 3,
          reportIntervalMs: s.mode === 'presence' ? 1000 : 10_000,
        } as const,
      };
    });
    return sensorViews(
      ctx,
      plans.map(({ sensor }) => {
        return ctx.assets.add('sensor', ctx.principal.orgId, { ...sensor });
      }),
    );
  },
};
