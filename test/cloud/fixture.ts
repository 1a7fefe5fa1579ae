import { footprintTransform } from '../../src/core/footprint.js';
import type { Vec2 } from '../../src/core/geometry.js';
import type { WireDetectionPacket, WireTrafficPacket } from '../../src/proto/messages.js';
import type { HiveModel, ScenarioModel, SensorModel } from '../../src/scenario/model.js';

/**
 * A tiny hand-built scenario for the cloud tests: one 20 m × 10 m floor split into room A
 * (x 0–10) and room B (x 10–20); zone A1 is the right half of room A (x 5–10). Presence
 * sensors PA (centre 7,5) and PB (centre 12,5) at 3 m with a 90° field of view see 6 m
 * squares, x 4–10 and x 9–15: they overlap on the strip x 9–10 inside room A. A traffic
 * sensor counts the door between the rooms. One hive carries all three.
 */
export const T0 = Date.UTC(2026, 2, 2, 7, 0, 0);
export const FLOOR = 'space_f1';
export const ROOM_A = 'room_a';
export const ROOM_B = 'room_b';
export const ZONE_A1 = 'zone_a1';
export const HIVE_SERIAL = 'HV0000000001';

const rect = (x0: number, y0: number, x1: number, y1: number): Vec2[] => [
  [x0, y0],
  [x1, y0],
  [x1, y1],
  [x0, y1],
];

function sensor(id: string, mac: string, over: Partial<SensorModel>): SensorModel {
  return {
    id,
    name: id,
    mac,
    floorId: FLOOR,
    roomId: ROOM_A,
    zoneId: null,
    doorId: null,
    hiveId: 'hive_1',
    mode: 'presence',
    model: 'tp-32x24',
    center: [0, 0],
    height: 3,
    orientationDeg: 0,
    fovDeg: 90,
    sensitivity: 3,
    reportIntervalMs: 1000,
    src: `/sensors/${id}`,
    ...over,
  };
}

export const SENSOR_PA = sensor('sensor_pa', '00-17-0d-00-00-00-00-0a', { roomId: ROOM_A, center: [7, 5] });
export const SENSOR_PB = sensor('sensor_pb', '00-17-0d-00-00-00-00-0b', { roomId: ROOM_B, center: [12, 5] });
export const SENSOR_T = sensor('sensor_t', '00-17-0d-00-00-00-00-0c', {
  roomId: ROOM_B,
  doorId: 'door_ab',
  mode: 'traffic',
  center: [10, 5],
});

export const HIVE: HiveModel = {
  id: 'hive_1',
  name: 'hive 1',
  serial: HIVE_SERIAL,
  floorId: FLOOR,
  roomId: null,
  position: [10, 5],
  backhaul: 'ethernet',
  password: 'secret',
  firmwareVersion: '1.0.0',
  src: '/hives/0',
};

export function tinyModel(): ScenarioModel {
  return {
    version: 1,
    name: 'tiny',
    file: '<inline>',
    seed: 1,
    startMs: T0,
    durationMs: 3_600_000,
    fidelity: 'model',
    tickMs: 1000,
    batchIntervalMs: 5000,
    noise: { presence: { miss: 0, falsePositive: 0, jitterM: 0 }, traffic: { miss: 0, crowdMiss: 0 } },
    org: { id: 'org_1', name: 'Org' },
    sites: [
      {
        id: 'site_1',
        name: 'Site',
        customId: null,
        siteNumber: null,
        timezone: 'Europe/Berlin',
        buildingIds: ['building_1'],
        src: '/sites/0',
      },
    ],
    buildings: [
      {
        id: 'building_1',
        name: 'B',
        siteId: 'site_1',
        customId: null,
        buildingNumber: null,
        capacity: null,
        address: null,
        floorIds: [FLOOR],
        src: '/b/0',
      },
    ],
    floors: [
      {
        id: FLOOR,
        name: 'F1',
        siteId: 'site_1',
        buildingId: 'building_1',
        level: 1,
        customId: null,
        outline: rect(0, 0, 20, 10),
        roomIds: [ROOM_A, ROOM_B],
        zoneIds: [ZONE_A1],
        doorIds: ['door_ab'],
        hiveIds: ['hive_1'],
        sensorIds: [SENSOR_PA.id, SENSOR_PB.id, SENSOR_T.id],
        src: '/floors/0',
      },
    ],
    rooms: [
      {
        id: ROOM_A,
        name: 'A',
        floorId: FLOOR,
        customId: null,
        capacity: null,
        polygon: rect(0, 0, 10, 10),
        src: '/rooms/0',
      },
      {
        id: ROOM_B,
        name: 'B',
        floorId: FLOOR,
        customId: null,
        capacity: null,
        polygon: rect(10, 0, 20, 10),
        src: '/rooms/1',
      },
    ],
    zones: [
      {
        id: ZONE_A1,
        name: 'A1',
        floorId: FLOOR,
        roomId: ROOM_A,
        customId: null,
        polygon: rect(5, 0, 10, 10),
        src: '/zones/0',
      },
    ],
    doors: [
      {
        id: 'door_ab',
        name: 'AB',
        floorId: FLOOR,
        line: [
          [10, 4],
          [10, 6],
        ],
        fromRoomId: ROOM_A,
        toRoomId: ROOM_B,
        entrance: false,
        src: '/doors/0',
      },
    ],
    hives: [HIVE],
    sensors: [SENSOR_PA, SENSOR_PB, SENSOR_T],
    populations: [],
    meetings: [],
    users: [],
    clients: [],
  };
}

/** A presence packet reporting people at the given world positions (mapped to the sensor's local frame). */
export function presenceAt(s: SensorModel, sensedAtMs: number, world: readonly Vec2[]): WireDetectionPacket {
  const t = footprintTransform(s);
  return { kind: 'presence', sensorMac: s.mac, sensedAtMs, detections: world.map(([x, y]) => t.toLocal(x, y)) };
}

export function trafficAt(s: SensorModel, sensedAtMs: number, inCount: number, outCount: number): WireTrafficPacket {
  return { kind: 'traffic', sensorMac: s.mac, sensedAtMs, intervalMs: 10_000, in: inCount, out: outCount };
}
