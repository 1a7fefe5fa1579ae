import { segmentInsidePolygon, type Polygon, type Vec2 } from '../../src/core/geometry.js';
import type { FloorPlan } from '../../src/sim/floorplan.js';
import { legCrossing } from '../../src/sim/route.js';
import { localToEpoch } from '../../src/core/time.js';
import type { World, WorldStep } from '../../src/sim/types.js';
import type {
  DoorModel,
  MeetingModel,
  PopulationModel,
  RoomModel,
  ScenarioModel,
  ZoneModel,
} from '../../src/scenario/model.js';

/**
 * A small hand-built floor (metres). The corridor and the office are L-shaped (reflex
 * corners at (6,2) and (6,6)), so walks must turn corners instead of cutting walls.
 *
 *   y=8 ┌────────┬──────────────┬───────┐
 *       │        │    office    │kitchen│  office → kitchen: x=12, y 6.5..7.5
 *   y=6 │        ├───┐          ├───────┤
 *       │ lobby  │cor│          │       │
 *       │        │ri-│          │meeting│  lobby → corridor: x=4, y 4..5
 *   y=2 │        │dor└──────────┤       │  corridor → office: y=2, x 10..11
 *       │        │   corridor           │  corridor → meeting: x=12, y 0.5..1.5
 *   y=0 └─[entr]─┴──────────────┴───────┘  entrance (from outside): y=0, x 1.5..2.5
 *       x=0     x=4 x=6        x=12    x=16
 */
export const TZ = 'Europe/Berlin';
export const ROOM = {
  lobby: 'room_lobby',
  corridor: 'room_corridor',
  office: 'room_office',
  meeting: 'room_meeting',
  kitchen: 'room_kitchen',
};
export const DOOR = {
  entrance: 'door_entrance',
  lobbyCorridor: 'door_lobby_corridor',
  corridorOffice: 'door_corridor_office',
  corridorMeeting: 'door_corridor_meeting',
  officeKitchen: 'door_office_kitchen',
};
export const FLOOR = 'space_floor1';
export const ZONE = 'zone_office_west';

const rect = (x0: number, y0: number, x1: number, y1: number): Polygon => [
  [x0, y0],
  [x1, y0],
  [x1, y1],
  [x0, y1],
];

const room = (id: string, polygon: Polygon): RoomModel => ({
  id,
  name: id,
  floorId: FLOOR,
  customId: null,
  capacity: null,
  polygon,
  src: `/rooms/${id}`,
});

const door = (id: string, a: Vec2, b: Vec2, fromRoomId: string | null, toRoomId: string): DoorModel => ({
  id,
  name: id,
  floorId: FLOOR,
  line: [a, b],
  fromRoomId,
  toRoomId,
  entrance: fromRoomId === null,
  src: `/doors/${id}`,
});

export const ROOMS: RoomModel[] = [
  room(ROOM.lobby, rect(0, 0, 4, 8)),
  room(ROOM.corridor, [
    [4, 0],
    [12, 0],
    [12, 2],
    [6, 2],
    [6, 6],
    [4, 6],
  ]),
  room(ROOM.office, [
    [6, 2],
    [12, 2],
    [12, 8],
    [4, 8],
    [4, 6],
    [6, 6],
  ]),
  room(ROOM.meeting, rect(12, 0, 16, 6)),
  room(ROOM.kitchen, rect(12, 6, 16, 8)),
];

export const DOORS: DoorModel[] = [
  door(DOOR.entrance, [1.5, 0], [2.5, 0], null, ROOM.lobby),
  door(DOOR.lobbyCorridor, [4, 4], [4, 5], ROOM.lobby, ROOM.corridor),
  door(DOOR.corridorOffice, [10, 2], [11, 2], ROOM.corridor, ROOM.office),
  door(DOOR.corridorMeeting, [12, 0.5], [12, 1.5], ROOM.corridor, ROOM.meeting),
  door(DOOR.officeKitchen, [12, 6.5], [12, 7.5], ROOM.office, ROOM.kitchen),
];

export const ZONES: ZoneModel[] = [
  {
    id: ZONE,
    name: 'office west',
    floorId: FLOOR,
    roomId: ROOM.office,
    customId: null,
    polygon: rect(6, 2, 9, 8),
    src: '/zones/0',
  },
];

export function population(id: string, count: number, over: Partial<PopulationModel> = {}): PopulationModel {
  return {
    id,
    name: id,
    siteId: 'site_a',
    buildingId: 'building_a',
    floorId: FLOOR,
    count,
    homeRoomIds: [ROOM.office],
    entranceDoorIds: [DOOR.entrance],
    arrival: { meanMin: 8 * 60, sdMin: 10 },
    departure: { meanMin: 17 * 60, sdMin: 15 },
    activities: [{ roomIds: [ROOM.kitchen, ROOM.lobby], everyMs: 40 * 60_000, dwellMs: 5 * 60_000 }],
    src: `/people/${id}`,
    ...over,
  };
}

export function meeting(over: Partial<MeetingModel> = {}): MeetingModel {
  return {
    id: 'meeting_standup',
    name: 'standup',
    floorId: FLOOR,
    roomId: ROOM.meeting,
    atMin: 10 * 60,
    durationMs: 30 * 60_000,
    attendees: 4,
    src: '/meetings/0',
    ...over,
  };
}

/** The fixture scenario; start is local time in Europe/Berlin. */
export function fixtureModel(
  opts: {
    seed?: number;
    start?: string;
    durationMs?: number;
    tickMs?: number;
    populations?: PopulationModel[];
    meetings?: MeetingModel[];
  } = {},
): ScenarioModel {
  const startMs = localToEpoch(opts.start ?? '2026-03-02T07:30', TZ);
  if (startMs === null) throw new Error('bad fixture start');
  return {
    version: 1,
    name: 'sim-fixture',
    file: '<inline>',
    seed: opts.seed ?? 7,
    startMs,
    durationMs: opts.durationMs ?? 11 * 3_600_000,
    fidelity: 'model',
    tickMs: opts.tickMs ?? 1000,
    batchIntervalMs: 10_000,
    noise: { presence: { miss: 0, falsePositive: 0, jitterM: 0 }, traffic: { miss: 0, crowdMiss: 0 } },
    org: { id: 'org_a', name: 'A' },
    sites: [
      {
        id: 'site_a',
        name: 'A',
        customId: null,
        siteNumber: null,
        timezone: TZ,
        buildingIds: ['building_a'],
        src: '/sites/0',
      },
    ],
    buildings: [
      {
        id: 'building_a',
        name: 'A',
        siteId: 'site_a',
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
        name: 'Floor 1',
        siteId: 'site_a',
        buildingId: 'building_a',
        level: 1,
        customId: null,
        outline: rect(0, 0, 16, 8),
        roomIds: ROOMS.map((r) => r.id),
        zoneIds: ZONES.map((z) => z.id),
        doorIds: DOORS.map((d) => d.id),
        hiveIds: [],
        sensorIds: [],
        src: '/floors/0',
      },
    ],
    rooms: ROOMS,
    zones: ZONES,
    doors: DOORS,
    hives: [],
    sensors: [],
    populations: opts.populations ?? [population('pop_staff', 12)],
    meetings: opts.meetings ?? [],
    users: [],
    clients: [],
  };
}

/** Runs the model tick by tick as the runner does, calling `each` after every step. */
export function runWorld(model: ScenarioModel, world: World, each: (step: WorldStep) => void = () => {}): void {
  for (let t = model.startMs; t < model.startMs + model.durationMs; t += model.tickMs) each(world.step(t));
}

/**
 * Why the straight movement p→q is not walkable on the plan, or null when it is: it must
 * stay inside one room (or entirely off the floor), or cross exactly one door line with each
 * half on that door's two sides.
 */
export function wallViolation(plan: FloorPlan, p: Vec2, q: Vec2): string | null {
  const hits = plan.doors.map((d) => ({ d, c: legCrossing(d, p, q, 0) })).filter((h) => h.c !== null);
  if (hits.length > 1) return `crosses ${hits.length} door lines`;
  const hit = hits[0];
  if (!hit) return oneSpace(plan, p, q) === undefined ? 'leaves its room' : null;
  const len = Math.hypot(q[0] - p[0], q[1] - p[1]);
  const x: Vec2 = [p[0] + ((q[0] - p[0]) * hit.c!.dist) / len, p[1] + ((q[1] - p[1]) * hit.c!.dist) / len];
  const before = hit.c!.direction === 'in' ? hit.d.fromRoomId : hit.d.toRoomId;
  if (len > 1e-6 && oneSpace(plan, p, x) !== before) return `reaches door ${hit.d.id} from the wrong room`;
  if (len > 1e-6 && oneSpace(plan, x, q) !== hit.c!.intoRoomId)
    return `goes through door ${hit.d.id} into the wrong room`;
  return null;
}

/** The one room containing the open segment, null when it touches no room, undefined otherwise. */
function oneSpace(plan: FloorPlan, p: Vec2, q: Vec2): string | null | undefined {
  for (const r of plan.rooms.values()) if (segmentInsidePolygon(p, q, r.polygon)) return r.id;
  for (let k = 1; k < 8; k++) {
    const t = k / 8;
    if (plan.roomAt(p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t) !== null) return undefined;
  }
  return null;
}
