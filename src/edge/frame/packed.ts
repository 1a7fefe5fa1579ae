import { runBatch, type BatchOutput, type SensorBatch } from './kernel.js';
import type { FrameSpec } from './spec.js';
import { stateBytes, stateViews } from './state.js';
import type { FrameTask, FrameTaskResult } from './task.js';

/**
 * The wire form of a frame task: every sensor's spec, state and batch in ONE
 * SharedArrayBuffer, so a task crosses to a worker as a single shared reference (no
 * structured clone of objects, no copy) and the worker updates the states in place, where the
 * main thread reads them back. Outputs come back as a small cloned array.
 *
 * Shared, not transferred: transferring detaches the sender's ArrayBuffer, and the first
 * detach in an isolate invalidates V8's "array buffer detaching" protector, after which every
 * optimised typed-array access in that isolate re-checks its buffer for detachment. On the
 * frame kernel that costs ~20 % (bench/README.md, "pool overhead"); a shared buffer is never
 * detached, so neither the worker nor the main thread pays it. Layout (byte offsets, all 8-aligned):
 *
 *   header f64: [sensors, then per sensor: spec, state, ticks, ticksN, offsets, offsetsN, ids, peopleN]
 *   per sensor: spec (SPEC_FIELDS f64) · state (stateBytes) · ticks f64 · offsets i32 · ids i32 · people f32
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

/** Numeric fields of a spec in wire order (everything but the id). */
function encodeSpec(s: FrameSpec, out: Float64Array): void {
  out.set([s.mode, s.cols, s.rows, s.side, s.fps, s.startMs, s.reportIntervalMs, s.thresholdK, s.netdK, s.ambientC, s.hvacAmplitudeK, s.hvacPeriodMs, s.personHeat, s.absorbTauS, ...s.door, s.inSign, s.entrance, s.heightM, ...s.magnify]);
}

function decodeSpec(id: string, f: Float64Array): FrameSpec {
  const at = (i: number): number => f[i] as number;
  // Integers back as small integers (`| 0`): a double-typed `cols` would make every index
  // computation of the kernel a float one.
  return {
    id, mode: at(0) === 1 ? 1 : 0, cols: at(1) | 0, rows: at(2) | 0, side: at(3), fps: at(4), startMs: at(5), reportIntervalMs: at(6), thresholdK: at(7), netdK: at(8),
    ambientC: at(9), hvacAmplitudeK: at(10), hvacPeriodMs: at(11), personHeat: at(12), absorbTauS: at(13), door: [at(14), at(15), at(16), at(17)], inSign: at(18) | 0, entrance: at(19) === 1 ? 1 : 0,
    heightM: at(20), magnify: [at(21), at(22), at(23), at(24), at(25), at(26)],
  };
}

/** Packs a task into one buffer (states and batches copied in). */
export function packTask(task: FrameTask): PackedTask {
  const n = task.specs.length;
  let size = align8(8 * (1 + HEADER_PER_SENSOR * n));
  const header: number[] = [n];
  task.specs.forEach((spec, i) => {
    const b = task.batches[i] as SensorBatch;
    const spec0 = size;
    const state = (size += align8(8 * SPEC_FIELDS));
    const ticks = (size += stateBytes(spec.cols * spec.rows));
    const offsets = (size += align8(8 * b.ticks.length));
    const ids = (size += align8(4 * b.offsets.length));
    size += align8(4 * b.ids.length) + align8(4 * b.people.length);
    header.push(spec0, state, ticks, b.ticks.length, offsets, b.offsets.length, ids, b.ids.length);
  });
  const buffer = new SharedArrayBuffer(size);
  new Float64Array(buffer, 0, header.length).set(header);
  const bytes = new Uint8Array(buffer);
  task.specs.forEach((spec, i) => {
    const h = 1 + HEADER_PER_SENSOR * i;
    const at = (k: number): number => header[h + k] as number;
    const b = task.batches[i] as SensorBatch;
    encodeSpec(spec, new Float64Array(buffer, at(0), SPEC_FIELDS));
    bytes.set(new Uint8Array(task.states[i] as ArrayBuffer), at(1));
    new Float64Array(buffer, at(2), at(3)).set(b.ticks);
    new Int32Array(buffer, at(4), at(5)).set(b.offsets);
    new Int32Array(buffer, at(6), at(7)).set(b.ids);
    new Float32Array(buffer, at(6) + align8(4 * at(7)), STRIDE * at(7)).set(b.people);
  });
  return { buffer, ids: task.specs.map((s) => s.id) };
}

/** Runs a packed task (in a worker): states are updated in place in the shared `task.buffer`. */
export function runPacked(task: PackedTask): PackedResult {
  const buffer = task.buffer;
  const header = new Float64Array(buffer, 0, 1);
  const n = header[0] as number;
  const h = new Float64Array(buffer, 0, 1 + HEADER_PER_SENSOR * n);
  const outs: BatchOutput[] = [];
  let total = 1 + n;
  for (let i = 0; i < n; i++) {
    const at = (k: number): number => h[1 + HEADER_PER_SENSOR * i + k] as number;
    const spec = decodeSpec(task.ids[i] ?? '', new Float64Array(buffer, at(0), SPEC_FIELDS));
    const st = stateViews(spec.cols * spec.rows, buffer, at(1));
    const batch: SensorBatch = {
      ticks: new Float64Array(buffer, at(2), at(3)),
      offsets: new Int32Array(buffer, at(4), at(5)),
      ids: new Int32Array(buffer, at(6), at(7)),
      people: new Float32Array(buffer, at(6) + align8(4 * at(7)), STRIDE * at(7)),
    };
    const out = runBatch(spec, st, batch);
    outs.push(out);
    total += out.length;
  }
  const outputs = new Float64Array(total);
  outputs[0] = n;
  let off = 1 + n;
  outs.forEach((o, i) => {
    outputs[1 + i] = o.length;
    outputs.set(o, off);
    off += o.length;
  });
  return outputs;
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
