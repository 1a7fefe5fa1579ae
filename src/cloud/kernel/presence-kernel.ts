import { median } from '../../core/stats.js';
import { MINUTE_MS } from '../../core/time.js';

import type { AssetRegistry } from '../registry.js';
import { SpaceRaster } from './space-raster.js';
import { OverlapMerger } from './overlap-merge.js';
import { SensorTable } from './sensor-table.js';
import type { PresenceMinuteRow } from '../../store/rows.js';

/**
 * The presence occupancy hot path over typed arrays: the same per-minute values as
 * `PresenceAggregator` (docs/occupancy.md) with numeric keys instead of strings and Maps
 * per record. Detections that no other sensor can see (a precomputed "solo" grid per
 * sensor) are counted at once; only those in overlap regions are kept and merged per
 * (floor, instant) with `mergeDetections`, exactly as the aggregator does.
 * Assumes sensing instants on the tick grid (as every sensor samples).
 */
// A local copy: an imported binding is a property read per use under some loaders.
const MINUTE = MINUTE_MS;

interface MinuteBuf {
  minuteMs: number;
  /** counts[space × slots + slot]: people counted in the space at that instant. */
  counts: Uint16Array;
  sampled: Uint8Array;
  /** seen[sensor × slots + slot]: the (sensor, instant) was reported (first report wins). */
  seen: Uint8Array;
  /** Overlap detections, chained per (floor × slots + slot) from `head` through `next` (newest first). */
  head: Int32Array;
  next: Int32Array;
  sensor: Int32Array;
  xy: Float64Array;
  deferred: number;
}

export class PresenceKernel {
  readonly sensors: SensorTable;
  readonly spaceIds: readonly string[];
  readonly #slots: number;
  readonly #tickMs: number;
  readonly #rasters: SpaceRaster[];
  readonly #minutes = new Map<number, MinuteBuf>();
  readonly #free: MinuteBuf[] = [];
  readonly #scratch: number[] = [];
  readonly #nSensors: number;
  /** Counts of the minute being computed: its solo counts plus the merged overlap points. */
  #work = new Uint16Array(0);
  #cur: MinuteBuf | null = null;
  readonly #merger = new OverlapMerger();
  #curSlot = 0;

  constructor(registry: AssetRegistry, sensorIds: readonly string[], floorIds: readonly string[], tickMs: number) {
    this.#tickMs = tickMs;
    this.#slots = Math.max(1, Math.floor(MINUTE / tickMs));
    this.spaceIds = registry.presenceSpaceIds();
    const spaceIndex = new Map(this.spaceIds.map((id, i) => [id, i] as const));
    this.#rasters = floorIds.map((f) => new SpaceRaster(registry.floor(f), spaceIndex));
    this.sensors = new SensorTable(registry, sensorIds, floorIds, spaceIndex, this.#rasters);
    this.#nSensors = sensorIds.length;
  }

  /**
   * Marks (sensor, instant) as sampled; call once per presence packet, before its points.
   * False (and nothing recorded) when the (sensor, instant) was already reported: the first
   * report wins, so its detections must then be skipped.
   */
  report(sensor: number, sensedAtMs: number): boolean {
    const m = this.#minute(sensedAtMs);
    const slot = this.#slot(sensedAtMs, m.minuteMs);
    const seen = sensor * this.#slots + slot;
    if (m.seen[seen] === 1) return false;
    m.seen[seen] = 1;
    this.#cur = m;
    this.#curSlot = slot;
    const spaces = this.sensors.sampled[sensor] as Int32Array;
    for (let k = 0; k < spaces.length; k++) m.sampled[(spaces[k] as number) * this.#slots + slot] = 1;
    return true;
  }

  /** One presence packet: `report` + its detections xs/ys[from, to); false when a duplicate (skipped). */
  add(sensor: number, sensedAtMs: number, xs: Float64Array, ys: Float64Array, from: number, to: number): boolean {
    if (!this.report(sensor, sensedAtMs)) return false;
    for (let d = from; d < to; d++) this.detection(sensor, xs[d] as number, ys[d] as number);
    return true;
  }

  /** One detection (sensor-local) of the packet last passed to `report`. */
  detection(sensor: number, lx: number, ly: number): void {
    const m = this.#cur as MinuteBuf;
    const slot = this.#curSlot;
    const st = this.sensors;
    const solo = st.soloSet(sensor, lx, ly);
    if (solo >= 0) {
      // Seen by no other sensor, and its whole cell lies in one set of spaces.
      this.#countSet(m.counts, st.floor[sensor] as number, solo, slot);
      return;
    }
    // Same arithmetic as footprintTransform.toWorld, so points are bit-identical.
    const side = st.side[sensor] as number;
    const u = (lx - 0.5) * side;
    const v = (ly - 0.5) * side;
    const c = st.cos[sensor] as number;
    const s = st.sin[sensor] as number;
    const x = (st.cx[sensor] as number) + u * c - v * s;
    const y = (st.cy[sensor] as number) + u * s + v * c;
    const floor = st.floor[sensor] as number;
    if (solo === -2) {
      this.#defer(m, floor * this.#slots + slot, sensor, x, y);
      return;
    }
    this.#count(m.counts, floor, slot, x, y);
  }

  #defer(m: MinuteBuf, key: number, sensor: number, x: number, y: number): void {
    const i = m.deferred++;
    if (i === m.next.length) {
      const grow = <T extends Int32Array | Float64Array>(a: T, n: number): T => {
        const b = new (a.constructor as new (n: number) => T)(n);
        b.set(a);
        return b;
      };
      m.next = grow(m.next, i * 2);
      m.sensor = grow(m.sensor, i * 2);
      m.xy = grow(m.xy, i * 4);
    }
    m.next[i] = m.head[key] as number;
    m.head[key] = i;
    m.sensor[i] = sensor;
    m.xy[2 * i] = x;
    m.xy[2 * i + 1] = y;
  }

  #count(counts: Uint16Array, floor: number, slot: number, x: number, y: number): void {
    this.#countSet(counts, floor, (this.#rasters[floor] as SpaceRaster).setOf(x, y), slot);
  }

  #countSet(counts: Uint16Array, floor: number, setId: number, slot: number): void {
    const set = (this.#rasters[floor] as SpaceRaster).sets[setId] as Int32Array;
    for (let k = 0; k < set.length; k++) {
      const idx = (set[k] as number) * this.#slots + slot;
      counts[idx] = (counts[idx] as number) + 1;
    }
  }

  openMinutes(): number[] {
    return [...this.#minutes.keys()].sort((a, b) => a - b);
  }

  hasMinute(minuteMs: number): boolean {
    return this.#minutes.has(minuteMs);
  }

  /** Forgets a minute's data. */
  drop(minuteMs: number): void {
    const m = this.#minutes.get(minuteMs);
    this.#minutes.delete(minuteMs);
    if (m === undefined) return;
    if (this.#cur === m) this.#cur = null;
    // Buffers are reused by the next minute (no garbage per minute).
    if (this.#free.length < 8) this.#free.push(m);
  }

  /** Computes a minute's rows (by space id, as the aggregator) and forgets it; values go to `out` too. */
  finalise(minuteMs: number, out?: Float64Array): PresenceMinuteRow[] {
    const rows = this.compute(minuteMs, out);
    this.drop(minuteMs);
    return rows;
  }

  /** Computes a minute's rows (sorted by space id) from the reports held so far; keeps them. */
  compute(minuteMs: number, out?: Float64Array): PresenceMinuteRow[] {
    const m = this.#minutes.get(minuteMs);
    if (!m) return [];
    const work = this.#merged(m);
    const rows: PresenceMinuteRow[] = [];
    const scratch = this.#scratch;
    for (let sp = 0; sp < this.spaceIds.length; sp++) {
      scratch.length = 0;
      const base = sp * this.#slots;
      for (let slot = 0; slot < this.#slots; slot++)
        if (m.sampled[base + slot] === 1) scratch.push(work[base + slot] as number);
      if (scratch.length === 0) continue;
      const value = median(scratch);
      if (out) out[sp] = value;
      rows.push({ spaceId: this.spaceIds[sp] as string, minuteMs, value, samples: scratch.length });
    }
    return rows;
  }

  /**
   * The instantaneous count of every sampled (space, instant) of a minute, by space id then
   * instant (the non-`_1M` "current count" of spec §6).
   */
  instants(minuteMs: number, visit: (spaceId: string, sensedAtMs: number, count: number) => void): void {
    const m = this.#minutes.get(minuteMs);
    if (!m) return;
    const work = this.#merged(m);
    for (let sp = 0; sp < this.spaceIds.length; sp++) {
      const base = sp * this.#slots;
      for (let slot = 0; slot < this.#slots; slot++)
        if (m.sampled[base + slot] === 1)
          visit(this.spaceIds[sp] as string, minuteMs + slot * this.#tickMs, work[base + slot] as number);
    }
  }

  /** The minute's counts per (space, instant): its solo counts plus the merged overlap points (in scratch). */
  #merged(m: MinuteBuf): Uint16Array {
    if (this.#work.length < m.counts.length) this.#work = new Uint16Array(m.counts.length);
    const work = this.#work;
    work.set(m.counts);
    for (let key = 0; key < m.head.length; key++)
      if ((m.head[key] as number) >= 0) this.#mergeDeferred(m, work, Math.floor(key / this.#slots), key % this.#slots);
    return work;
  }

  /** Merges the overlap detections of one (floor, instant) (`OverlapMerger`) and counts the kept points. */
  #mergeDeferred(m: MinuteBuf, counts: Uint16Array, floor: number, slot: number): void {
    const kept = this.#merger.merge(m.head[floor * this.#slots + slot] as number, m.next, m.sensor, m.xy, this.sensors);
    const xy = this.#merger.keptXY;
    for (let a = 0; a < kept; a++) this.#count(counts, floor, slot, xy[2 * a] as number, xy[2 * a + 1] as number);
  }

  #slot(t: number, minuteMs: number): number {
    return Math.floor((t - minuteMs) / this.#tickMs);
  }

  #minute(t: number): MinuteBuf {
    const last = this.#cur;
    if (last !== null && t >= last.minuteMs && t < last.minuteMs + MINUTE) return last;
    const minuteMs = t - (((t % MINUTE) + MINUTE) % MINUTE);
    let m = this.#minutes.get(minuteMs);
    if (!m) {
      m = this.#free.pop() ?? this.#newBuf();
      m.minuteMs = minuteMs;
      m.counts.fill(0);
      m.sampled.fill(0);
      m.seen.fill(0);
      m.head.fill(-1);
      m.deferred = 0;
      this.#minutes.set(minuteMs, m);
    }
    return m;
  }

  #newBuf(): MinuteBuf {
    const n = this.spaceIds.length * this.#slots;
    const head = new Int32Array(this.#rasters.length * this.#slots);
    return {
      minuteMs: 0,
      counts: new Uint16Array(n),
      sampled: new Uint8Array(n),
      seen: new Uint8Array(this.#nSensors * this.#slots),
      head,
      next: new Int32Array(1024),
      sensor: new Int32Array(1024),
      xy: new Float64Array(2048),
      deferred: 0,
    };
  }
}
