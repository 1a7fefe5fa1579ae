/**
 * Greedy nearest matching of one presence report's detections with the true people it could
 * see (accuracy.ts): candidate pairs closest first — by distance, then detection, then person —
 * each taken unless its detection or person already was; pairs farther than `maxDist` never
 * match. In arrays reused from report to report, grown to the largest: the matching ran per
 * report with anyone in view, and its tuples, pair triples and sets were garbage per sensor
 * and interval (bench/README.md, "scale-main").
 */
export class GreedyMatcher {
  readonly #maxDist: number;
  #dist = new Float64Array(64);
  /** detection × nTrue + person: the order of (detection, person) is the order of this number. */
  #pair = new Int32Array(64);
  #order = new Int32Array(64);
  #tmp = new Int32Array(64);
  #usedD = new Uint8Array(16);
  #usedT = new Uint8Array(16);
  #n = 0;
  #nTrue = 0;
  #pairs = 0;
  /** After `solve(sumSoFar)`: sumSoFar plus the matched pairs' distances, added one by one in match order. */
  sum = 0;

  constructor(maxDist: number) {
    this.#maxDist = maxDist;
  }

  /** Starts a report of `n` detections and `nTrue` people. */
  reset(n: number, nTrue: number): void {
    const pairs = n * nTrue;
    if (this.#dist.length < pairs) {
      const size = Math.max(pairs, 2 * this.#dist.length);
      this.#dist = new Float64Array(size);
      this.#pair = new Int32Array(size);
      this.#order = new Int32Array(size);
      this.#tmp = new Int32Array(size);
    }
    if (this.#usedD.length < n) this.#usedD = new Uint8Array(Math.max(n, 2 * this.#usedD.length));
    if (this.#usedT.length < nTrue) this.#usedT = new Uint8Array(Math.max(nTrue, 2 * this.#usedT.length));
    this.#n = n;
    this.#nTrue = nTrue;
    this.#pairs = 0;
  }

  /** Detection `d` is `dist` from person `t` (each pair once; beyond `maxDist` it is dropped). */
  pair(d: number, t: number, dist: number): void {
    if (dist > this.#maxDist) return;
    this.#dist[this.#pairs] = dist;
    this.#pair[this.#pairs] = d * this.#nTrue + t;
    this.#pairs++;
  }

  /**
   * Matches the report's pairs: how many matched. Their distances are added to `sumSoFar` one
   * by one into `sum` (a running total across reports gets the same additions in the same
   * order as adding each match to it: floating-point sums depend on the order).
   */
  solve(sumSoFar: number): number {
    const nTrue = this.#nTrue;
    this.sum = sumSoFar;
    this.#sort();
    this.#usedD.fill(0, 0, this.#n);
    this.#usedT.fill(0, 0, nTrue);
    let matched = 0;
    for (let k = 0; k < this.#pairs; k++) {
      const i = this.#order[k] as number;
      const p = this.#pair[i] as number;
      const d = Math.floor(p / nTrue);
      const t = p - d * nTrue;
      if (this.#usedD[d] === 1 || this.#usedT[t] === 1) continue;
      this.#usedD[d] = 1;
      this.#usedT[t] = 1;
      this.sum += this.#dist[i] as number;
      matched++;
    }
    return matched;
  }

  /** Sorts the pairs' indexes into `#order` by (distance, pair): a bottom-up merge sort, no allocation. */
  #sort(): void {
    const count = this.#pairs;
    const dist = this.#dist;
    const pair = this.#pair;
    let src = this.#order;
    let dst = this.#tmp;
    for (let i = 0; i < count; i++) src[i] = i;
    for (let width = 1; width < count; width *= 2) {
      for (let lo = 0; lo < count; lo += 2 * width) {
        const mid = Math.min(lo + width, count);
        const hi = Math.min(lo + 2 * width, count);
        let i = lo;
        let j = mid;
        let k = lo;
        while (i < mid && j < hi) {
          const a = src[i] as number;
          const b = src[j] as number;
          // b goes first only when strictly before a: equal keys keep their order (stable).
          const bFirst =
            (dist[b] as number) < (dist[a] as number) ||
            ((dist[b] as number) === (dist[a] as number) && (pair[b] as number) < (pair[a] as number));
          if (bFirst) {
            dst[k++] = b;
            j++;
          } else {
            dst[k++] = a;
            i++;
          }
        }
        while (i < mid) dst[k++] = src[i++] as number;
        while (j < hi) dst[k++] = src[j++] as number;
      }
      const merged = dst;
      dst = src;
      src = merged;
    }
    // An odd number of passes leaves the result in the other buffer.
    if (src !== this.#order) for (let i = 0; i < count; i++) this.#order[i] = src[i] as number;
  }
}
