import type { Polygon, Vec2 } from '../core/geometry.js';
import type { SensorArrayName } from '../core/sensor-arrays.js';
import type { Expectation } from './expectations.js';
import type { WebhookFaultsModel } from './webhook-faults-schema.js';
import type { WebhookStormModel } from './webhook-storm-schema.js';
import type { RampStep } from './ramp.js';

/**
 * The expanded scenario: what every stage of the data path reads. Produced from a scenario
 * file by `loadScenario` (templates expanded, defaults applied, references resolved to ids,
 * everything validated; see `loadScenarioFile` and friends in load.ts). Plain data, so it can cross a worker boundary.
 *
 * `src` on an entity is the JSON pointer of the scenario-file node it came from (after
 * template expansion, the node of the template use), so later checks can name file:line.
 */
export interface ScenarioModel {
  version: 1;
  name: string;
  /** Absolute path of the file, or '<inline>' for objects passed in directly. */
  file: string;
  seed: number;
  /** Epoch ms (UTC) of the first simulated instant. */
  startMs: number;
  durationMs: number;
  fidelity: Fidelity;
  /** World step: people move and sensors sample on this grid. */
  tickMs: number;
  /** Hives publish an uplink batch every this many ms. */
  batchIntervalMs: number;
  noise: NoiseModel;
  /** The organisation; in a file of several (`organizations:`), the first. */
  org: OrgModel;
  /**
   * Present when the file declares several organisations: which sites, users and clients
   * each holds. Absent: `org` holds every site, user and client. The lists below always hold
   * everything, so the simulator sees one world whoever owns it.
   */
  organisations?: OrganisationModel[];
  sites: SiteModel[];
  buildings: BuildingModel[];
  floors: FloorModel[];
  rooms: RoomModel[];
  zones: ZoneModel[];
  doors: DoorModel[];
  hives: HiveModel[];
  sensors: SensorModel[];
  populations: PopulationModel[];
  meetings: MeetingModel[];
  users: UserModel[];
  clients: ClientModel[];
  /** Thermal environment for `--fidelity frame` (absent: the defaults of docs/edge.md). */
  thermal?: ThermalModel;
  /** Mesh radio and hive parameters; the loader fills defaults (absent in hand-built models: defaults apply). */
  network?: NetworkModel;
  /** Fault timeline, ordered by start time. */
  faults?: FaultModel[];
  /** Share of the hives online over time (`ramp:` or `--ramp`; ramp.ts); absent: all online from the start. */
  ramp?: RampStep[];
  /** The ramp's seeded choice over the whole fleet, hive id → ms after the start (ramp.ts `rampSchedule`; set by the run before hives are shared out). */
  rampSchedule?: Record<string, number>;
  /** Webhook subscriptions the platform creates at its first start (docs/webhooks.md). */
  webhooks?: WebhookModel[];
  /** Addresses (CIDR) webhooks may reach although loopback or private (tests, a local receiver). */
  webhookAllow?: string[];
  /** Thresholds checked against the run's report when it ends (`expect:`; expectations.ts). */
  expect?: Expectation[];
}

/**
 * A `webhooks:` entry as the file gives it: the shape is checked here, the meaning (event
 * type names, the URL against the address policy, the secret) by the platform's webhook module.
 */
export interface WebhookModel {
  name: string;
  url: string;
  eventTypes: string[];
  filters: Record<string, string[]> | null;
  secret: string | null;
  sendOnValueChange: boolean;
  httpTimeoutS: number | null;
  /** Requests in flight to the endpoint (1..64); absent: the platform's default (`--webhook-concurrency`, 16). */
  concurrency?: number;
  /** Delivery faults on purpose (docs/load-testing.md); absent: `--webhook-faults`, else none. */
  faults?: WebhookFaultsModel;
  /** Event-storm mode (docs/load-testing.md, "Event storms"); absent: `--webhook-storm`, else none. */
  storm?: WebhookStormModel;
  /** JSON pointer of the entry in the file (located errors). */
  src: string;
}

/** Ambient, HVAC and static warm objects seen by thermal frames (docs/edge.md). */
export interface ThermalModel {
  /** Room air temperature, °C. */
  ambientC: number;
  /** HVAC cycle: ambient swings ± this many kelvin … */
  hvacAmplitudeK: number;
  /** … over this period, ms. */
  hvacPeriodMs: number;
  /** Static warm objects (radiators, laptops, coffee machines). */
  objects: WarmObjectModel[];
}

export interface WarmObjectModel {
  name: string;
  kind: 'radiator' | 'laptop' | 'coffee_machine' | 'other';
  floorId: string;
  /** Centre, metres. */
  position: Vec2;
  /** [width, depth] along the floor plan's axes, metres. */
  size: Vec2;
  /** Surface temperature seen from above, °C. */
  temperatureC: number;
  src: string;
}

export type Fidelity = 'model' | 'frame';
export type SensorMode = 'presence' | 'traffic';
export type Backhaul = 'wifi' | 'cellular' | 'ethernet';

/** Supported thermopile arrays (platform-reference §6). */
export { SENSOR_ARRAYS as SENSOR_MODELS } from '../core/sensor-arrays.js';
export type { SensorArrayName as SensorModelName } from '../core/sensor-arrays.js';

/**
 * Error model of `--fidelity model` sensors (documented in docs/sensor-model.md).
 * Probabilities are per person per sample (presence) or per crossing (traffic).
 */
export interface NoiseModel {
  presence: {
    /** Base probability that a person in the footprint is missed in one sample. */
    miss: number;
    /** Expected false detections per sensor per sample. */
    falsePositive: number;
    /** Standard deviation of position error, metres, at 3 m mounting height (scales with height). */
    jitterM: number;
  };
  traffic: {
    /** Probability that a crossing is not counted. */
    miss: number;
    /** Extra miss probability when another person crosses the same door within 1 s (side by side). */
    crowdMiss: number;
  };
}

export interface OrgModel {
  id: string;
  name: string;
}

/** One organisation of a file of several: its own sites, users and clients, by id. */
export interface OrganisationModel extends OrgModel {
  siteIds: string[];
  userIds: string[];
  clientIds: string[];
  src: string;
}

export interface SiteModel {
  id: string;
  name: string;
  customId: string | null;
  siteNumber: string | null;
  timezone: string;
  buildingIds: string[];
  src: string;
}

export interface BuildingModel {
  id: string;
  name: string;
  siteId: string;
  customId: string | null;
  buildingNumber: string | null;
  capacity: { max: number; mid: number } | null;
  address: { lines: string[]; country: string | null } | null;
  floorIds: string[];
  src: string;
}

export interface FloorModel {
  id: string; // space_…
  name: string;
  siteId: string;
  buildingId: string;
  level: number;
  customId: string | null;
  /** Outline of the floor: the given one, else the bounding box of its rooms. */
  outline: Polygon;
  roomIds: string[];
  zoneIds: string[];
  /** `calibration_points` of the floor, resolved to epoch ms. */
  calibrationPoints?: CalibrationPointModel[];
  doorIds: string[];
  hiveIds: string[];
  sensorIds: string[];
  src: string;
}

export interface RoomModel {
  id: string;
  name: string;
  floorId: string;
  customId: string | null;
  capacity: { max: number; mid: number } | null;
  polygon: Polygon;
  src: string;
  /** `calibration_points` resolved to epoch ms (calibrated traffic occupancy anchors). */
  calibrationPoints?: CalibrationPointModel[];
}

/** A known occupancy at an instant (scenario `calibration_points`). */
export interface CalibrationPointModel {
  timestampMs: number;
  occupancy: number;
}

export interface ZoneModel {
  id: string;
  name: string;
  floorId: string;
  /** The room the zone subdivides, or null for a zone of the floor. */
  roomId: string | null;
  customId: string | null;
  polygon: Polygon;
  src: string;
}

/**
 * A door: a line segment on the boundary between two rooms, or between a room and the
 * outside of the floor (an entrance). Crossing from `fromRoomId` into `toRoomId` is "in".
 */
export interface DoorModel {
  id: string;
  name: string;
  floorId: string;
  line: readonly [Vec2, Vec2];
  /** null = outside the floor (building entrance or stair core). */
  fromRoomId: string | null;
  toRoomId: string;
  entrance: boolean;
  src: string;
}

export interface HiveModel {
  id: string;
  name: string;
  serial: string;
  floorId: string;
  roomId: string | null;
  position: Vec2;
  backhaul: Backhaul;
  /** Seeded MQTT credential (username = serial). */
  password: string;
  firmwareVersion: string;
  src: string;
}

export interface SensorModel {
  id: string; // sensor_…
  name: string;
  mac: string;
  floorId: string;
  /**
   * The room the sensor is mounted in. For a traffic sensor: the room on its "in" side —
   * a crossing into this room counts as in (by default the door's `toRoomId`).
   */
  roomId: string | null;
  zoneId: string | null;
  /** Traffic mode only: the door whose line it counts. */
  doorId: string | null;
  hiveId: string;
  mode: SensorMode;
  model: SensorArrayName;
  center: Vec2;
  height: number;
  orientationDeg: number;
  fovDeg: number;
  /** 1 (least sensitive) … 5 (most). */
  sensitivity: number;
  /** Presence: a detection packet every this many ms; traffic: in/out counts per interval. */
  reportIntervalMs: number;
  /** Frames per second at `--fidelity frame`; absent: 3 (presence) or 8 (traffic). */
  fps?: number;
  src: string;
}

/** Wall-clock time of day as a normal distribution, in minutes after local midnight. */
export interface TimeOfDayDist {
  meanMin: number;
  sdMin: number;
}

export interface ActivityModel {
  /** Candidate destination rooms (one picked per trip). */
  roomIds: string[];
  /** Mean time between trips (exponential). */
  everyMs: number;
  /** Mean time spent at the destination (exponential, at least one tick). */
  dwellMs: number;
}

/** A group of people who share a schedule; the simulation creates `count` agents. */
export interface PopulationModel {
  id: string;
  name: string;
  siteId: string;
  buildingId: string;
  floorId: string;
  count: number;
  /** Rooms where members have desks (positions drawn inside them). */
  homeRoomIds: string[];
  /** Door by which members enter and leave the floor (an entrance of the floor). */
  entranceDoorIds: string[];
  arrival: TimeOfDayDist;
  departure: TimeOfDayDist;
  activities: ActivityModel[];
  src: string;
}

/** A recurring daily meeting: `attendees` present members of the floor go to the room. */
export interface MeetingModel {
  id: string;
  name: string;
  floorId: string;
  roomId: string;
  atMin: number;
  durationMs: number;
  attendees: number;
  src: string;
}

export interface UserModel {
  id: string;
  username: string;
  /** Seeded when the file gives none. */
  password: string;
  src: string;
}

export interface ClientModel {
  /** `client_<ksuid>`. */
  clientId: string;
  name: string;
  description: string;
  secret: string;
  src: string;
}

/** Mesh radio, battery and hive parameters (docs/scenario-format.md, "Network and faults"). */
export interface NetworkModel {
  mesh: {
    /** Transmit power, dBm. */
    txPowerDbm: number;
    /** Log-distance path loss: loss(d) = refLossDb + 10·exponent·log10(d / 1 m) + wallLossDb per wall. */
    pathLossExponent: number;
    refLossDb: number;
    wallLossDb: number;
    /** Receiver sensitivity, dBm: the RSSI at which half the frames get through. */
    sensitivityDbm: number;
    /** TSCH timeslot length and slotframe length in slots. */
    slotMs: number;
    slotframeSlots: number;
    /** Retransmissions per hop and parent after the first attempt. */
    maxRetries: number;
    /** Frames a node's queue holds; more are dropped and counted. */
    queueFrames: number;
    /** Battery capacity, mAh (0 = wired). */
    batteryMah: number;
    /** Sensor health report period over the mesh. */
    healthIntervalMs: number;
  };
  hive: {
    /** Store-and-forward limit of each hive, bytes of encoded batches. */
    bufferBytes: number;
    heartbeatIntervalMs: number;
    /** Retransmit an unacknowledged batch after this long (sim time). */
    ackTimeoutMs: number;
    maxBatchPackets: number;
  };
}

interface FaultBase {
  /** Epoch ms of the start and the length of the fault. */
  atMs: number;
  durationMs: number;
  src: string;
}

/** One fault of the scenario timeline (docs/scenario-format.md, "Network and faults"). */
export type FaultModel =
  | (FaultBase & { kind: 'sensor_offline'; sensorIds: string[] })
  | (FaultBase & {
      kind: 'link_degradation';
      sensorIds: string[];
      /** Extra frame loss on every mesh link from these sensors, 0..1. */ loss: number;
    })
  | (FaultBase & { kind: 'hive_reboot'; hiveIds: string[] })
  | (FaultBase & { kind: 'hive_outage'; hiveIds: string[] })
  | (FaultBase & { kind: 'broker_restart' })
  /** The hive's uplink delivers each batch it sends twice (a redelivery: same payload, same sequence number). */
  | (FaultBase & { kind: 'duplicate_batch'; hiveIds: string[] })
  /** The hive's clock is off by `offsetMs` (negative: behind): every batch it sends is stamped `sent_at_ms` = true time + offset. */
  | (FaultBase & { kind: 'clock_skew'; hiveIds: string[]; offsetMs: number })
  /** The sensors stop for good at `atMs` (`durationMs` runs to FOREVER_MS): offline to the end, never rebooting. */
  | (FaultBase & { kind: 'sensor_death'; sensorIds: string[] })
  /** The sensors' batteries run out over [atMs, atMs + durationMs) (their level falls linearly to 0), then they are dead to the end. */
  | (FaultBase & { kind: 'battery_drain'; sensorIds: string[] })
  /** The run stops at `atMs` and is resumed from its store (src/run/platform-restarts.ts); `durationMs` 0. */
  | (FaultBase & { kind: 'platform_restart' })
  /** The endpoint of the webhook named `webhook` (every webhook's when null) refuses connections over the window. */
  | (FaultBase & { kind: 'webhook_down'; webhook: string | null })
  /** The ingest's store goes away at `atMs` and is back at `atMs + durationMs` (src/platform/store-restarts.ts). */
  | (FaultBase & { kind: 'store_restart' })
  /** The run's ingest is killed at `atMs` and a successor resumes from the store (src/platform/ingest-kills.ts); `durationMs` 0. */
  | (FaultBase & { kind: 'ingest_kill' });
export type FaultKind = FaultModel['kind'];
