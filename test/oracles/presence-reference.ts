import { median } from '../../src/core/stats.js';
import { floorToMinute } from '../../src/core/time.js';
import type { Vec2 } from '../../src/core/geometry.js';
import { MERGE_RADIUS_M } from '../../src/cloud/presence.js';
import { spacesContaining, type AssetRegistry, type FloorIndex } from '../../src/cloud/registry.js';
import type { PresenceMinuteRow } from '../../src/store/rows.js';

/**
 * The reference definition of presence occupancy per minute (docs/occupancy.md), an oracle
 * for the tests and the pipeline benchmark: the live path, src/cloud/kernel/presence-kernel.ts,
 * must agree with it (test/cloud/kernel.test.ts). Reports are held by (minute, floor, sensing
 * instant, sensor), so the finalised values depend only on the set of reports received, never
 * on the order they arrived in.
 */

/** One sensor's detections at one instant, world coordinates. */
export interface SensorReport {
  sensorId: string;
  points: readonly Vec2[];
}

const cellKey = (cx: number, cy: number): string => `${cx},${cy}`;

/** Whether a sensor's footprint covers a world point (it could have seen a person there). */
export type CoverageTest = (sensorId: string, x: number, y: number) => boolean;

interface Accepted {
  p: Vec2;
  sensorId: string;
  /** Sensors whose detection this one already absorbed: one person is one detection per sensor. */
  absorbed: Set<string>;
}

/**
 * Merges overlapping sensors' detections at one instant: reports in sensor-id order,
 * detections in order. A detection of sensor B is the same person as an accepted detection
 * of another sensor A when they lie within MERGE_RADIUS_M, each lies where the other sensor
 * could see it (inside both footprints), and A's detection has not already been matched to
 * one of B's: so two people near each other at a footprint edge stay two. A grid of
 * radius-sized cells keeps it linear.
 */
export function mergeDetections(reports: readonly SensorReport[], covers: CoverageTest = () => true): Vec2[] {
  const sorted = [...reports].sort((a, b) => (a.sensorId < b.sensorId ? -1 : a.sensorId > b.sensorId ? 1 : 0));
  const grid = new Map<string, Accepted[]>();
  const accepted: Vec2[] = [];
  for (const r of sorted) {
    for (const p of r.points) {
      const cx = Math.floor(p[0] / MERGE_RADIUS_M);
      const cy = Math.floor(p[1] / MERGE_RADIUS_M);
      const twin = findTwin(grid, cx, cy, p, r.sensorId, covers);
      if (twin) {
        twin.absorbed.add(r.sensorId);
        continue;
      }
      accepted.push(p);
      const entry: Accepted = { p, sensorId: r.sensorId, absorbed: new Set() };
      const key = cellKey(cx, cy);
      const cell = grid.get(key);
      if (cell) cell.push(entry);
      else grid.set(key, [entry]);
    }
  }
  return accepted;
}

/** The nearest eligible accepted detection of another sensor, if any. */
function findTwin(
  grid: Map<string, Accepted[]>,
  cx: number,
  cy: number,
  p: Vec2,
  sensorId: string,
  covers: CoverageTest,
): Accepted | null {
  let best: Accepted | null = null;
  let bestD = MERGE_RADIUS_M;
  for (let dx = -1; dx <= 1; dx++) {
    for (let dy = -1; dy <= 1; dy++) {
      for (const a of grid.get(cellKey(cx + dx, cy + dy)) ?? []) {
        if (a.sensorId === sensorId || a.absorbed.has(sensorId)) continue;
        const d = Math.hypot(a.p[0] - p[0], a.p[1] - p[1]);
        if (d > bestD) continue;
        if (!covers(sensorId, a.p[0], a.p[1]) || !covers(a.sensorId, p[0], p[1])) continue;
        best = a;
        bestD = d;
      }
    }
  }
  return best;
}

/**
 * Head counts at one instant: every room and zone of the floor containing a merged
 * detection, and the floor itself (detections inside any of its rooms). Spaces without a
 * detection are absent (count 0).
 */
export function countInstant(floor: FloorIndex, merged: readonly Vec2[]): Map<string, number> {
  const counts = new Map<string, number>();
  const bump = (id: string): void => {
    counts.set(id, (counts.get(id) ?? 0) + 1);
  };
  for (const [x, y] of merged) {
    const rooms = spacesContaining(floor.rooms, x, y);
    for (const r of rooms) bump(r.id);
    for (const z of spacesContaining(floor.zones, x, y)) bump(z.id);
    if (rooms.length > 0) bump(floor.floorId);
  }
  return counts;
}

type InstantReports = Map<string, Vec2[]>; // sensorId → world points
type FloorInstants = Map<number, InstantReports>; // sensedAtMs → reports

/** Total order on reports, so a (sensor, instant) received twice with different content resolves the same way every time. */
function comparePoints(a: readonly Vec2[], b: readonly Vec2[]): number {
  if (a.length !== b.length) return a.length - b.length;
  for (let i = 0; i < a.length; i++) {
    const p = a[i] as Vec2;
    const q = b[i] as Vec2;
    if (p[0] !== q[0]) return p[0] - q[0];
    if (p[1] !== q[1]) return p[1] - q[1];
  }
  return 0;
}

/** Accumulates presence reports of open minutes and turns a minute into rows when asked. */
export class PresenceAggregator {
  readonly #registry: AssetRegistry;
  readonly #minutes = new Map<number, Map<string, FloorInstants>>();

  readonly #covers: CoverageTest;

  constructor(registry: AssetRegistry) {
    this.#registry = registry;
    // Footprint edges are blurred by position jitter: allow a margin of one merge radius.
    this.#covers = (sensorId, x, y) => {
      const [lx, ly] = registry.transform(sensorId).toLocal(x, y);
      const margin = MERGE_RADIUS_M / registry.transform(sensorId).side;
      return lx >= -margin && lx <= 1 + margin && ly >= -margin && ly <= 1 + margin;
    };
  }

  /** Adds one presence packet (sensor-local detections); idempotent per (sensor, instant). */
  add(sensorId: string, sensedAtMs: number, local: ReadonlyArray<readonly [number, number]>): void {
    const sensor = this.#registry.sensor(sensorId);
    if (!sensor) throw new RangeError(`unknown sensor ${sensorId}`);
    const t = this.#registry.transform(sensorId);
    const points = local.map(([lx, ly]) => t.toWorld(lx, ly));
    const reports = this.#instant(floorToMinute(sensedAtMs), sensor.floorId, sensedAtMs);
    const prev = reports.get(sensorId);
    if (prev === undefined || comparePoints(points, prev) < 0) reports.set(sensorId, points);
  }

  hasMinute(minuteMs: number): boolean {
    return this.#minutes.has(minuteMs);
  }

  /** Minutes holding data, ascending. */
  openMinutes(): number[] {
    return [...this.#minutes.keys()].sort((a, b) => a - b);
  }

  /** Computes a minute's rows (sorted by space id) and forgets its data. */
  finalise(minuteMs: number): PresenceMinuteRow[] {
    const rows = this.compute(minuteMs);
    this.#minutes.delete(minuteMs);
    return rows;
  }

  /** Forgets a minute's data. */
  drop(minuteMs: number): void {
    this.#minutes.delete(minuteMs);
  }

  /** Computes a minute's rows (sorted by space id) from the reports held so far; keeps them. */
  compute(minuteMs: number): PresenceMinuteRow[] {
    const floors = this.#minutes.get(minuteMs);
    if (!floors) return [];
    const series = new Map<string, number[]>();
    for (const floorId of [...floors.keys()].sort()) {
      const instants = floors.get(floorId) as FloorInstants;
      for (const t of [...instants.keys()].sort((a, b) => a - b)) {
        this.#sampleInstant(floorId, instants.get(t) as InstantReports, series);
      }
    }
    return [...series.keys()].sort().map((spaceId) => {
      const counts = series.get(spaceId) as number[];
      return { spaceId, minuteMs, value: median(counts), samples: counts.length };
    });
  }

  /** Appends this instant's count to the series of every space sampled at it. */
  #sampleInstant(floorId: string, reports: InstantReports, series: Map<string, number[]>): void {
    const list: SensorReport[] = [...reports].map(([sensorId, points]) => ({ sensorId, points }));
    const counts = countInstant(this.#registry.floor(floorId), mergeDetections(list, this.#covers));
    const sampled = new Set(list.flatMap((r) => this.#registry.sampledSpaces(r.sensorId)));
    for (const spaceId of sampled) {
      const s = series.get(spaceId);
      const n = counts.get(spaceId) ?? 0;
      if (s) s.push(n);
      else series.set(spaceId, [n]);
    }
  }

  #instant(minuteMs: number, floorId: string, t: number): InstantReports {
    let floors = this.#minutes.get(minuteMs);
    if (!floors) this.#minutes.set(minuteMs, (floors = new Map()));
    let instants = floors.get(floorId);
    if (!instants) floors.set(floorId, (instants = new Map()));
    let reports = instants.get(t);
    if (!reports) instants.set(t, (reports = new Map()));
    return reports;
  }
}
