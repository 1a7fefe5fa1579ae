import { MERGE_RADIUS_M } from '../presence.js';
import type { SensorTable } from './sensor-table.js';

// Local copies: an imported binding is a property read per use under some loaders.
const RADIUS = MERGE_RADIUS_M;
const RADIUS2 = RADIUS * RADIUS * (1 + 1e-9);

/**
 * `mergeDetections` (presence.ts, docs/occupancy.md "Merging overlapping sensors") over the
 * overlap detections of one (floor, instant), without objects: sensors in id order (indices
 * follow ids), points in packet order; a point merges into the nearest kept point of another
 * sensor within MERGE_RADIUS_M when each is covered by the other's sensor and that kept
 * point has not already absorbed one of this sensor's. Few points per instant: a linear
 * scan beats a grid. Scratch arrays are reused from call to call.
 */
export class OverlapMerger {
  /** Kept points [x0, y0, x1, y1, …] of the last `merge`. */
  keptXY = new Float64Array(0);
  #pSensor = new Int32Array(0);
  #pXY = new Float64Array(0);
  #order = new Int32Array(0);
  #kSensor = new Int32Array(0);
  #kFirst = new Int32Array(0);
  /** Absorbed sensors as chains of (sensor, next) pairs, one chain per kept point. */
  #absorbed = new Int32Array(0);

  /**
   * Merges the points chained from `head` through `next` (newest first; `sensor[i]`, world
   * `xy[2i], xy[2i+1]`); returns how many are kept (in `keptXY`).
   */
  merge(head: number, next: Int32Array, sensor: Int32Array, xy: Float64Array, st: SensorTable): number {
    const n = this.#gather(head, next, sensor, xy);
    const ps = this.#pSensor;
    const pxy = this.#pXY;
    const order = this.#sortBySensor(n);
    const ks = this.#kSensor;
    const kxy = this.keptXY;
    const kFirst = this.#kFirst;
    const absorbed = this.#absorbed;
    let nk = 0;
    let nb = 0;
    for (let k = 0; k < n; k++) {
      const i = order[k] as number;
      const s = ps[i] as number;
      const x = pxy[2 * i] as number;
      const y = pxy[2 * i + 1] as number;
      let best = -1;
      let bestD = RADIUS;
      for (let a = 0; a < nk; a++) {
        const sa = ks[a] as number;
        if (sa === s) continue;
        const dx = (kxy[2 * a] as number) - x;
        const dy = (kxy[2 * a + 1] as number) - y;
        // Squared-distance prefilter (with slack), then the aggregator's exact hypot test.
        if (dx * dx + dy * dy > RADIUS2) continue;
        if (absorbedBy(absorbed, kFirst[a] as number, s)) continue;
        const d = Math.hypot(dx, dy);
        if (d > bestD) continue;
        if (!st.covers(s, kxy[2 * a] as number, kxy[2 * a + 1] as number) || !st.covers(sa, x, y)) continue;
        best = a;
        bestD = d;
      }
      if (best >= 0) {
        // Prepend s to the kept point's chain of absorbed sensors.
        absorbed[2 * nb] = s;
        absorbed[2 * nb + 1] = kFirst[best] as number;
        kFirst[best] = nb++;
      } else {
        ks[nk] = s;
        kxy[2 * nk] = x;
        kxy[2 * nk + 1] = y;
        kFirst[nk++] = -1;
      }
    }
    return nk;
  }

  /** Copies the chain into the scratch arrays, in arrival order; returns the count. */
  #gather(head: number, next: Int32Array, sensor: Int32Array, xy: Float64Array): number {
    let n = 0;
    for (let i = head; i >= 0; i = next[i] as number) n++;
    if (this.#pSensor.length < n) this.#grow(n * 2);
    // The chain is newest first: fill from the back.
    let k = n;
    for (let i = head; i >= 0; i = next[i] as number) {
      k--;
      this.#pSensor[k] = sensor[i] as number;
      this.#pXY[2 * k] = xy[2 * i] as number;
      this.#pXY[2 * k + 1] = xy[2 * i + 1] as number;
    }
    return n;
  }

  #grow(n: number): void {
    this.#pSensor = new Int32Array(n);
    this.#pXY = new Float64Array(2 * n);
    this.#order = new Int32Array(n);
    this.#kSensor = new Int32Array(n);
    this.keptXY = new Float64Array(2 * n);
    this.#kFirst = new Int32Array(n);
    this.#absorbed = new Int32Array(2 * n);
  }

  /** Indices of the gathered points by sensor (ids order), then arrival: a stable insertion sort. */
  #sortBySensor(n: number): Int32Array {
    const o = this.#order;
    const ps = this.#pSensor;
    for (let i = 0; i < n; i++) {
      const s = ps[i] as number;
      let j = i - 1;
      while (j >= 0 && (ps[o[j] as number] as number) > s) {
        o[j + 1] = o[j] as number;
        j--;
      }
      o[j + 1] = i;
    }
    return o;
  }
}

/** Whether sensor s is in the chain of absorbed sensors starting at `first` (pairs: sensor, next). */
function absorbedBy(chain: Int32Array, first: number, s: number): boolean {
  for (let b = first; b >= 0; b = chain[2 * b + 1] as number) if (chain[2 * b] === s) return true;
  return false;
}
