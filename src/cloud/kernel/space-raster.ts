import type { FloorIndex, IndexedSpace } from '../registry.js';
import { spacesContaining } from '../registry.js';

/**
 * Precomputed point → spaces lookup of one floor for the hot path: a grid of CELL_M cells,
 * each holding the id of the set of spaces (rooms, zones, and the floor when inside a room)
 * that contain the whole cell. Cells whose corners disagree (a wall or zone edge crosses
 * them) hold -1 and are resolved with point-in-polygon (`spacesContaining`). The answer is
 * that of `countInstant` unless a polygon has a feature (a spike or notch) thinner than a
 * cell that passes between the sampled corners and centre; scenario polygons have none.
 */
const CELL_M = 0.25;

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

  constructor(floor: FloorIndex, spaceIndex: ReadonlyMap<string, number>) {
    this.#floor = floor;
    this.#spaceIndex = spaceIndex;
    const all: IndexedSpace[] = [...floor.rooms, ...floor.zones];
    const minX = Math.min(...all.map((s) => s.box.minX), 0);
    const minY = Math.min(...all.map((s) => s.box.minY), 0);
    const maxX = Math.max(...all.map((s) => s.box.maxX), 1);
    const maxY = Math.max(...all.map((s) => s.box.maxY), 1);
    this.#x0 = minX;
    this.#y0 = minY;
    this.#nx = Math.ceil((maxX - minX) / CELL_M) + 1;
    this.#ny = Math.ceil((maxY - minY) / CELL_M) + 1;
    this.#cells = new Int32Array(this.#nx * this.#ny);
    for (let j = 0; j < this.#ny; j++) for (let i = 0; i < this.#nx; i++) this.#cells[j * this.#nx + i] = this.#classify(i, j);
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
    for (let j = j0; j <= j1; j++) for (let i = i0; i <= i1; i++) if (this.#cells[j * this.#nx + i] !== first) return -1;
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

  #classify(i: number, j: number): number {
    const x = this.#x0 + i * CELL_M;
    const y = this.#y0 + j * CELL_M;
    const keys = [this.#key(x, y), this.#key(x + CELL_M, y), this.#key(x, y + CELL_M), this.#key(x + CELL_M, y + CELL_M), this.#key(x + CELL_M / 2, y + CELL_M / 2)];
    // Corners on an edge make pointInPolygon's boundary convention matter: resolve exactly.
    return keys.every((k) => k === keys[0]) ? this.#exact(x + CELL_M / 2, y + CELL_M / 2) : -1;
  }

  #key(x: number, y: number): string {
    return this.#ids(x, y).join(',');
  }

  #ids(x: number, y: number): number[] {
    const rooms = spacesContaining(this.#floor.rooms, x, y);
    const ids = [...rooms, ...spacesContaining(this.#floor.zones, x, y)].map((s) => this.#spaceIndex.get(s.id) ?? -1);
    if (rooms.length > 0) ids.push(this.#spaceIndex.get(this.#floor.floorId) ?? -1);
    return ids.filter((i) => i >= 0);
  }

  #exact(x: number, y: number): number {
    const ids = this.#ids(x, y);
    const key = ids.join(',');
    let id = this.#setIds.get(key);
    if (id === undefined) {
      id = this.sets.length;
      this.sets.push(Int32Array.from(ids));
      this.#setIds.set(key, id);
    }
    return id;
  }
}
