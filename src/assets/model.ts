import type { Polygon, Vec2 } from '../core/geometry.js';
import type { SensorArrayName } from '../core/sensor-arrays.js';

/**
 * The platform's own model of what an organisation owns (spec §2, platform-reference §2):
 * organisations, sites, buildings, floors, rooms, zones, doors, hives, sensors, tags, users
 * and API clients. The cloud's ingest tables, event metadata, the API and the store read
 * these types; a scenario file is only one way of filling a catalogue (`from-scenario.ts`),
 * GraphQL mutations are another. Plain data, so a catalogue can cross a thread boundary.
 */
export interface Organisation {
  id: string;
  name: string;
}

export interface Site {
  id: string;
  name: string;
  customId: string | null;
  siteNumber: string | null;
  /** IANA zone: local days (traffic resets, reporting windows) follow it. */
  timezone: string;
  buildingIds: string[];
}

export interface Capacity {
  max: number;
  mid: number;
}

export interface Building {
  id: string;
  name: string;
  siteId: string;
  customId: string | null;
  buildingNumber: string | null;
  capacity: Capacity | null;
  address: { lines: string[]; country: string | null } | null;
  floorIds: string[];
}

/** A known occupancy at an instant: an anchor of calibrated traffic occupancy. */
export interface CalibrationPoint {
  timestampMs: number;
  occupancy: number;
}

export interface Floor {
  id: string;
  name: string;
  siteId: string;
  buildingId: string;
  level: number;
  customId: string | null;
  outline: Polygon;
  roomIds: string[];
  zoneIds: string[];
  calibrationPoints?: CalibrationPoint[];
  doorIds: string[];
  hiveIds: string[];
  sensorIds: string[];
}

export interface Room {
  id: string;
  name: string;
  floorId: string;
  customId: string | null;
  capacity: Capacity | null;
  polygon: Polygon;
  calibrationPoints?: CalibrationPoint[];
  /** Degrees clockwise of the room's axes on the floor plan (GraphQL `rotation`); absent: 0. */
  rotationDeg?: number;
  /** Free text from whoever set the room up (GraphQL `note`). */
  note?: string | null;
}

export interface Zone {
  id: string;
  name: string;
  floorId: string;
  /** The room the zone subdivides, or null for a zone of the floor. */
  roomId: string | null;
  customId: string | null;
  polygon: Polygon;
  /** Degrees clockwise of the zone's axes on the floor plan (GraphQL `rotation`); absent: 0. */
  rotationDeg?: number;
  note?: string | null;
}

/** A door line; crossing from `fromRoomId` (null: outside the floor) into `toRoomId` is "in". */
export interface Door {
  id: string;
  name: string;
  floorId: string;
  line: readonly [Vec2, Vec2];
  fromRoomId: string | null;
  toRoomId: string;
  entrance: boolean;
}

export type Backhaul = 'wifi' | 'cellular' | 'ethernet';

export interface Hive {
  id: string;
  name: string;
  serial: string;
  floorId: string;
  roomId: string | null;
  position: Vec2;
  backhaul: Backhaul;
  /** The hive's MQTT credential (username = serial). */
  password: string;
  firmwareVersion: string;
}

export type SensorMode = 'presence' | 'traffic';

export interface Sensor {
  id: string;
  name: string;
  mac: string;
  floorId: string;
  /** Traffic sensors: the room on the "in" side of their door. */
  roomId: string | null;
  zoneId: string | null;
  doorId: string | null;
  hiveId: string;
  mode: SensorMode;
  model: SensorArrayName;
  center: Vec2;
  height: number;
  orientationDeg: number;
  fovDeg: number;
  sensitivity: number;
  reportIntervalMs: number;
  fps?: number;
}

export interface Tag {
  id: string;
  name: string;
  orgId: string;
  /** Floor, room and zone ids. */
  spaceIds: Set<string>;
}

export interface User {
  id: string;
  username: string;
  password: string;
}

export interface Client {
  clientId: string;
  name: string;
  description: string;
  secret: string;
}

/** Everything one organisation owns: the unit a catalogue is filled with. */
export interface OrganisationAssets {
  org: Organisation;
  sites: Site[];
  buildings: Building[];
  floors: Floor[];
  rooms: Room[];
  zones: Zone[];
  doors: Door[];
  hives: Hive[];
  sensors: Sensor[];
  users: User[];
  clients: Client[];
}

export type AssetKind = 'site' | 'building' | 'floor' | 'room' | 'zone' | 'hive' | 'sensor';
export const ASSET_KINDS: readonly AssetKind[] = ['site', 'building', 'floor', 'room', 'zone', 'hive', 'sensor'];

export type AssetOf<K extends AssetKind> = K extends 'site'
  ? Site
  : K extends 'building'
    ? Building
    : K extends 'floor'
      ? Floor
      : K extends 'room'
        ? Room
        : K extends 'zone'
          ? Zone
          : K extends 'hive'
            ? Hive
            : Sensor;

/** Every organisation's spaces and devices as flat lists: what ingest derives its tables from. */
export interface AssetSnapshot {
  sites: readonly Site[];
  buildings: readonly Building[];
  floors: readonly Floor[];
  rooms: readonly Room[];
  zones: readonly Zone[];
  doors: readonly Door[];
  hives: readonly Hive[];
  sensors: readonly Sensor[];
}
