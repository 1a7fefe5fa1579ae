import { backgroundRates, detect } from './detect.js';
import type { FrameSpec } from './spec.js';
import { MAX_DETECTIONS, type SensorState } from './state.js';
import { createScratch, glowDecayPerFrame, PERSON_STRIDE, synthesise, type Scratch } from './synth.js';
import { track } from './track.js';

/**
 * The frame kernel: runs one sensor over a batch of world ticks — every frame due in the
 * batch is synthesised and detected, and the packets due at the batch's ticks are emitted.
 * Pure function of (spec, state, batch): the same on any thread, whatever ran before.
 */

/**
 * What a sensor saw over a batch of ticks, as typed arrays (cheap to move between threads).
 * `ticks[0]` is the tick before the batch (its people at `offsets[0]…offsets[1]`), so frames
 * between two ticks can interpolate positions; ticks[1…] are the batch's own ticks.
 */
export interface SensorBatch {
  ticks: Float64Array;
  /** People of tick k are ids/people[offsets[k] … offsets[k+1]). */
  offsets: Int32Array;
  ids: Int32Array;
  /** PERSON_STRIDE floats per person: x, y (sensor-local metres), posture code, surface °C. */
  people: Float32Array;
}

/**
 * Packets of a batch, flat: presence `[t, n, x1, y1, …, xn, yn]` per report (sensor-local
 * normalised), traffic `[t, in, out]` per interval.
 */
export type BatchOutput = Float64Array;

/** Module-level copy: read per person per frame, it must not go through an import binding. */
const STRIDE = PERSON_STRIDE;

const scratchByShape = new Map<string, Scratch>();

function scratchFor(cols: number, rows: number): Scratch {
  const key = `${cols}x${rows}`;
  let sc = scratchByShape.get(key);
  if (!sc) scratchByShape.set(key, (sc = createScratch(cols, rows)));
  return sc;
}

/** Time of frame `n` (frames sit on an integer-millisecond grid from the start). */
function frameTime(spec: FrameSpec, n: number): number {
  return spec.startMs + Math.floor((n * 1000) / spec.fps);
}

/**
 * Called after each frame (the frames viewer): the frame (°C), the people synthesised into it
 * (PERSON_STRIDE floats each, sensor-local metres) and the detections ([u, v] pixel units).
 */
export type FrameListener = (
  atMs: number,
  frame: Float32Array,
  people: Float32Array,
  count: number,
  det: Float32Array,
  found: number,
) => void;

/** A batch's packets as they are emitted, appended to a reused array (`OutputBuffer`). */
export class OutputBuffer {
  data = new Float64Array(256);
  length = 0;

  push(v: number): void {
    if (this.length === this.data.length) {
      const grown = new Float64Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = v;
  }
}

export function runBatch(spec: FrameSpec, st: SensorState, batch: SensorBatch, onFrame?: FrameListener): BatchOutput {
  const out = new OutputBuffer();
  runBatchInto(spec, st, batch, out, onFrame);
  return out.data.slice(0, out.length);
}

/** Detections of one frame ([u, v] pixel units) and the people interpolated into it: reused, each is filled before it is read. */
const detScratch = new Float32Array(2 * MAX_DETECTIONS);
let peopleScratch = new Float32Array(64 * STRIDE);

/**
 * `runBatch` appending the batch's packets to `out` (a worker runs every sensor of a task into
 * one buffer: no array per sensor, batch, detection list or interpolation buffer — bench/README.md,
 * "session 7, frame-garbage").
 */
export function runBatchInto(
  spec: FrameSpec,
  st: SensorState,
  batch: SensorBatch,
  out: OutputBuffer,
  onFrame?: FrameListener,
): void {
  const sc = scratchFor(spec.cols, spec.rows);
  const det = detScratch;
  let maxPeople = 0;
  for (let k = 1; k < batch.offsets.length; k++)
    maxPeople = Math.max(maxPeople, (batch.offsets[k] as number) - (batch.offsets[k - 1] as number));
  if (peopleScratch.length < maxPeople * STRIDE) peopleScratch = new Float32Array(maxPeople * STRIDE * 2);
  const buf = peopleScratch;
  const glowDecay = glowDecayPerFrame(spec);
  const rates = backgroundRates(spec);
  for (let k = 1; k < batch.ticks.length; k++) {
    const t0 = batch.ticks[k - 1] as number;
    const t1 = batch.ticks[k] as number;
    for (let tf = frameTime(spec, st.f64[0] as number); tf <= t1; tf = frameTime(spec, st.f64[0] as number)) {
      const frac = t1 > t0 ? Math.min(1, Math.max(0, (tf - t0) / (t1 - t0))) : 1;
      const count = interpolate(batch, k, frac, buf);
      synthesise(spec, st, sc, tf, buf, count, glowDecay);
      const found = detect(spec, st, sc, det, MAX_DETECTIONS, rates);
      if (spec.mode === 1) track(spec, st, det, found);
      onFrame?.(tf, sc.frame, buf, count, det, found);
      keepDetections(spec, st, det, found);
      st.f64[0] = (st.f64[0] as number) + 1;
      st.f64[3] = tf;
    }
    emit(spec, st, t1, out);
  }
}

/** People of tick k, moved `frac` of the way from their tick k−1 position (by id). */
function interpolate(batch: SensorBatch, k: number, frac: number, buf: Float32Array): number {
  const a0 = batch.offsets[k - 1] as number;
  const a1 = batch.offsets[k] as number;
  const b1 = batch.offsets[k + 1] as number;
  const P = batch.people;
  let n = 0;
  for (let q = a1; q < b1; q++) {
    let x = P[q * STRIDE] as number;
    let y = P[q * STRIDE + 1] as number;
    const id = batch.ids[q] as number;
    for (let r = a0; r < a1; r++) {
      if (batch.ids[r] !== id) continue;
      x = (P[r * STRIDE] as number) + frac * (x - (P[r * STRIDE] as number));
      y = (P[r * STRIDE + 1] as number) + frac * (y - (P[r * STRIDE + 1] as number));
      break;
    }
    const o = n * STRIDE;
    buf[o] = x;
    buf[o + 1] = y;
    buf[o + 2] = P[q * STRIDE + 2] as number;
    buf[o + 3] = P[q * STRIDE + 3] as number;
    n++;
  }
  return n;
}

/** Stores the frame's detections, sensor-local normalised, for the next presence report. */
function keepDetections(spec: FrameSpec, st: SensorState, det: Float32Array, found: number): void {
  st.det[0] = found;
  for (let d = 0; d < found; d++) {
    st.det[1 + 2 * d] = Math.min(0.9999, Math.max(0, (det[2 * d] as number) / spec.cols));
    st.det[2 + 2 * d] = Math.min(0.9999, Math.max(0, (det[2 * d + 1] as number) / spec.rows));
  }
}

function emit(spec: FrameSpec, st: SensorState, t: number, out: OutputBuffer): void {
  const elapsed = t - spec.startMs;
  if (spec.mode === 0) {
    if (elapsed % spec.reportIntervalMs !== 0) return;
    const n = st.det[0] as number;
    out.push(t);
    out.push(n);
    for (let d = 0; d < 2 * n; d++) out.push(st.det[1 + d] as number);
    return;
  }
  if (elapsed === 0 || elapsed % spec.reportIntervalMs !== 0) return;
  out.push(t);
  out.push(st.f64[1] as number);
  out.push(st.f64[2] as number);
  st.f64[1] = 0;
  st.f64[2] = 0;
}
