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
  /**
   * Per solo cell: -2 not solo, -1 solo (spaces to look up), ≥ 0 the space set of the whole
   * cell. The narrowest integer array that holds every set id of the rasters (sets are all
   * made before this table is: `uniformSet` only reads them): SOLO_N² bytes per sensor when a
   * floor has fewer than 128 distinct sets of spaces, the usual case, instead of 4 × SOLO_N².
   */
  readonly #solo: Int8Array | Int16Array | Int32Array;
  /** Scratch of `#markSolo`: the neighbour boxes touching one row of cells (minX, minY, maxX, maxY each). */
  #rowNear = new Float64Array(64);

  constructor(
    registry: AssetRegistry,
    sensorIds: readonly string[],
    floorIds: readonly string[],
    spaceIndex: ReadonlyMap<string, number>,
    rasters: readonly SpaceRaster[],
  ) {
    const n = sensorIds.length;
    this.ids = sensorIds;
    this.side = new Float64Array(n);
    this.cos = new Float64Array(n);
    this.sin = new Float64Array(n);
    this.cx = new Float64Array(n);
    this.cy = new Float64Array(n);
    this.floor = new Int32Array(n);
    const maxSet = rasters.reduce((m, r) => Math.max(m, r.sets.length - 1), -1);
    const cells = n * SOLO_N * SOLO_N;
    this.#solo = maxSet < 128 ? new Int8Array(cells) : maxSet < 32768 ? new Int16Array(cells) : new Int32Array(cells);
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
    this.sampled = sensorIds.map((id) =>
      Int32Array.from(
        registry
          .sampledSpaces(id)
          .map((sp) => spaceIndex.get(sp) ?? -1)
          .filter((k) => k >= 0),
      ),
    );
    // Each sensor's footprint grown by the merge margin, once, in a spatial hash per floor:
    // a sensor meets only the sensors whose boxes share a bucket with its own footprint, so
    // the cost grows with the fleet (and a floor's density), never with its square.
    const grown = sensorIds.map((id) => {
      const t = registry.transform(id);
      const m = MERGE_RADIUS_M / t.side;
      return boxOf([t.toWorld(-m, -m), t.toWorld(1 + m, -m), t.toWorld(1 + m, 1 + m), t.toWorld(-m, 1 + m)], 1e-9);
    });
    const hash = new BoxHash(grown, this.floor);
    const vx = new Float64Array((SOLO_N + 1) * (SOLO_N + 1));
    const vy = new Float64Array((SOLO_N + 1) * (SOLO_N + 1));
    for (let i = 0; i < n; i++) {
      const me = registry.transform(sensorIds[i] as string);
      const own = boxOf([me.toWorld(0, 0), me.toWorld(1, 0), me.toWorld(1, 1), me.toWorld(0, 1)], 1e-9);
      // Only neighbours whose grown footprint touches this sensor's own footprint can matter.
      const near = hash.overlapping(this.floor[i] as number, own, i);
      this.#markSolo(i, near, rasters[this.floor[i] as number], vx, vy);
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
   * (conservative for rotated sensors, exact for axis-aligned ones). The grid's vertices are
   * mapped to world coordinates once (k / SOLO_N + 1 / SOLO_N is exactly (k + 1) / SOLO_N).
   */
  #markSolo(
    i: number,
    near: readonly Box[],
    raster: SpaceRaster | undefined,
    vx: Float64Array,
    vy: Float64Array,
  ): void {
    const w = SOLO_N + 1;
    // footprintTransform.toWorld's arithmetic on the same constants (its cos and sin are this
    // table's: the same degrees-to-radians expression), without a pair allocated per vertex.
    const side = this.side[i] as number;
    const co = this.cos[i] as number;
    const si = this.sin[i] as number;
    const cx = this.cx[i] as number;
    const cy = this.cy[i] as number;
    for (let j = 0; j <= SOLO_N; j++) {
      const v = (j / SOLO_N - 0.5) * side;
      for (let k = 0; k <= SOLO_N; k++) {
        const u = (k / SOLO_N - 0.5) * side;
        vx[j * w + k] = cx + u * co - v * si;
        vy[j * w + k] = cy + u * si + v * co;
      }
    }
    const rowNear =
      this.#rowNear.length >= 4 * near.length ? this.#rowNear : (this.#rowNear = new Float64Array(4 * near.length));
    for (let j = 0; j < SOLO_N; j++) {
      // The neighbours that touch this row of cells at all (a cell's box lies inside its row's
      // box, so no neighbour dropped here could touch one of its cells): most rows meet a few.
      let rMinX = Infinity;
      let rMinY = Infinity;
      let rMaxX = -Infinity;
      let rMaxY = -Infinity;
      for (let a = j * w; a < (j + 2) * w; a++) {
        rMinX = Math.min(rMinX, vx[a] as number);
        rMinY = Math.min(rMinY, vy[a] as number);
        rMaxX = Math.max(rMaxX, vx[a] as number);
        rMaxY = Math.max(rMaxY, vy[a] as number);
      }
      rMinX -= 1e-9;
      rMinY -= 1e-9;
      rMaxX += 1e-9;
      rMaxY += 1e-9;
      let m = 0;
      for (const o of near) {
        if (rMaxX < o.minX || rMinX > o.maxX || rMaxY < o.minY || rMinY > o.maxY) continue;
        rowNear[m++] = o.minX;
        rowNear[m++] = o.minY;
        rowNear[m++] = o.maxX;
        rowNear[m++] = o.maxY;
      }
      for (let k = 0; k < SOLO_N; k++) {
        const a = j * w + k;
        const b = a + 1;
        const c = a + w + 1;
        const d = a + w;
        const minX = Math.min(vx[a] as number, vx[b] as number, vx[c] as number, vx[d] as number) - 1e-9;
        const minY = Math.min(vy[a] as number, vy[b] as number, vy[c] as number, vy[d] as number) - 1e-9;
        const maxX = Math.max(vx[a] as number, vx[b] as number, vx[c] as number, vx[d] as number) + 1e-9;
        const maxY = Math.max(vy[a] as number, vy[b] as number, vy[c] as number, vy[d] as number) + 1e-9;
        let solo = true;
        for (let o = 0; o < m; o += 4) {
          if (!(
            maxX < (rowNear[o] as number) ||
            minX > (rowNear[o + 2] as number) ||
            maxY < (rowNear[o + 1] as number) ||
            minY > (rowNear[o + 3] as number)
          )) {
            solo = false;
            break;
          }
        }
        // The cell's world box (grown by 1e-9) holds every point mapped from inside the cell.
        this.#solo[(i * SOLO_N + j) * SOLO_N + k] = !solo
          ? -2
          : raster
            ? raster.uniformSet(minX, minY, maxX, maxY)
            : -1;
      }
    }
  }
}

/**
 * Boxes bucketed per (floor, BUCKET_M square) by the squares they cover: the boxes that may
 * overlap a query box are those in the buckets the query covers.
 */
const BUCKET_M = 8;

class BoxHash {
  readonly #boxes: readonly Box[];
  /** Per floor: bucket key (`#key`) → indexes of the boxes covering that bucket. */
  readonly #buckets: Map<number, number[]>[] = [];
  readonly #mark: Int32Array;
  #stamp = 0;

  constructor(boxes: readonly Box[], floors: Int32Array) {
    this.#boxes = boxes;
    this.#mark = new Int32Array(boxes.length);
    for (let k = 0; k < boxes.length; k++) {
      const floor = floors[k] as number;
      const buckets = this.#buckets[floor] ?? (this.#buckets[floor] = new Map());
      const b = boxes[k] as Box;
      const i1 = Math.floor(b.maxX / BUCKET_M);
      const j1 = Math.floor(b.maxY / BUCKET_M);
      for (let i = Math.floor(b.minX / BUCKET_M); i <= i1; i++) {
        for (let j = Math.floor(b.minY / BUCKET_M); j <= j1; j++) {
          const list = buckets.get(key(i, j));
          if (list) list.push(k);
          else buckets.set(key(i, j), [k]);
        }
      }
    }
  }

  /** Boxes of the floor overlapping `q` (bounds touching count), except box `self`, in index order. */
  overlapping(floor: number, q: Box, self: number): Box[] {
    const stamp = ++this.#stamp;
    const hits: number[] = [];
    const buckets = this.#buckets[floor];
    if (buckets === undefined) return [];
    const i1 = Math.floor(q.maxX / BUCKET_M);
    const j1 = Math.floor(q.maxY / BUCKET_M);
    for (let i = Math.floor(q.minX / BUCKET_M); i <= i1; i++) {
      for (let j = Math.floor(q.minY / BUCKET_M); j <= j1; j++) {
        const list = buckets.get(key(i, j));
        if (list === undefined) continue;
        for (const k of list) {
          if (k === self || this.#mark[k] === stamp) continue;
          this.#mark[k] = stamp;
          const o = this.#boxes[k] as Box;
          if (!(q.maxX < o.minX || q.minX > o.maxX || q.maxY < o.minY || q.minY > o.maxY)) hits.push(k);
        }
      }
    }
    return hits.sort((a, b) => a - b).map((k) => this.#boxes[k] as Box);
  }
}

/**
 * A bucket's numeric key (a string per lookup cost more than the lookups): distinct for
 * buckets within 2^25 of the origin (2.7e8 m), beyond that two buckets may share one, which
 * only adds candidates: `overlapping` tests every candidate's box exactly.
 */
function key(i: number, j: number): number {
  return i * 67_108_864 + j;
}

interface Box {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

/** The axis-aligned box of four corners, grown by `grow` (no intermediate arrays: called per solo cell). */
function boxOf(
  [a, b, c, d]: readonly [
    readonly [number, number],
    readonly [number, number],
    readonly [number, number],
    readonly [number, number],
  ],
  grow: number,
): Box {
  return {
    minX: Math.min(a[0], b[0], c[0], d[0]) - grow,
    minY: Math.min(a[1], b[1], c[1], d[1]) - grow,
    maxX: Math.max(a[0], b[0], c[0], d[0]) + grow,
    maxY: Math.max(a[1], b[1], c[1], d[1]) + grow,
  };
}
