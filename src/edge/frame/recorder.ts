import type { BatchSource } from './packed.js';
import { PERSON_STRIDE } from './synth.js';

/**
 * What every frame sensor of a stage saw at each tick of the current interval, in flat typed
 * arrays reused interval after interval: the ticks once for all sensors, then per tick and
 * sensor the range of its people (id, and PERSON_STRIDE floats: x, y in sensor metres, posture
 * code, surface °C) in one shared store, in the order they were recorded. A sensor's batch for
 * the frame kernel (kernel.ts `SensorBatch`: the tick before the interval in front, so frames
 * can interpolate) is written straight into a packed task's buffer (`writeBatch`), so nothing
 * is allocated per sensor and interval once the arrays have grown to the interval's crowd.
 * (Per-sensor JS arrays emptied at each drain, their typed-array copies and the previous tick's
 * slices were ~500 bytes of garbage per sensor-tick on the main thread at 30,000 8×8 sensors:
 * bench/README.md, "session 7, frame-garbage".)
 *
 * Every sensor is recorded at every tick (`tick`, then `begin`/`add`…/`end` per sensor, in any
 * sensor order).
 */
export class FrameRecorder implements BatchSource {
  readonly sensors: number;
  #ticks = new Float64Array(16);
  #tickCount = 0;
  /** Per tick k and sensor s, at k × sensors + s: its people's first index in the store and their count. */
  #start: Int32Array;
  #len: Int32Array;
  #ids = new Int32Array(1024);
  #people = new Float32Array(1024 * PERSON_STRIDE);
  #count = 0;
  /** The last tick of the interval before: its instant, and each sensor's people in `#prev`. */
  #prevT = 0;
  #hasPrev = false;
  #prev = new PeopleBySensor(0);
  /** The next interval's `#prev`, filled by `endInterval` (the two swap). */
  #next = new PeopleBySensor(0);
  #sensor = -1;

  constructor(sensors: number) {
    this.sensors = sensors;
    this.#start = new Int32Array(16 * sensors);
    this.#len = new Int32Array(16 * sensors);
    this.#prev = new PeopleBySensor(sensors);
    this.#next = new PeopleBySensor(sensors);
  }

  /** Ticks recorded in this interval. */
  get ticks(): number {
    return this.#tickCount;
  }

  /** Starts tick `atMs`: every sensor is then recorded (`begin` … `end`). */
  tick(atMs: number): void {
    const k = this.#tickCount;
    if (k === this.#ticks.length) this.#growTicks();
    this.#ticks[k] = atMs;
    this.#len.fill(0, k * this.sensors, (k + 1) * this.sensors);
    this.#tickCount = k + 1;
  }

  begin(sensor: number): void {
    this.#sensor = sensor;
    this.#start[(this.#tickCount - 1) * this.sensors + sensor] = this.#count;
  }

  add(id: number, x: number, y: number, posture: number, surfaceC: number): void {
    const n = this.#count;
    if (n === this.#ids.length) this.#growStore();
    this.#ids[n] = id;
    const o = n * PERSON_STRIDE;
    this.#people[o] = x;
    this.#people[o + 1] = y;
    this.#people[o + 2] = posture;
    this.#people[o + 3] = surfaceC;
    this.#count = n + 1;
  }

  end(): void {
    const at = (this.#tickCount - 1) * this.sensors + this.#sensor;
    this.#len[at] = this.#count - (this.#start[at] as number);
  }

  /** People in a sensor's batch: the previous tick's and every tick's of this interval. */
  batchPeople(sensor: number): number {
    let n = this.#hasPrev ? this.#prev.len(sensor) : this.#lenAt(0, sensor);
    for (let k = 0; k < this.#tickCount; k++) n += this.#lenAt(k, sensor);
    return n;
  }

  /**
   * Writes a sensor's batch at the given element offsets of the given arrays: ticks + 1
   * instants, ticks + 2 offsets (relative to its first person), `batchPeople` ids and
   * PERSON_STRIDE × as many floats. The same numbers as a batch built from per-sensor arrays.
   */
  writeBatch(
    sensor: number,
    ticks: Float64Array,
    tAt: number,
    offsets: Int32Array,
    oAt: number,
    ids: Int32Array,
    iAt: number,
    people: Float32Array,
    pAt: number,
  ): void {
    const first = this.#ticks[0] as number;
    ticks[tAt] = this.#hasPrev ? this.#prevT : first - 1;
    for (let k = 0; k < this.#tickCount; k++) ticks[tAt + 1 + k] = this.#ticks[k] as number;
    // The tick before: the interval before's last, or (the first interval) the first tick's people.
    let n = 0;
    offsets[oAt] = 0;
    if (this.#hasPrev) n = this.#prev.copy(sensor, ids, iAt, people, pAt);
    else n = this.#copy(this.#startAt(0, sensor), this.#lenAt(0, sensor), ids, iAt, people, pAt, 0);
    for (let k = 0; k < this.#tickCount; k++) {
      offsets[oAt + 1 + k] = n;
      n += this.#copy(this.#startAt(k, sensor), this.#lenAt(k, sensor), ids, iAt, people, pAt, n);
    }
    offsets[oAt + 1 + this.#tickCount] = n;
  }

  /** Ends the interval: every sensor's last tick becomes the next interval's tick before, and the store starts over. */
  endInterval(): void {
    const last = this.#tickCount - 1;
    if (last < 0) return;
    const next = this.#next;
    next.clear();
    for (let s = 0; s < this.sensors; s++)
      next.append(s, this.#ids, this.#people, this.#startAt(last, s), this.#lenAt(last, s));
    this.#next = this.#prev;
    this.#prev = next;
    this.#prevT = this.#ticks[last] as number;
    this.#hasPrev = true;
    this.#tickCount = 0;
    this.#count = 0;
  }

  #startAt(k: number, sensor: number): number {
    return this.#start[k * this.sensors + sensor] as number;
  }

  #lenAt(k: number, sensor: number): number {
    return this.#len[k * this.sensors + sensor] as number;
  }

  #copy(
    from: number,
    len: number,
    ids: Int32Array,
    iAt: number,
    people: Float32Array,
    pAt: number,
    to: number,
  ): number {
    for (let q = 0; q < len; q++) ids[iAt + to + q] = this.#ids[from + q] as number;
    const P = PERSON_STRIDE;
    for (let q = 0; q < len * P; q++) people[pAt + to * P + q] = this.#people[from * P + q] as number;
    return len;
  }

  #growTicks(): void {
    const cap = this.#ticks.length * 2;
    const ticks = new Float64Array(cap);
    ticks.set(this.#ticks);
    this.#ticks = ticks;
    const start = new Int32Array(cap * this.sensors);
    start.set(this.#start);
    this.#start = start;
    const len = new Int32Array(cap * this.sensors);
    len.set(this.#len);
    this.#len = len;
  }

  #growStore(): void {
    const ids = new Int32Array(this.#ids.length * 2);
    ids.set(this.#ids);
    this.#ids = ids;
    const people = new Float32Array(ids.length * PERSON_STRIDE);
    people.set(this.#people);
    this.#people = people;
  }
}

/** Each sensor's people at one tick, in sensor order, in reused arrays. */
class PeopleBySensor {
  readonly #start: Int32Array;
  #ids = new Int32Array(256);
  #people = new Float32Array(256 * PERSON_STRIDE);
  #count = 0;

  constructor(sensors: number) {
    this.#start = new Int32Array(sensors + 1);
  }

  len(sensor: number): number {
    return (this.#start[sensor + 1] as number) - (this.#start[sensor] as number);
  }

  clear(): void {
    this.#count = 0;
  }

  /** Sensor `sensor`'s people (sensors appended in order 0, 1, …). */
  append(sensor: number, ids: Int32Array, people: Float32Array, from: number, len: number): void {
    const n = this.#count;
    this.#start[sensor] = n;
    if (n + len > this.#ids.length) this.#grow(n + len);
    for (let q = 0; q < len; q++) this.#ids[n + q] = ids[from + q] as number;
    const P = PERSON_STRIDE;
    for (let q = 0; q < len * P; q++) this.#people[n * P + q] = people[from * P + q] as number;
    this.#count = n + len;
    this.#start[sensor + 1] = this.#count;
  }

  copy(sensor: number, ids: Int32Array, iAt: number, people: Float32Array, pAt: number): number {
    const from = this.#start[sensor] as number;
    const len = this.len(sensor);
    for (let q = 0; q < len; q++) ids[iAt + q] = this.#ids[from + q] as number;
    const P = PERSON_STRIDE;
    for (let q = 0; q < len * P; q++) people[pAt + q] = this.#people[from * P + q] as number;
    return len;
  }

  #grow(atLeast: number): void {
    const cap = Math.max(atLeast, this.#ids.length * 2);
    const ids = new Int32Array(cap);
    ids.set(this.#ids.subarray(0, this.#count));
    this.#ids = ids;
    const people = new Float32Array(cap * PERSON_STRIDE);
    people.set(this.#people.subarray(0, this.#count * PERSON_STRIDE));
    this.#people = people;
  }
}
