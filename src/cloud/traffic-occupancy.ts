import { MINUTE_MS } from '../core/time.js';
import type { AssetSnapshot } from '../assets/model.js';
import type { LocalDays } from './local-day.js';
import type { TrafficMinuteRow } from '../store/rows.js';

/**
 * Traffic-based occupancy (spec §1 "traffic_floor_occupancy, traffic_room_occupancy", §3
 * daily reset): cumulative in − out since the first instant of the local day, per room (the
 * doors of it that have a counter) and per floor (its entrance doors, all counted). Pure;
 * computed from the stored per-sensor minute rows, so a revised minute revises every later
 * value of its day.
 */

/** One traffic sensor's contribution to a space: +1 when its "in" enters the space. */
export interface TrafficTerm {
  sensorId: string;
  sign: 1 | -1;
}

export interface TrafficSpace {
  spaceId: string;
  kind: 'room' | 'floor';
  terms: TrafficTerm[];
  /** The space's doors (a room's doors, a floor's entrances) and how many have a counter. */
  doors?: { counted: number; total: number };
}

/** A traffic record of spec §4.4: in, out and the cumulative counters since the day's reset. */
export interface TrafficRecord {
  minuteMs: number;
  in: number;
  out: number;
  inCsum: number;
  outCsum: number;
  deltaSum: number;
  deltaCsum: number;
}

/**
 * The spaces with a traffic occupancy: rooms with a traffic sensor on at least one of their
 * doors, and floors whose every entrance door has one. A room's value aggregates the
 * counters it has (its counters' room, as the reference platform does): with a door left
 * uncounted, people who use that door are missed, and `doors` says so (docs/occupancy.md,
 * "Door coverage"). A floor needs every entrance, since its value stands for the building's
 * flow. A sensor's "in" is the direction into its own room (`sensor.roomId`), as the edge
 * counts it.
 */
export function trafficSpaces(model: AssetSnapshot): TrafficSpace[] {
  const byDoor = new Map<string, { sensorId: string; intoRoom: string | null }>();
  for (const s of model.sensors)
    if (s.mode === 'traffic' && s.doorId !== null) byDoor.set(s.doorId, { sensorId: s.id, intoRoom: s.roomId });
  const out: TrafficSpace[] = [];
  for (const room of model.rooms) {
    const doors = model.doors.filter((d) => d.toRoomId === room.id || d.fromRoomId === room.id);
    const terms = doors.map((d) => termFor(byDoor.get(d.id), room.id)).filter((t): t is TrafficTerm => t !== null);
    if (terms.length > 0)
      out.push({ spaceId: room.id, kind: 'room', terms, doors: { counted: terms.length, total: doors.length } });
  }
  for (const floor of model.floors) {
    const doors = model.doors.filter((d) => d.floorId === floor.id && d.entrance);
    const terms = doors.map((d) => termFor(byDoor.get(d.id), d.toRoomId));
    if (doors.length > 0 && terms.every((t) => t !== null))
      out.push({
        spaceId: floor.id,
        kind: 'floor',
        terms: terms as TrafficTerm[],
        doors: { counted: doors.length, total: doors.length },
      });
  }
  return out;
}

function termFor(
  counter: { sensorId: string; intoRoom: string | null } | undefined,
  roomId: string,
): TrafficTerm | null {
  if (!counter) return null;
  return { sensorId: counter.sensorId, sign: counter.intoRoom === roomId ? 1 : -1 };
}

/** Adds the cumulative counters to one sensor's minute rows (ascending), restarting at each local day. */
export function withCumulative(rows: readonly TrafficMinuteRow[], days: LocalDays): TrafficRecord[] {
  let day = Number.NaN;
  let inCsum = 0;
  let outCsum = 0;
  return rows.map((r) => {
    const d = days.dayStartOf(r.minuteMs);
    if (d !== day) {
      day = d;
      inCsum = 0;
      outCsum = 0;
    }
    inCsum += r.in;
    outCsum += r.out;
    return {
      minuteMs: r.minuteMs,
      in: r.in,
      out: r.out,
      inCsum,
      outCsum,
      deltaSum: r.in - r.out,
      deltaCsum: inCsum - outCsum,
    };
  });
}

export interface OccupancyPoint {
  minuteMs: number;
  value: number;
}

/**
 * Raw traffic occupancy of a space for every minute of [fromMs, toMs): Σ sign × (in − out)
 * of its sensors since the day's first instant. A minute's value includes that minute's
 * counts. The reset falls on the first instant of each local day; day starts are
 * minute-aligned in every zone (all offsets are whole minutes). The sum always starts at
 * the first instant of `fromMs`'s local day, so the value at a minute does not depend on
 * the range asked for.
 */
export function rawOccupancy(
  space: TrafficSpace,
  rowsBySensor: ReadonlyMap<string, readonly TrafficMinuteRow[]>,
  days: LocalDays,
  fromMs: number,
  toMs: number,
): OccupancyPoint[] {
  const delta = new Map<number, number>();
  for (const term of space.terms) {
    for (const r of rowsBySensor.get(term.sensorId) ?? [])
      delta.set(r.minuteMs, (delta.get(r.minuteMs) ?? 0) + term.sign * (r.in - r.out));
  }
  const out: OccupancyPoint[] = [];
  let day = Number.NaN;
  let value = 0;
  const first = days.dayStartOf(fromMs);
  for (let m = first; m < toMs; m += MINUTE_MS) {
    const d = days.dayStartOf(m);
    if (d !== day) {
      day = d;
      value = 0;
    }
    value += delta.get(m) ?? 0;
    if (m >= fromMs) out.push({ minuteMs: m, value });
  }
  return out;
}

/**
 * Traffic occupancy of a space over [fromMs, toMs), raw or calibrated, independent of the
 * range asked for: both are computed from the first instant of `fromMs`'s local day (the
 * calibration's drift estimate restarts there too) and then cut to the range.
 */
export function occupancyBetween(
  space: TrafficSpace,
  rowsBySensor: ReadonlyMap<string, readonly TrafficMinuteRow[]>,
  days: LocalDays,
  fromMs: number,
  toMs: number,
  calibrated: ((raw: readonly OccupancyPoint[]) => OccupancyPoint[]) | null,
): OccupancyPoint[] {
  const dayStart = Math.min(days.dayStartOf(fromMs), fromMs);
  const raw = rawOccupancy(space, rowsBySensor, days, dayStart, toMs);
  const values = calibrated ? calibrated(raw) : raw;
  return values.filter((p) => p.minuteMs >= fromMs);
}
