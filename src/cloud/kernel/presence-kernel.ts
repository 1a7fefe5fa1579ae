import { median } from '../../core/stats.js';
import { MINUTE_MS } from '../../core/time.js';
import { MERGE_RADIUS_M, type PresenceMinuteRow } from '../presence.js';
import type { AssetRegistry } from '../registry.js';
import { SpaceRaster } from './space-raster.js';
import { SensorTable } from './sensor-table.js';

/**
 * The presence occupancy hot path over typed arrays: the same per-minute values as
 * `PresenceAggregator` (docs/occupancy.md) with numeric keys instead of strings and Maps
 * per record. Detections that no other sensor can see (a precomputed "solo" grid per
 * sensor) are counted at once; only those in overlap regions are kept and merged per
 * (floor, instant) with `mergeDetections`, exactly as the aggregator does.
 * Assumes sensing instants on the tick grid (as every sensor samples).
 */
interface MinuteBuf {
  minuteMs: number;
  /** counts[space × slots + slot]: people counted in the space at that instant. */
  counts: Uint16Array;
  sampled: Uint8Array;
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
  readonly #scratch: number[] = [];
  #cur: MinuteBuf | null = null;
  #orderBuf = new Int32Array(64);
  readonly #acc: number[] = [];
  readonly #flat: number[] = [];
  #curSlot = 0;

  constructor(registry: AssetRegistry, sensorIds: readonly string[], floorIds: readonly string[], tickMs: number) {
    this.#tickMs = tickMs;
    this.#slots = Math.max(1, Math.floor(MINUTE_MS / tickMs));
    this.spaceIds = registry.presenceSpaceIds();
    const spaceIndex = new Map(this.spaceIds.map((id, i) => [id, i] as const));
    this.#rasters = floorIds.map((f) => new SpaceRaster(registry.floor(f), spaceIndex));
    this.sensors = new SensorTable(registry, sensorIds, floorIds, spaceIndex);
  }

  /** Marks (sensor, instant) as sampled; call once per presence packet, before its points. */
  report(sensor: number, sensedAtMs: number): void {
    const m = this.#minute(sensedAtMs);
    const slot = this.#slot(sensedAtMs, m.minuteMs);
    this.#cur = m;
    this.#curSlot = slot;
    const spaces = this.sensors.sampled[sensor] as Int32Array;
    for (let k = 0; k < spaces.length; k++) m.sampled[(spaces[k] as number) * this.#slots + slot] = 1;
  }

  /** One detection (sensor-local) of the packet last passed to `report`. */
  detection(sensor: number, lx: number, ly: number): void {
    const m = this.#cur as MinuteBuf;
    const slot = this.#curSlot;
    const st = this.sensors;
    // Same arithmetic as footprintTransform.toWorld, so points are bit-identical.
    const side = st.side[sensor] as number;
    const u = (lx - 0.5) * side;
    const v = (ly - 0.5) * side;
    const c = st.cos[sensor] as number;
    const s = st.sin[sensor] as number;
    const x = (st.cx[sensor] as number) + u * c - v * s;
    const y = (st.cy[sensor] as number) + u * s + v * c;
    const floor = st.floor[sensor] as number;
    if (!st.isSolo(sensor, lx, ly)) {
      this.#defer(m, floor * this.#slots + slot, sensor, x, y);
      return;
    }
    this.#count(m, floor, slot, x, y);
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

  #count(m: MinuteBuf, floor: number, slot: number, x: number, y: number): void {
    const set = (this.#rasters[floor] as SpaceRaster).sets[(this.#rasters[floor] as SpaceRaster).setOf(x, y)] as Int32Array;
    for (let k = 0; k < set.length; k++) {
      const idx = (set[k] as number) * this.#slots + slot;
      m.counts[idx] = (m.counts[idx] as number) + 1;
    }
  }

  openMinutes(): number[] {
    return [...this.#minutes.keys()].sort((a, b) => a - b);
  }

  /** Computes a minute's rows (by space id, as the aggregator) and forgets it; values go to `out` too. */
  finalise(minuteMs: number, out?: Float64Array): PresenceMinuteRow[] {
    const m = this.#minutes.get(minuteMs);
    this.#minutes.delete(minuteMs);
    if (!m) return [];
    for (let key = 0; key < m.head.length; key++) if ((m.head[key] as number) >= 0) this.#mergeDeferred(m, Math.floor(key / this.#slots), key % this.#slots);
    const rows: PresenceMinuteRow[] = [];
    const scratch = this.#scratch;
    for (let sp = 0; sp < this.spaceIds.length; sp++) {
      scratch.length = 0;
      const base = sp * this.#slots;
      for (let slot = 0; slot < this.#slots; slot++) if (m.sampled[base + slot] === 1) scratch.push(m.counts[base + slot] as number);
      if (scratch.length === 0) continue;
      const value = median(scratch);
      if (out) out[sp] = value;
      rows.push({ spaceId: this.spaceIds[sp] as string, minuteMs, value, samples: scratch.length });
    }
    return rows;
  }

  /**
   * `mergeDetections` over the overlap detections of one (floor, instant), without objects:
   * sensors in id order (indices follow ids), points in packet order; a point merges into
   * the nearest accepted point of another sensor within MERGE_RADIUS_M when each is covered
   * by the other's sensor and that accepted point has not already absorbed one of this
   * sensor's. Few points per instant: a linear scan beats a grid.
   */
  #mergeDeferred(m: MinuteBuf, floor: number, slot: number): void {
    const flat = this.#flat;
    flat.length = 0;
    for (let i = m.head[floor * this.#slots + slot] as number; i >= 0; i = m.next[i] as number) flat.push(m.sensor[i] as number, m.xy[2 * i] as number, m.xy[2 * i + 1] as number);
    reverseTriples(flat); // the chain is newest first: back to arrival order
    const n = flat.length / 3;
    const order = this.#order(flat, n);
    const acc = this.#acc;
    acc.length = 0; // accepted: sensor, x, y, index into absorbed (or -1)
    const absorbed: number[][] = [];
    const st = this.sensors;
    const r2 = MERGE_RADIUS_M * MERGE_RADIUS_M * (1 + 1e-9);
    for (let k = 0; k < n; k++) {
      const i = order[k] as number;
      const s = flat[i * 3] as number;
      const x = flat[i * 3 + 1] as number;
      const y = flat[i * 3 + 2] as number;
      let best = -1;
      let bestD = MERGE_RADIUS_M;
      for (let a = 0; a < acc.length; a += 4) {
        const as = acc[a] as number;
        if (as === s) continue;
        const dx = (acc[a + 1] as number) - x;
        const dy = (acc[a + 2] as number) - y;
        // Squared-distance prefilter (with slack), then the aggregator's exact hypot test.
        if (dx * dx + dy * dy > r2) continue;
        const ab = acc[a + 3] as number;
        if (ab >= 0 && (absorbed[ab] as number[]).includes(s)) continue;
        const d = Math.hypot(dx, dy);
        if (d > bestD) continue;
        if (!st.covers(s, acc[a + 1] as number, acc[a + 2] as number) || !st.covers(as, x, y)) continue;
        best = a;
        bestD = d;
      }
      if (best >= 0) {
        let ab = acc[best + 3] as number;
        if (ab < 0) {
          ab = absorbed.push([]) - 1;
          acc[best + 3] = ab;
        }
        (absorbed[ab] as number[]).push(s);
      } else {
        acc.push(s, x, y, -1);
        this.#count(m, floor, slot, x, y);
      }
    }
  }

  /** Indices of the deferred points by sensor (ids order), then arrival: a stable insertion sort. */
  #order(flat: readonly number[], n: number): Int32Array {
    if (this.#orderBuf.length < n) this.#orderBuf = new Int32Array(n * 2);
    const o = this.#orderBuf;
    for (let i = 0; i < n; i++) {
      const s = flat[i * 3] as number;
      let j = i - 1;
      while (j >= 0 && (flat[(o[j] as number) * 3] as number) > s) {
        o[j + 1] = o[j] as number;
        j--;
      }
      o[j + 1] = i;
    }
    return o;
  }

  #slot(t: number, minuteMs: number): number {
    return Math.floor((t - minuteMs) / this.#tickMs);
  }

  #minute(t: number): MinuteBuf {
    const last = this.#cur;
    if (last !== null && t >= last.minuteMs && t < last.minuteMs + MINUTE_MS && this.#minutes.get(last.minuteMs) === last) return last;
    const minuteMs = t - (((t % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);
    let m = this.#minutes.get(minuteMs);
    if (!m) {
      const n = this.spaceIds.length * this.#slots;
      const head = new Int32Array(this.#rasters.length * this.#slots).fill(-1);
      m = { minuteMs, counts: new Uint16Array(n), sampled: new Uint8Array(n), head, next: new Int32Array(1024), sensor: new Int32Array(1024), xy: new Float64Array(2048), deferred: 0 };
      this.#minutes.set(minuteMs, m);
    }
    return m;
  }
}

function reverseTriples(a: number[]): void {
  for (let i = 0, j = a.length - 3; i < j; i += 3, j -= 3) {
    for (let k = 0; k < 3; k++) {
      const t = a[i + k] as number;
      a[i + k] = a[j + k] as number;
      a[j + k] = t;
    }
  }
}
