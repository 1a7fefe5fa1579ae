/**
 * A multiset of numbers kept as value → count: the exact nearest-rank percentiles of
 * `percentile` (core/stats.ts) in memory bounded by the distinct values, not by how many
 * were added. Latencies in sim milliseconds take a few thousand distinct values over a run
 * of tens of millions of packets (a fleet's 10 minutes held 18 M doubles per list before).
 */
export class ValueCounts {
  readonly #counts = new Map<number, number>();
  #n = 0;
  #sorted: Float64Array | null = null;

  /** Number of values added (with repeats). */
  get count(): number {
    return this.#n;
  }

  /** Distinct values held (what the memory grows with). */
  get distinct(): number {
    return this.#counts.size;
  }

  add(value: number, times = 1): void {
    this.#counts.set(value, (this.#counts.get(value) ?? 0) + times);
    this.#n += times;
    this.#sorted = null;
  }

  addAll(other: ValueCounts): void {
    for (const [v, c] of other.#counts) this.add(v, c);
  }

  /** Nearest-rank percentile (p in [0, 100]), exactly `percentile` of the values added; NaN when empty. */
  percentile(p: number): number {
    if (this.#n === 0) return Number.NaN;
    const rank = Math.min(this.#n, Math.max(1, Math.ceil((p / 100) * this.#n)));
    const sorted = (this.#sorted ??= Float64Array.from(this.#counts.keys()).sort());
    let seen = 0;
    for (const v of sorted) {
      seen += this.#counts.get(v) as number;
      if (seen >= rank) return v;
    }
    return sorted[sorted.length - 1] as number;
  }

  /** Each distinct value with how many times it was added, in insertion order. */
  entries(): IterableIterator<[number, number]> {
    return this.#counts.entries();
  }

  /** Values and their counts as two arrays (to cross a thread boundary; `fromArrays` reads them back). */
  toArrays(): { values: Float64Array; counts: Float64Array } {
    const values = Float64Array.from(this.#counts.keys());
    return { values, counts: Float64Array.from(values, (v) => this.#counts.get(v) as number) };
  }

  static fromArrays(a: { values: ArrayLike<number>; counts: ArrayLike<number> }): ValueCounts {
    const out = new ValueCounts();
    for (let i = 0; i < a.values.length; i++) out.add(a.values[i] as number, a.counts[i] as number);
    return out;
  }

  static of(values: Iterable<number>): ValueCounts {
    const out = new ValueCounts();
    for (const v of values) out.add(v);
    return out;
  }
}
