import type { FrameSpec } from './spec.js';
import { MAX_TRACKS, TRACK_STRIDE, type SensorState } from './state.js';

/**
 * Traffic mode: multi-target tracking across frames and door-line counting. Detections are
 * gated (a person moves well under GATE_M between two frames at 5–8 fps) and assigned to
 * tracks greedily by distance; a track counts a crossing when it has been seen clearly on
 * one side of the door line (farther than BAND_M) and then clearly on the other, so someone
 * lingering on the line is not counted again and again (debouncing).
 *
 * At a floor entrance the world has no people outside the floor (they appear just inside
 * and vanish just outside between two ticks), so a track born next to an entrance's line
 * counts as coming in, and one lost next to it after being inside as going out.
 */
/** A track born or lost this close to an entrance line came from / went through it, metres. */
const ENTRANCE_M = 1.5;
/** A track lost closer than this to the footprint's edge walked out of view. */
const VIEW_EDGE_M = 0.3;
const GATE_M = 0.9;
const BAND_M = 0.15;
/** Frames a track survives without a detection. */
const MAX_MISSED = 4;
const X = 0;
const Y = 1;
const MISSED = 2;
const SIDE = 3;
const ALIVE = 4;

/**
 * Advances the tracks with one frame's detections ([u, v] pixel units); adds counted
 * crossings to st.f64[1] (in) and st.f64[2] (out).
 */
export function track(spec: FrameSpec, st: SensorState, det: Float32Array, count: number): void {
  const pw = spec.side / spec.cols;
  const ph = spec.side / spec.rows;
  const tr = st.tracks;
  const used = new Uint8Array(count);
  const matched = new Uint8Array(MAX_TRACKS);
  // Greedy assignment in order of distance: repeatedly take the closest gated pair.
  for (;;) {
    let best = -1;
    let bestT = -1;
    let bestD = GATE_M * GATE_M;
    for (let t = 0; t < MAX_TRACKS; t++) {
      if (tr[t * TRACK_STRIDE + ALIVE] !== 1 || matched[t] === 1) continue;
      for (let d = 0; d < count; d++) {
        if (used[d] === 1) continue;
        const dx = (det[2 * d] as number) * pw - (tr[t * TRACK_STRIDE + X] as number);
        const dy = (det[2 * d + 1] as number) * ph - (tr[t * TRACK_STRIDE + Y] as number);
        const dd = dx * dx + dy * dy;
        if (dd < bestD) {
          bestD = dd;
          best = d;
          bestT = t;
        }
      }
    }
    if (best < 0) break;
    used[best] = 1;
    matched[bestT] = 1;
    moveTrack(spec, st, bestT, (det[2 * best] as number) * pw, (det[2 * best + 1] as number) * ph);
  }
  for (let t = 0; t < MAX_TRACKS; t++) {
    const o = t * TRACK_STRIDE;
    if (tr[o + ALIVE] !== 1 || matched[t] === 1) continue;
    tr[o + MISSED] = (tr[o + MISSED] as number) + 1;
    if ((tr[o + MISSED] as number) <= MAX_MISSED) continue;
    tr[o + ALIVE] = 0;
    const [x, y] = [tr[o + X] as number, tr[o + Y] as number];
    if (spec.entrance === 1 && tr[o + SIDE] === spec.inSign && nearDoor(spec, x, y) && insideView(spec, x, y)) {
      st.f64[2] = (st.f64[2] as number) + 1;
    }
  }
  for (let d = 0; d < count; d++)
    if (used[d] !== 1) startTrack(spec, st, (det[2 * d] as number) * pw, (det[2 * d + 1] as number) * ph);
}

/** Signed distance (m) of a point from the door line, positive on the left of a→b. */
export function sideOf(spec: FrameSpec, x: number, y: number): number {
  const [ax, ay, bx, by] = spec.door;
  const len = Math.hypot(bx - ax, by - ay) || 1;
  return ((bx - ax) * (y - ay) - (by - ay) * (x - ax)) / len;
}

/** True when (x, y) is within ENTRANCE_M of the door segment. */
function nearDoor(spec: FrameSpec, x: number, y: number): boolean {
  const [ax, ay, bx, by] = spec.door;
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.min(1, Math.max(0, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy || 1)));
  return Math.hypot(x - ax - t * dx, y - ay - t * dy) < ENTRANCE_M;
}

/** True when (x, y) is well inside the footprint: a track lost there vanished, it did not walk out of view. */
function insideView(spec: FrameSpec, x: number, y: number): boolean {
  return Math.min(x, y, spec.side - x, spec.side - y) > VIEW_EDGE_M;
}

function sideClass(d: number): number {
  return d > BAND_M ? 1 : d < -BAND_M ? -1 : 0;
}

function moveTrack(spec: FrameSpec, st: SensorState, t: number, x: number, y: number): void {
  const tr = st.tracks;
  const o = t * TRACK_STRIDE;
  tr[o + X] = x;
  tr[o + Y] = y;
  tr[o + MISSED] = 0;
  const side = sideClass(sideOf(spec, x, y));
  if (side === 0) return;
  const ref = tr[o + SIDE] as number;
  if (ref !== 0 && side !== ref) {
    // Crossed from `ref` to `side`: entering when it ends on the in-room's side.
    if (side === spec.inSign) st.f64[1] = (st.f64[1] as number) + 1;
    else st.f64[2] = (st.f64[2] as number) + 1;
  }
  tr[o + SIDE] = side;
}

function startTrack(spec: FrameSpec, st: SensorState, x: number, y: number): void {
  const tr = st.tracks;
  for (let t = 0; t < MAX_TRACKS; t++) {
    const o = t * TRACK_STRIDE;
    if (tr[o + ALIVE] === 1) continue;
    tr[o + X] = x;
    tr[o + Y] = y;
    tr[o + MISSED] = 0;
    const side = sideClass(sideOf(spec, x, y));
    tr[o + SIDE] = side;
    tr[o + ALIVE] = 1;
    if (spec.entrance === 1 && side !== -spec.inSign && nearDoor(spec, x, y) && insideView(spec, x, y)) {
      // Came in from outside the floor: count it now, or when it leaves the line band.
      if (side === spec.inSign) st.f64[1] = (st.f64[1] as number) + 1;
      else tr[o + SIDE] = -spec.inSign;
    }
    tr[o + 5] = 0;
    return;
  }
}
