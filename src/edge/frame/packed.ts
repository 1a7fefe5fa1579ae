import { OutputBuffer, runBatchInto, type BatchOutput, type SensorBatch } from './kernel.js';
import type { FrameSpec } from './spec.js';
import { stateBytes, stateViews } from './state.js';
import type { FrameTask, FrameTaskResult } from './task.js';

/**
 * The wire form of a frame task: every sensor's spec, state and batch in ONE
 * SharedArrayBuffer, so a task crosses to a worker as a single shared reference (no
 * structured clone of objects, no copy) and the worker updates the states in place, where the
 * main thread's next task finds them. Outputs come back as a small cloned array.
 *
 * Shared, not transferred: transferring detaches the sender's ArrayBuffer, and the first
 * detach in an isolate invalidates V8's "array buffer detaching" protector, after which every
 * optimised typed-array access in that isolate re-checks its buffer for detachment. On the
 * frame kernel that costs ~20 % (bench/README.md, "pool overhead"); a shared buffer is never
 * detached, so neither the worker nor the main thread pays it. Layout (byte offsets, all 8-aligned):
 *
 *   header f64: [sensors, then per sensor: spec, state, ticks, ticksN, offsets, offsetsN, ids, peopleN]
 *   per sensor: spec (SPEC_FIELDS f64) · state (stateBytes)
 *   per sensor: ticks f64 · offsets i32 · ids i32 · people f32
 *
 * (The header says where each part is, so a worker reads any order; the specs and states come
 * first so they can stay in place while the batches change: `PackedTaskSlot`.)
 *
 * `ids` and `people` share their count (people has PERSON_STRIDE floats per id).
 */
export interface PackedTask {
  buffer: SharedArrayBuffer;
  /** Sensor ids (FrameSpec.id), for diagnostics only: the kernel never reads them. */
  ids: string[];
}

/** A worker's answer: the outputs, flat: [n, len₀…lenₙ₋₁, data…] (the states were updated in the task buffer). */
export type PackedResult = Float64Array;

const HEADER_PER_SENSOR = 8;
const SPEC_FIELDS = 27;
const STRIDE = 4; // PERSON_STRIDE (kept local: synth.ts must not be a dependency of the wire format)

const align8 = (n: number): number => Math.ceil(n / 8) * 8;

/** Numeric fields of a spec in wire order (everything but the id), from element `at` of `out` (no array per spec: it runs per sensor and interval). */
function encodeSpec(s: FrameSpec, out: Float64Array, at = 0): void {
  out[at] = s.mode;
  out[at + 1] = s.cols;
  out[at + 2] = s.rows;
  out[at + 3] = s.side;
  out[at + 4] = s.fps;
  out[at + 5] = s.startMs;
  out[at + 6] = s.reportIntervalMs;
  out[at + 7] = s.thresholdK;
  out[at + 8] = s.netdK;
  out[at + 9] = s.ambientC;
  out[at + 10] = s.hvacAmplitudeK;
  out[at + 11] = s.hvacPeriodMs;
  out[at + 12] = s.personHeat;
  out[at + 13] = s.absorbTauS;
  for (let k = 0; k < 4; k++) out[at + 14 + k] = s.door[k] as number;
  out[at + 18] = s.inSign;
  out[at + 19] = s.entrance;
  out[at + 20] = s.heightM;
  for (let k = 0; k < 6; k++) out[at + 21 + k] = s.magnify[k] as number;
}

function decodeSpec(id: string, f: Float64Array): FrameSpec {
  const at = (i: number): number => f[i] as number;
  // Integers back as small integers (`| 0`): a double-typed `cols` would make every index
  // computation of the kernel a float one.
  return {
    id,
    mode: at(0) === 1 ? 1 : 0,
    cols: at(1) | 0,
    rows: at(2) | 0,
    side: at(3),
    fps: at(4),
    startMs: at(5),
    reportIntervalMs: at(6),
    thresholdK: at(7),
    netdK: at(8),
    ambientC: at(9),
    hvacAmplitudeK: at(10),
    hvacPeriodMs: at(11),
    personHeat: at(12),
    absorbTauS: at(13),
    door: [at(14), at(15), at(16), at(17)],
    inSign: at(18) | 0,
    entrance: at(19) === 1 ? 1 : 0,
    heightM: at(20),
    magnify: [at(21), at(22), at(23), at(24), at(25), at(26)],
  };
}

/**
 * One packed task's buffer, kept by the same group of sensors for the whole run: a new
 * SharedArrayBuffer per task and interval was external memory V8 counts towards its next full
 * collection (tens of MB an interval at 100,000 sensors), and the views, header and spec arrays
 * built per sensor to fill it were garbage on the main thread (bench/README.md, "session 7,
 * frame-garbage"). The sensors' specs and states come first and stay where they are: a state is
 * written in once (`writeFixed`, then `settle`) and from then on lives here, updated in
 * place by whichever thread runs the task — one copy of the fleet's states, none copied in or
 * out per interval. The batches follow, rewritten every interval.
 *
 * A task is built in passes: `begin(n)`, `placeFixed` each sensor, `placeBatch` each sensor
 * (sizes), `allocate` (the buffer grows with 25 % room when the interval's people no longer
 * fit, its specs and states carried over), then the parts written where they were placed.
 */
export class PackedTaskSlot {
  #buffer: SharedArrayBuffer | null = null;
  #f64: Float64Array = new Float64Array(0);
  #i32: Int32Array = new Int32Array(0);
  #f32: Float32Array = new Float32Array(0);
  #u8: Uint8Array = new Uint8Array(0);
  #header = new Float64Array(1 + HEADER_PER_SENSOR * 8);
  #n = -1;
  #size = 0;
  /** End of the specs and states (bytes), and whether they have been written. */
  #fixedEnd = 0;
  #fixedWritten = false;
  readonly #ids: string[] = [];

  /** Starts a task of `n` sensors: the same sensors as the last task built in this slot, or (another `n`) new ones. */
  begin(n: number): void {
    if (n !== this.#n) {
      if (this.#header.length < 1 + HEADER_PER_SENSOR * n) this.#header = new Float64Array(1 + HEADER_PER_SENSOR * n);
      this.#fixedWritten = false;
      this.#n = n;
      this.#ids.length = n;
    }
    this.#header[0] = n;
    this.#size = align8(8 * (1 + HEADER_PER_SENSOR * n));
  }

  /** Places sensor `i`'s spec and state (call for every sensor before `placeBatch`). */
  placeFixed(i: number, spec: FrameSpec): void {
    const h = this.#header;
    const at = 1 + HEADER_PER_SENSOR * i;
    h[at] = this.#size;
    h[at + 1] = this.#size + align8(8 * SPEC_FIELDS);
    this.#size += align8(8 * SPEC_FIELDS) + stateBytes(spec.cols * spec.rows);
    this.#fixedEnd = this.#size;
    this.#ids[i] = spec.id;
  }

  /** Places sensor `i`'s batch: `ticks` instants (the tick before included) and `people` people in all. */
  placeBatch(i: number, ticks: number, people: number): void {
    const h = this.#header;
    const at = 1 + HEADER_PER_SENSOR * i;
    let size = this.#size;
    h[at + 2] = size;
    h[at + 3] = ticks;
    size += align8(8 * ticks);
    h[at + 4] = size;
    h[at + 5] = ticks + 1;
    size += align8(4 * (ticks + 1));
    h[at + 6] = size;
    h[at + 7] = people;
    size += align8(4 * people) + align8(4 * STRIDE * people);
    this.#size = size;
  }

  /** Makes the buffer big enough for what was placed (specs and states carried over) and writes the header. */
  allocate(): void {
    const old = this.#buffer;
    if (old === null || old.byteLength < this.#size) {
      const buffer = new SharedArrayBuffer(align8(Math.ceil(this.#size * 1.25)));
      const u8 = new Uint8Array(buffer);
      if (this.#fixedWritten) u8.set(this.#u8.subarray(0, this.#fixedEnd));
      this.#buffer = buffer;
      this.#f64 = new Float64Array(buffer);
      this.#i32 = new Int32Array(buffer);
      this.#f32 = new Float32Array(buffer);
      this.#u8 = u8;
    }
    for (let k = 0; k < 1 + HEADER_PER_SENSOR * this.#n; k++) this.#f64[k] = this.#header[k] as number;
  }

  /** Writes sensor `i`'s spec and its state (bytes) in: once, after which the state lives here. */
  writeFixed(i: number, spec: FrameSpec, state: Uint8Array): void {
    encodeSpec(spec, this.#f64, this.#placed(i, 0) / 8);
    this.#u8.set(state, this.#placed(i, 1));
  }

  /** Sensor `i`'s state as it is now (a copy). */
  state(i: number, bytes: number): ArrayBuffer {
    const from = this.#placed(i, 1);
    return this.#u8.slice(from, from + bytes).buffer;
  }

  /** Has `source` write its sensor `sensor`'s batch as sensor `i` of the task (into the whole buffer's views, at element offsets). */
  writeBatch(i: number, source: BatchSource, sensor: number): void {
    const ids = this.#placed(i, 6);
    source.writeBatch(
      sensor,
      this.#f64,
      this.#placed(i, 2) / 8,
      this.#i32,
      this.#placed(i, 4) / 4,
      this.#i32,
      ids / 4,
      this.#f32,
      (ids + align8(4 * this.#placed(i, 7))) / 4,
    );
  }

  /** The specs and states are written (`writeFixed` for every sensor): later tasks of the same sensors keep them. */
  settle(): void {
    this.#fixedWritten = true;
  }

  /** The task to run. */
  task(): PackedTask {
    if (this.#buffer === null || !this.#fixedWritten)
      throw new Error('packed task: allocate(), writeFixed() each sensor and settle() before task()');
    return { buffer: this.#buffer, ids: this.#ids };
  }

  #placed(i: number, field: number): number {
    return this.#header[1 + HEADER_PER_SENSOR * i + field] as number;
  }
}

/** Writes a sensor's batch into the given arrays at the given element offsets (ticks, offsets, ids, people): recorder.ts. */
export interface BatchSource {
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
  ): void;
}

/** Packs a task into a new buffer (states and batches copied in): the tests' and the edge bench's way in. */
export function packTask(task: FrameTask): PackedTask {
  const slot = new PackedTaskSlot();
  slot.begin(task.specs.length);
  task.specs.forEach((spec, i) => slot.placeFixed(i, spec));
  task.batches.forEach((b, i) => slot.placeBatch(i, b.ticks.length, b.ids.length));
  slot.allocate();
  task.specs.forEach((spec, i) => {
    const b = task.batches[i] as SensorBatch;
    slot.writeFixed(i, spec, new Uint8Array(task.states[i] as ArrayBuffer));
    slot.writeBatch(
      i,
      {
        writeBatch: (_s, ticks, tAt, offsets, oAt, ids, iAt, people, pAt) => {
          ticks.set(b.ticks, tAt);
          offsets.set(b.offsets, oAt);
          ids.set(b.ids, iAt);
          people.set(b.people, pAt);
        },
      },
      0,
    );
  });
  slot.settle();
  // A copy of the ids: the slot's array is its own, and this buffer is not reused.
  const t = slot.task();
  return { buffer: t.buffer, ids: [...t.ids] };
}

/** Every sensor's packets of a task, one after the other, before they are copied into the answer (reused from task to task). */
const outputs = new OutputBuffer();

/** Runs a packed task (in a worker): states are updated in place in the shared `task.buffer`. */
export function runPacked(task: PackedTask): PackedResult {
  const buffer = task.buffer;
  const header = new Float64Array(buffer, 0, 1);
  const n = header[0] as number;
  const h = new Float64Array(buffer, 0, 1 + HEADER_PER_SENSOR * n);
  const lengths = new Float64Array(1 + n);
  lengths[0] = n;
  outputs.length = 0;
  for (let i = 0; i < n; i++) {
    const at = 1 + HEADER_PER_SENSOR * i;
    const field = (k: number): number => h[at + k] as number;
    const spec = decodeSpec(task.ids[i] ?? '', new Float64Array(buffer, field(0), SPEC_FIELDS));
    const st = stateViews(spec.cols * spec.rows, buffer, field(1));
    const batch: SensorBatch = {
      ticks: new Float64Array(buffer, field(2), field(3)),
      offsets: new Int32Array(buffer, field(4), field(5)),
      ids: new Int32Array(buffer, field(6), field(7)),
      people: new Float32Array(buffer, field(6) + align8(4 * field(7)), STRIDE * field(7)),
    };
    const before = outputs.length;
    runBatchInto(spec, st, batch, outputs);
    lengths[1 + i] = outputs.length - before;
  }
  const result = new Float64Array(1 + n + outputs.length);
  result.set(lengths);
  result.set(outputs.data.subarray(0, outputs.length), 1 + n);
  return result;
}

/**
 * The result of a packed task as the stage expects it: one state buffer and one output per
 * sensor. States are copied out of the shared buffer back into the task's own plain buffers
 * (the main thread's kernel, frames viewer and tests then never touch shared memory), as the
 * in-thread runner updates them in place: a new buffer per sensor per drain kept the fleet's
 * old and new states alive together until the drain ended (tp-32x32: 12.7 KB a sensor,
 * 386 MB each for fleet.yaml's 30,300 sensors).
 */
export function unpackResult(task: FrameTask, packed: PackedTask, outputs: PackedResult): FrameTaskResult {
  const n = task.specs.length;
  const h = new Float64Array(packed.buffer, 0, 1 + HEADER_PER_SENSOR * n);
  const states: ArrayBuffer[] = [];
  const perSensor: BatchOutput[] = [];
  let off = 1 + n;
  task.specs.forEach((spec, i) => {
    const from = h[1 + HEADER_PER_SENSOR * i + 1] as number;
    const bytes = stateBytes(spec.cols * spec.rows);
    const own = task.states[i];
    const state = own !== undefined && own.byteLength === bytes ? own : new ArrayBuffer(bytes);
    new Uint8Array(state).set(new Uint8Array(packed.buffer, from, bytes));
    states.push(state);
    const len = outputs[1 + i] as number;
    perSensor.push(outputs.subarray(off, off + len));
    off += len;
  });
  return { states, outputs: perSensor };
}
