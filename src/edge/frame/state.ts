/**
 * A frame sensor's mutable state in one ArrayBuffer, so it can move between threads with the
 * task (transfer, no copy) and come back: fixed-pattern + static-object image, background
 * model, seat afterglow, noise stream, the last frame's detections, tracks and counters.
 * Nothing in it depends on which worker ran the sensor last.
 */

/** Most detections kept per frame (a 32×32 array under a crowd rarely exceeds this). */
export const MAX_DETECTIONS = 24;
/** Most tracks a traffic sensor follows at once. */
export const MAX_TRACKS = 8;
/** Fields per track: x, y (m), missed frames, reference side (−1/0/1), alive (0/1), age. */
export const TRACK_STRIDE = 6;
const F64_FIELDS = 5; // nextFrame, pendingIn, pendingOut, lastFrameMs, glowActive

/** Views over a sensor's state buffer (which buffer: `stateViews`). */
export interface SensorState {
  /** Fixed-pattern offset + static warm objects, K above ambient. */
  readonly fixed: Float32Array;
  /** Background estimate, °C. */
  readonly bg: Float32Array;
  /** Warm-seat afterglow, K. */
  readonly glow: Float32Array;
  /** xorshift128 state. */
  readonly rng: Uint32Array;
  /** [nextFrame, pendingIn, pendingOut, lastFrameMs, glowActive (1 while any afterglow is left)]. */
  readonly f64: Float64Array;
  /** [count, x0, y0, x1, y1, …] of the last frame, sensor-local normalised. */
  readonly det: Float32Array;
  readonly tracks: Float32Array;
}

/** Bytes of state for an array of `pixels` pixels. */
export function stateBytes(pixels: number): number {
  const f32 = 3 * pixels + 1 + 2 * MAX_DETECTIONS + MAX_TRACKS * TRACK_STRIDE;
  return F64_FIELDS * 8 + 16 + align8(f32 * 4);
}

/** A state's views with the buffer under them: a plain one, or a packed task's shared one (packed.ts). */
export type StateOn<B extends ArrayBuffer | SharedArrayBuffer> = SensorState & { readonly buffer: B };

/** Views over a state buffer (a new buffer when none is given), from `byteOffset` (a multiple of 8). */
export function stateViews(pixels: number): StateOn<ArrayBuffer>;
export function stateViews<B extends ArrayBuffer | SharedArrayBuffer>(
  pixels: number,
  buffer: B,
  byteOffset?: number,
): StateOn<B>;
export function stateViews(
  pixels: number,
  buffer: ArrayBuffer | SharedArrayBuffer = new ArrayBuffer(stateBytes(pixels)),
  byteOffset = 0,
): StateOn<ArrayBuffer | SharedArrayBuffer> {
  let off = byteOffset;
  const f64 = new Float64Array(buffer, off, F64_FIELDS);
  off += F64_FIELDS * 8;
  const rng = new Uint32Array(buffer, off, 4);
  off += 16;
  const take = (n: number): Float32Array => {
    const v = new Float32Array(buffer, off, n);
    off += n * 4;
    return v;
  };
  const fixed = take(pixels);
  const bg = take(pixels);
  const glow = take(pixels);
  const det = take(1 + 2 * MAX_DETECTIONS);
  const tracks = take(MAX_TRACKS * TRACK_STRIDE);
  return { buffer, fixed, bg, glow, rng, f64, det, tracks };
}

function align8(n: number): number {
  return Math.ceil(n / 8) * 8;
}
