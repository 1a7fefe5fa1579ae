/**
 * The true positions each presence sensor could see at its report instants, held from the
 * tick that observed them until the drain that scores the sensors' packets for those
 * instants (accuracy.ts). One batch interval's worth lives in flat typed arrays that are
 * reused from one interval to the next: a `Map` of position arrays per sensor lived a whole
 * interval, survived the young generation's scavenges and was promoted, so the old
 * generation filled with garbage in proportion to the fleet and the garbage collector's share
 * of a tick grew with it (bench/README.md, "The loop's exponent at the top").
 *
 * An entry is one (sensor, instant): its instant, where its positions start in `positions`
 * and how many numbers they take (x, y per person), and the sensor's next entry of the
 * interval. A sensor's entries are chained in the order they were observed, so a drain that
 * hands over each sensor's packets in time order finds each entry at the chain's head.
 */
export class PresenceTruth {
  #at = new Float64Array(1024);
  #start = new Int32Array(1024);
  /** Numbers of the entry's positions (x, y per person). */
  #count = new Int32Array(1024);
  /** 1 once scored: a second packet for the same instant finds nothing. */
  #scored = new Uint8Array(1024);
  #next = new Int32Array(1024);
  #entries = 0;
  #positions = new Float64Array(1024);
  #length = 0;
  /** Per sensor: its first entry not yet scored, and its last entry (-1: none this interval). */
  readonly #head: Int32Array;
  readonly #tail: Int32Array;
  #open = -1;

  constructor(sensors: number) {
    this.#head = new Int32Array(sensors).fill(-1);
    this.#tail = new Int32Array(sensors).fill(-1);
  }

  /** Every position recorded this interval; an entry's are `positions[startOf(e) … startOf(e) + countOf(e))`. */
  get positions(): Float64Array {
    return this.#positions;
  }

  /** Starts the entry of `sensor` at `atMs`; `add` appends its people, `end` closes it. */
  begin(sensor: number, atMs: number): void {
    if (this.#entries === this.#at.length) this.#growEntries();
    const e = this.#entries++;
    this.#at[e] = atMs;
    this.#start[e] = this.#length;
    this.#next[e] = -1;
    this.#scored[e] = 0;
    const last = this.#tail[sensor] as number;
    if (last < 0) this.#head[sensor] = e;
    else this.#next[last] = e;
    this.#tail[sensor] = e;
    this.#open = e;
  }

  add(x: number, y: number): void {
    if (this.#length + 2 > this.#positions.length) this.#positions = grown(this.#positions, this.#length + 2);
    this.#positions[this.#length++] = x;
    this.#positions[this.#length++] = y;
  }

  end(): void {
    this.#count[this.#open] = this.#length - (this.#start[this.#open] as number);
    this.#open = -1;
  }

  /** The entry of `sensor` at `atMs` not scored yet, marked scored now; -1 when there is none. */
  take(sensor: number, atMs: number): number {
    let prev = -1;
    for (let e = this.#head[sensor] as number; e >= 0; prev = e, e = this.#next[e] as number) {
      if (this.#at[e] !== atMs || this.#scored[e] === 1) continue;
      this.#scored[e] = 1;
      // A scored entry at the head leaves the chain, so drains in time order find the next at once.
      if (prev < 0) this.#head[sensor] = this.#next[e] as number;
      return e;
    }
    return -1;
  }

  /** Where an entry's positions start in `positions`. */
  startOf(entry: number): number {
    return this.#start[entry] as number;
  }

  /** How many numbers (2 per person) an entry's positions take. */
  countOf(entry: number): number {
    return this.#count[entry] as number;
  }

  /** Forgets the interval: what a drain did not score is never scored (no later drain can hand over its packets). */
  clear(): void {
    this.#head.fill(-1);
    this.#tail.fill(-1);
    this.#entries = 0;
    this.#length = 0;
  }

  #growEntries(): void {
    const n = this.#at.length * 2;
    this.#at = grown(this.#at, n);
    this.#start = grown(this.#start, n);
    this.#count = grown(this.#count, n);
    this.#next = grown(this.#next, n);
    this.#scored = grown(this.#scored, n);
  }
}

function grown<T extends Float64Array | Int32Array | Uint8Array>(a: T, atLeast: number): T {
  const next = new (a.constructor as new (n: number) => T)(Math.max(a.length * 2, atLeast));
  next.set(a);
  return next;
}
