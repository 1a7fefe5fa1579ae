import type { FloorIndex, IndexedSpace } from '../registry.js';
import { pointInPolygon, type BBox, type Polygon, type Vec2 } from '../../core/geometry.js';

/**
 * Precomputed point → spaces lookup of one floor for the hot path: a grid of CELL_M cells,
 * each holding the id of the set of spaces (rooms, zones, and the floor when inside a room)
 * that contain the whole cell. Cells whose corners disagree (a wall or zone edge crosses
 * them) hold -1 and are resolved with point-in-polygon (`spacesContaining`). The answer is
 * that of `countInstant` unless a polygon has a feature (a spike or notch) thinner than a
 * cell that passes between the sampled corners and centre; scenario polygons have none.
 */
const CELL_M = 0.25;
/** Grid margin around the floor's spaces (a sensor footprint may overhang an outer wall). */
const MARGIN_M = 4;

export class SpaceRaster {
  readonly #floor: FloorIndex;
  readonly #spaceIndex: ReadonlyMap<string, number>;
  readonly #x0: number;
  readonly #y0: number;
  readonly #nx: number;
  readonly #ny: number;
  readonly #cells: Int32Array;
  /** Space index lists by set id. */
  readonly sets: Int32Array[] = [];
  readonly #setIds = new Map<string, number>();
  #last: number[] | null = null;
  /** Rooms then zones of the floor, each with its presence-space index (-1: none). */
  readonly #spaces: RowSpace[];
  #lastId = -1;

  constructor(floor: FloorIndex, spaceIndex: ReadonlyMap<string, number>) {
    this.#floor = floor;
    this.#spaceIndex = spaceIndex;
    const all: IndexedSpace[] = [...floor.rooms, ...floor.zones];
    this.#spaces = all.map((s, k) => ({
      polygon: s.polygon,
      box: s.box,
      room: k < floor.rooms.length,
      index: spaceIndex.get(s.id) ?? -1,
    }));
    // The grid covers the floor's spaces (plus a margin for footprints that overhang a wall),
    // not the site plan from its origin: a building 240 m east of the origin would otherwise
    // classify 7× the cells. Its origin stays on the CELL_M lattice, so every corner and
    // centre below is exact and a cell holds what it held on a grid from the origin.
    let minX = Infinity;
    let minY = Infinity;
    let maxX = -Infinity;
    let maxY = -Infinity;
    for (const s of all) {
      minX = Math.min(minX, s.box.minX);
      minY = Math.min(minY, s.box.minY);
      maxX = Math.max(maxX, s.box.maxX);
      maxY = Math.max(maxY, s.box.maxY);
    }
    if (all.length === 0) [minX, minY, maxX, maxY] = [0, 0, 1, 1];
    this.#x0 = Math.floor((minX - MARGIN_M) / CELL_M) * CELL_M;
    this.#y0 = Math.floor((minY - MARGIN_M) / CELL_M) * CELL_M;
    this.#nx = Math.ceil((maxX + MARGIN_M - this.#x0) / CELL_M) + 1;
    this.#ny = Math.ceil((maxY + MARGIN_M - this.#y0) / CELL_M) + 1;
    this.#cells = new Int32Array(this.#nx * this.#ny);
    this.#classifyAll();
  }

  /**
   * A cell is uniform when its four corners and its centre lie in the same set of spaces;
   * it then holds the centre's set, otherwise -1. Points are classified a row at a time
   * (`#row`: each space's polygon is cut once per row, not tested per point), and set ids are
   * interned in the order the per-point lookup `#exact` would meet them (every vertex of a
   * row left to right, then the centres of the row's uniform cells), so ids are the same.
   */
  #classifyAll(): void {
    const nx = this.#nx;
    let below = new Int32Array(nx + 1);
    let above = new Int32Array(nx + 1);
    const seg = new Int32Array(nx + 1);
    this.#internRow(this.#row(this.#y0, nx + 1, false, seg), seg, below);
    for (let j = 0; j < this.#ny; j++) {
      const y = this.#y0 + j * CELL_M;
      this.#internRow(this.#row(y + CELL_M, nx + 1, false, seg), seg, above);
      const centres = this.#row(y + CELL_M / 2, nx, true, seg);
      const ids = new Int32Array(centres.length).fill(-1);
      for (let i = 0; i < nx; i++) {
        const a = below[i] as number;
        const uniform = a === below[i + 1] && a === above[i] && a === above[i + 1];
        let centre = -1;
        if (uniform) {
          const k = seg[i] as number;
          centre = ids[k] as number;
          if (centre < 0) centre = ids[k] = this.#intern(centres[k] as number[]);
        }
        this.#cells[j * nx + i] = uniform && centre === a ? a : -1;
      }
      [below, above] = [above, below];
    }
  }

  /** Interns every point's set of a row, left to right; `out[i]` its id. */
  #internRow(segments: readonly number[][], seg: Int32Array, out: Int32Array): void {
    let k = -1;
    let id = -1;
    for (let i = 0; i < out.length; i++) {
      if (seg[i] !== k) {
        k = seg[i] as number;
        id = this.#intern(segments[k] as number[]);
      }
      out[i] = id;
    }
  }

  /**
   * The spaces containing each of n points of the row at height y (x = x0 + i × CELL_M, plus
   * CELL_M / 2 for centres), exactly as `#ids` finds them: `seg[i]` indexes the returned
   * runs of points with the same spaces. pointInPolygon counts the edges crossing the row
   * right of x (at an abscissa computed with its very expression, which depends on y only),
   * so after sorting those abscissae a point's parity is a pointer that moves right.
   */
  #row(y: number, n: number, centres: boolean, seg: Int32Array): number[][] {
    const spaces = this.#spaces;
    const cuts: Float64Array[] = [];
    const active: number[] = [];
    for (let k = 0; k < spaces.length; k++) {
      const s = spaces[k] as RowSpace;
      if (y < s.box.minY || y > s.box.maxY) continue;
      const poly = s.polygon;
      const xs: number[] = [];
      for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
        const pi = poly[i] as Vec2;
        const pj = poly[j] as Vec2;
        if (pi[1] > y !== pj[1] > y) {
          const xc = ((pj[0] - pi[0]) * (y - pi[1])) / (pj[1] - pi[1]) + pi[0];
          // x < NaN never holds: such an edge never toggles.
          if (!Number.isNaN(xc)) xs.push(xc);
        }
      }
      if (xs.length === 0) continue;
      active.push(k);
      cuts.push(Float64Array.from(xs).sort());
    }
    const ptr = new Int32Array(active.length);
    const inside = new Uint8Array(active.length);
    const segments: number[][] = [];
    // The first abscissa where some space's answer may change (its next crossing, or an edge
    // of its box): points left of it keep the last point's spaces without a look.
    let next = -Infinity;
    for (let i = 0; i < n; i++) {
      const x = centres ? this.#x0 + i * CELL_M + CELL_M / 2 : this.#x0 + i * CELL_M;
      if (x < next) {
        seg[i] = segments.length - 1;
        continue;
      }
      let changed = i === 0;
      next = Infinity;
      for (let a = 0; a < active.length; a++) {
        const xs = cuts[a] as Float64Array;
        let p = ptr[a] as number;
        while (p < xs.length && (xs[p] as number) <= x) p++;
        ptr[a] = p;
        const b = (spaces[active[a] as number] as RowSpace).box;
        const now = (xs.length - p) % 2 === 1 && !(x < b.minX || x > b.maxX) ? 1 : 0;
        if (now !== inside[a]) {
          inside[a] = now;
          changed = true;
        }
        if (p < xs.length) next = Math.min(next, xs[p] as number);
        if (x < b.minX) next = Math.min(next, b.minX);
        else if (x <= b.maxX) next = Math.min(next, b.maxX);
      }
      if (changed) segments.push(this.#idsOf(active, inside));
      seg[i] = segments.length - 1;
    }
    return segments;
  }

  /** `#ids` from the row's containment flags (spaces in `#spaces` order: rooms, then zones). */
  #idsOf(active: readonly number[], inside: Uint8Array): number[] {
    const ids: number[] = [];
    let inRoom = false;
    for (let a = 0; a < active.length; a++) {
      if (inside[a] !== 1) continue;
      const s = this.#spaces[active[a] as number] as RowSpace;
      if (s.room) inRoom = true;
      if (s.index >= 0) ids.push(s.index);
    }
    if (inRoom) {
      const k = this.#spaceIndex.get(this.#floor.floorId);
      if (k !== undefined) ids.push(k);
    }
    return ids;
  }

  #intern(ids: number[]): number {
    const key = ids.join(',');
    let id = this.#setIds.get(key);
    if (id === undefined) {
      id = this.sets.length;
      this.sets.push(Int32Array.from(ids));
      this.#setIds.set(key, id);
    }
    return id;
  }

  /**
   * The set id shared by every point of the world box [minX, maxX] × [minY, maxY] when all
   * the grid cells it touches are classified with the same set; -1 otherwise.
   */
  uniformSet(minX: number, minY: number, maxX: number, maxY: number): number {
    const i0 = Math.floor((minX - this.#x0) / CELL_M);
    const i1 = Math.floor((maxX - this.#x0) / CELL_M);
    const j0 = Math.floor((minY - this.#y0) / CELL_M);
    const j1 = Math.floor((maxY - this.#y0) / CELL_M);
    if (i0 < 0 || j0 < 0 || i1 >= this.#nx || j1 >= this.#ny) return -1;
    const first = this.#cells[j0 * this.#nx + i0] as number;
    for (let j = j0; j <= j1; j++)
      for (let i = i0; i <= i1; i++) if (this.#cells[j * this.#nx + i] !== first) return -1;
    return first;
  }

  /** Set id of the spaces containing (x, y). */
  setOf(x: number, y: number): number {
    const i = Math.floor((x - this.#x0) / CELL_M);
    const j = Math.floor((y - this.#y0) / CELL_M);
    if (i >= 0 && j >= 0 && i < this.#nx && j < this.#ny) {
      const c = this.#cells[j * this.#nx + i] as number;
      if (c >= 0) return c;
    }
    return this.#exact(x, y);
  }

  #ids(x: number, y: number): number[] {
    const ids: number[] = [];
    let inRoom = false;
    for (const s of this.#floor.rooms) {
      if (!contains(s, x, y)) continue;
      inRoom = true;
      const k = this.#spaceIndex.get(s.id);
      if (k !== undefined) ids.push(k);
    }
    for (const s of this.#floor.zones) {
      if (!contains(s, x, y)) continue;
      const k = this.#spaceIndex.get(s.id);
      if (k !== undefined) ids.push(k);
    }
    if (inRoom) {
      const k = this.#spaceIndex.get(this.#floor.floorId);
      if (k !== undefined) ids.push(k);
    }
    return ids;
  }

  #exact(x: number, y: number): number {
    const ids = this.#ids(x, y);
    // Neighbouring grid points mostly share their set: compare with the last one before
    // building the interning key (start-up classifies ~30,000 points per floor).
    const last = this.#last;
    if (last !== null && last.length === ids.length && ids.every((v, k) => v === last[k])) return this.#lastId;
    const id = this.#intern(ids);
    this.#last = ids;
    this.#lastId = id;
    return id;
  }
}

interface RowSpace {
  readonly polygon: Polygon;
  readonly box: BBox;
  readonly room: boolean;
  readonly index: number;
}

/** `spacesContaining`'s test for one space: its box, then its polygon. */
function contains(s: IndexedSpace, x: number, y: number): boolean {
  const b = s.box;
  return !(x < b.minX || x > b.maxX || y < b.minY || y > b.maxY) && pointInPolygon(x, y, s.polygon);
}
