import { MERGE_RADIUS_M } from '../presence.js';
import type { AssetRegistry } from '../registry.js';
import type { SpaceRaster } from './space-raster.js';

/**
 * Per-sensor constants of the hot path in typed arrays: placement (for sensor-local → world),
 * floor, sampled spaces, and a SOLO_N × SOLO_N "solo" grid over the sensor's local square:
 * a cell is solo when no other sensor of the floor can see within a merge radius of it, so
 * its detections never merge (docs/occupancy.md, merging) and can be counted at once.
 */
const SOLO_N = 32;
// A local copy: an imported binding is a property read per use under some loaders.
const RADIUS = MERGE_RADIUS_M;

export class SensorTable {
  readonly ids: readonly string[];
  readonly side: Float64Array;
  readonly cos: Float64Array;
  readonly sin: Float64Array;
  readonly cx: Float64Array;
  readonly cy: Float64Array;
  readonly floor: Int32Array;
  readonly sampled: Int32Array[];
  /** Per solo cell: -2 not solo, -1 solo (spaces to look up), ≥ 0 the space set of the whole cell. */
  readonly #solo: Int32Array;

  constructor(registry: AssetRegistry, sensorIds: readonly string[], floorIds: readonly string[], spaceIndex: ReadonlyMap<string, number>, rasters: readonly SpaceRaster[]) {
    const n = sensorIds.length;
    this.ids = sensorIds;
    this.side = new Float64Array(n);
    this.cos = new Float64Array(n);
    this.sin = new Float64Array(n);
    this.cx = new Float64Array(n);
    this.cy = new Float64Array(n);
    this.floor = new Int32Array(n);
    this.#solo = new Int32Array(n * SOLO_N * SOLO_N);
    const floorIdx = new Map(floorIds.map((f, i) => [f, i] as const));
    sensorIds.forEach((id, i) => {
      const s = registry.sensor(id);
      if (!s) throw new RangeError(`unknown sensor ${id}`);
      const yaw = (s.orientationDeg * Math.PI) / 180;
      this.side[i] = registry.transform(id).side;
      this.cos[i] = Math.cos(yaw);
      this.sin[i] = Math.sin(yaw);
      this.cx[i] = s.center[0];
      this.cy[i] = s.center[1];
      this.floor[i] = floorIdx.get(s.floorId) ?? 0;
    });
    this.sampled = sensorIds.map((id) => Int32Array.from(registry.sampledSpaces(id).map((sp) => spaceIndex.get(sp) ?? -1).filter((k) => k >= 0)));
    // Each sensor's footprint grown by the merge margin, once; compared only with the sensors
    // of its own floor (a fleet's floors are independent: cost grows with the fleet, not its square).
    const grown = sensorIds.map((id) => {
      const t = registry.transform(id);
      const m = MERGE_RADIUS_M / t.side;
      return boxOf([t.toWorld(-m, -m), t.toWorld(1 + m, -m), t.toWorld(1 + m, 1 + m), t.toWorld(-m, 1 + m)], 1e-9);
    });
    const onFloor = new Map<number, number[]>();
    for (let i = 0; i < n; i++) {
      const f = this.floor[i] as number;
      const list = onFloor.get(f);
      if (list) list.push(i);
      else onFloor.set(f, [i]);
    }
    for (let i = 0; i < n; i++) {
      const others = (onFloor.get(this.floor[i] as number) ?? []).filter((k) => k !== i).map((k) => grown[k] as Box);
      this.#markSolo(registry, sensorIds, i, others, rasters[this.floor[i] as number]);
    }
  }

  /** Sensor-local coordinates of a world point (same arithmetic as footprintTransform.toLocal). */
  covers(sensor: number, x: number, y: number): boolean {
    const side = this.side[sensor] as number;
    const c = this.cos[sensor] as number;
    const s = this.sin[sensor] as number;
    const dx = x - (this.cx[sensor] as number);
    const dy = y - (this.cy[sensor] as number);
    const lx = (dx * c + dy * s) / side + 0.5;
    const ly = (-dx * s + dy * c) / side + 0.5;
    const margin = RADIUS / side;
    return lx >= -margin && lx <= 1 + margin && ly >= -margin && ly <= 1 + margin;
  }

  /**
   * For a detection at sensor-local (lx, ly): -2 when another sensor may see it (merge), -1
   * when no other sensor can (count it at once), ≥ 0 when moreover its whole solo cell lies
   * in one set of spaces of the floor raster: that set (no world coordinates needed).
   */
  soloSet(sensor: number, lx: number, ly: number): number {
    const i = Math.floor(lx * SOLO_N);
    const j = Math.floor(ly * SOLO_N);
    if (i < 0 || j < 0 || i >= SOLO_N || j >= SOLO_N) return -2;
    return this.#solo[(sensor * SOLO_N + j) * SOLO_N + i] as number;
  }

  /**
   * A detection p of this sensor can merge with (or absorb) one of sensor A only when A
   * covers p (footprint grown by the merge margin, `PresenceAggregator`'s coverage test).
   * A cell is solo when its world box misses every other sensor's grown footprint box
   * (conservative for rotated sensors, exact for axis-aligned ones).
   */
  #markSolo(registry: AssetRegistry, ids: readonly string[], i: number, others: readonly Box[], raster: SpaceRaster | undefined): void {
    const me = registry.transform(ids[i] as string);
    // Only neighbours whose grown footprint touches this sensor's own footprint can matter.
    const own = boxOf([me.toWorld(0, 0), me.toWorld(1, 0), me.toWorld(1, 1), me.toWorld(0, 1)], 1e-9);
    const near = others.filter((o) => !(own.maxX < o.minX || own.minX > o.maxX || own.maxY < o.minY || own.minY > o.maxY));
    for (let j = 0; j < SOLO_N; j++) {
      for (let k = 0; k < SOLO_N; k++) {
        const a = k / SOLO_N;
        const b = j / SOLO_N;
        const d = 1 / SOLO_N;
        const cell = boxOf([me.toWorld(a, b), me.toWorld(a + d, b), me.toWorld(a + d, b + d), me.toWorld(a, b + d)], 1e-9);
        const solo = near.every((o) => cell.maxX < o.minX || cell.minX > o.maxX || cell.maxY < o.minY || cell.minY > o.maxY);
        // The cell's world box (grown by 1e-9) holds every point mapped from inside the cell.
        this.#solo[(i * SOLO_N + j) * SOLO_N + k] = !solo ? -2 : raster ? raster.uniformSet(cell.minX, cell.minY, cell.maxX, cell.maxY) : -1;
      }
    }
  }
}

interface Box {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

/** The axis-aligned box of four corners, grown by `grow` (no intermediate arrays: called per solo cell). */
function boxOf([a, b, c, d]: readonly [readonly [number, number], readonly [number, number], readonly [number, number], readonly [number, number]], grow: number): Box {
  return {
    minX: Math.min(a[0], b[0], c[0], d[0]) - grow,
    minY: Math.min(a[1], b[1], c[1], d[1]) - grow,
    maxX: Math.max(a[0], b[0], c[0], d[0]) + grow,
    maxY: Math.max(a[1], b[1], c[1], d[1]) + grow,
  };
}
