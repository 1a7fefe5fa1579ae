import { bbox, pointInPolygon, type BBox, type Polygon } from '../core/geometry.js';
import { groupBy } from '../core/group-by.js';
import { median } from '../core/stats.js';
import { floorToMinute, MINUTE_MS } from '../core/time.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { DoorCrossing, PersonState, World, WorldStep } from './types.js';

/**
 * Ground truth beside the data path: the true head count of every room, zone and floor at
 * every tick, reduced per minute to the median of that minute's tick counts (the same
 * `median` the cloud uses), and every door crossing.
 */
export interface TruthRecorder {
  /** Call after every world.step (including for the first tick). */
  observe(step: WorldStep, world: World): void;
  /** True occupancy per minute for a room, zone or floor id: minute start (epoch ms) → median of the per-tick counts within that minute (use `median` from src/core/stats.ts). Only minutes observed appear. */
  minuteSeries(spaceId: string): ReadonlyMap<number, number>;
  /** Every recorded crossing of a door, in time order. */
  crossings(doorId: string): readonly DoorCrossing[];
  /** Total crossings per door and direction. */
  crossingTotals(): ReadonlyMap<string, { in: number; out: number }>;
}

/**
 * Tick counts of the minute being observed live in one flat buffer, `perMinute` slots per
 * space (space i uses [i·perMinute, i·perMinute + ticksInMinute)): no per-tick allocation.
 */
interface MinuteBuffer {
  readonly counts: Int32Array;
  readonly perMinute: number;
  n: number;
}

interface ZoneGeo {
  readonly index: number;
  readonly roomId: string | null;
  readonly polygon: Polygon;
  readonly box: BBox;
}

interface FloorTruth {
  readonly id: string;
  readonly index: number;
  /** Room id → space index. */
  readonly rooms: ReadonlyMap<string, number>;
  readonly roomIndexes: readonly number[];
  readonly zones: readonly ZoneGeo[];
}

/** A recorder for every room, zone, floor and door of the model. */
export function createTruthRecorder(model: ScenarioModel): TruthRecorder {
  const spaceIndex = new Map<string, number>();
  const minutes: Map<number, number>[] = [];
  const add = (id: string): number => {
    minutes.push(new Map());
    spaceIndex.set(id, minutes.length - 1);
    return minutes.length - 1;
  };
  // A floor's rooms and zones in one pass each (a scan of every room per floor grows with floors × rooms).
  const roomsOf = groupBy(model.rooms, (r) => r.floorId);
  const zonesOf = groupBy(model.zones, (z) => z.floorId);
  const floors: FloorTruth[] = model.floors.map((f) => {
    const index = add(f.id);
    const rooms = new Map((roomsOf.get(f.id) ?? []).map((r) => [r.id, add(r.id)]));
    const zones = (zonesOf.get(f.id) ?? []).map((z) => ({
      index: add(z.id),
      roomId: z.roomId,
      polygon: z.polygon,
      box: bbox(z.polygon),
    }));
    return { id: f.id, index, rooms, roomIndexes: [...rooms.values()], zones };
  });
  // Counts of the current tick, indexed like `minutes` (one slot per space).
  const counts = new Int32Array(minutes.length);
  const perMinute = Math.ceil(MINUTE_MS / Math.max(1, model.tickMs)) + 1;
  const buf: MinuteBuffer = { counts: new Int32Array(minutes.length * perMinute), perMinute, n: 0 };
  const byDoor = new Map<string, DoorCrossing[]>(model.doors.map((d) => [d.id, []]));
  const totals = new Map(model.doors.map((d) => [d.id, { in: 0, out: 0 }]));
  let minute: number | null = null;

  function closeMinute(): void {
    if (minute !== null && buf.n > 0) minutes.forEach((series, i) => series.set(minute as number, medianOf(buf, i)));
    buf.n = 0;
  }

  function recordCrossing(c: DoorCrossing): void {
    let list = byDoor.get(c.doorId);
    if (!list) byDoor.set(c.doorId, (list = []));
    list.push(c);
    let total = totals.get(c.doorId);
    if (!total) totals.set(c.doorId, (total = { in: 0, out: 0 }));
    total[c.direction]++;
  }

  return {
    observe(step, world) {
      const m = floorToMinute(step.atMs);
      if (m !== minute) {
        closeMinute();
        minute = m;
      }
      for (const f of floors) countFloor(f, world.peopleOnFloor(f.id), counts);
      // Steps come one tickMs apart, so a minute never holds more than perMinute of them.
      if (buf.n >= buf.perMinute) throw new RangeError(`truth: more than ${buf.perMinute} ticks in one minute`);
      for (let i = 0; i < counts.length; i++) buf.counts[i * buf.perMinute + buf.n] = counts[i] as number;
      buf.n++;
      for (const c of step.crossings) recordCrossing(c);
    },
    minuteSeries(spaceId) {
      const i = spaceIndex.get(spaceId);
      const series = i === undefined ? undefined : minutes[i];
      if (i === undefined || !series) return new Map();
      if (buf.n === 0 || minute === null) return series;
      // The minute in progress counts as observed: report its median so far.
      return new Map(series).set(minute, medianOf(buf, i));
    },
    crossings: (doorId) => byDoor.get(doorId) ?? [],
    crossingTotals: () => totals,
  };
}

function medianOf(buf: MinuteBuffer, space: number): number {
  const start = space * buf.perMinute;
  return median(Array.from(buf.counts.subarray(start, start + buf.n)));
}

/** Sets the tick counts of the floor, its rooms and its zones from the people on it. */
function countFloor(f: FloorTruth, people: readonly PersonState[], counts: Int32Array): void {
  counts[f.index] = people.length;
  for (const i of f.roomIndexes) counts[i] = 0;
  for (const z of f.zones) counts[z.index] = 0;
  for (const p of people) {
    const room = p.roomId === null ? undefined : f.rooms.get(p.roomId);
    if (room !== undefined) (counts[room] as number)++;
    for (const z of f.zones) {
      if (z.roomId !== null && z.roomId !== p.roomId) continue;
      if (p.x < z.box.minX || p.x > z.box.maxX || p.y < z.box.minY || p.y > z.box.maxY) continue;
      if (pointInPolygon(p.x, p.y, z.polygon)) (counts[z.index] as number)++;
    }
  }
}
