import { gaussTable, GAUSS_BITS } from './noise.js';
import { BODY, type FrameSpec } from './spec.js';
import type { SensorState } from './state.js';

/**
 * Frame synthesis: one thermal frame of a ceiling thermopile array. Each person is a warm
 * body seen from above — a clothed shoulder box and a warmer head box, each at its height
 * above the floor and projected through the sensor's pinhole (parallax: a part at height h
 * appears at H/(H−h) times its offset from the optical axis, and that much larger) — onto the
 * pixel grid by exact box/pixel overlap (separable, so a person straddling pixels spreads
 * heat over them as a real array integrates radiance), on top of the ambient (HVAC cycle),
 * the fixed pattern and static objects, the seat afterglow and temporal noise.
 */

/** Per-person fields in the people buffer: x, y (sensor-local metres), posture, surface °C. */
export const PERSON_STRIDE = 4;
export const POSTURE_CODE = { walking: 0, standing: 1, sitting: 2 } as const;
/** Afterglow of a warm seat: equilibrium excess (K) and decay time constant (s). */
const GLOW_K = 1.5;
const GLOW_TAU_S = 180;

// Module-level copies: read once per pixel, they must not go through an import binding.
const GAUSS = gaussTable();
const HI_SHIFT = 32 - GAUSS_BITS;
const LO_SHIFT = 16 - GAUSS_BITS;
const LO_MASK = (1 << GAUSS_BITS) - 1;
const {
  shoulderHalfM: SHOULDER_HALF_M,
  seatedShoulderHalfM: SEATED_HALF_M,
  headHalfM: HEAD_HALF_M,
  clothing: CLOTHING,
  hipHalfM: HIP_HALF_M,
  lapHalfM: LAP_HALF_M,
} = BODY;

/** Share of square (ax, ay, half a) covered by square (bx, by, half b). */
function overlapShare(ax: number, ay: number, a: number, bx: number, by: number, b: number): number {
  const ix = Math.max(0, Math.min(ax + a, bx + b) - Math.max(ax - a, bx - b));
  const iy = Math.max(0, Math.min(ay + a, by + b) - Math.max(ay - a, by - b));
  return (ix * iy) / (4 * a * a);
}

/** Measurement range of the array, °C (frames never leave it). */
export const FRAME_MIN_C = -20;
export const FRAME_MAX_C = 100;

/** Reusable per-resolution buffers (never part of a sensor's state). */
export interface Scratch {
  readonly frame: Float32Array;
  readonly diff: Float32Array;
  readonly labels: Int32Array;
  readonly stack: Int32Array;
  readonly covX: Float32Array;
  readonly covY: Float32Array;
  /** Per component: heat, Σw·u, Σw·v, peak, start of its members in `stack`. */
  readonly comp: Float64Array;
  /** Pixels above the detection threshold in this frame, in pixel order. */
  readonly seeds: Int32Array;
  /** Column and row of each pixel index (no division in the flood fill). */
  readonly colOf: Int32Array;
  readonly rowOf: Int32Array;
  /** k-means centres and accumulators of a blob split (detect.ts), 5 × MAX_SPLIT (4). */
  readonly kmeans: Float64Array;
}

export function createScratch(cols: number, rows: number): Scratch {
  const n = cols * rows;
  return {
    frame: new Float32Array(n),
    diff: new Float32Array(n),
    labels: new Int32Array(n),
    stack: new Int32Array(n),
    covX: new Float32Array(cols),
    covY: new Float32Array(rows),
    comp: new Float64Array(5 * (n + 2)),
    seeds: new Int32Array(n),
    colOf: Int32Array.from({ length: n }, (_, p) => p % cols),
    rowOf: Int32Array.from({ length: n }, (_, p) => Math.floor(p / cols)),
    kmeans: new Float64Array(5 * 4),
  };
}

/** Ambient air temperature at `atMs` (sinusoidal HVAC cycle around the set point). */
export function ambientAt(spec: FrameSpec, atMs: number): number {
  if (spec.hvacAmplitudeK === 0 || spec.hvacPeriodMs <= 0) return spec.ambientC;
  return spec.ambientC + spec.hvacAmplitudeK * Math.sin((2 * Math.PI * (atMs - spec.startMs)) / spec.hvacPeriodMs);
}

/** Per-frame decay of the seat afterglow at the sensor's frame rate. */
export function glowDecayPerFrame(spec: FrameSpec): number {
  return Math.exp(-1 / (spec.fps * GLOW_TAU_S));
}

/** Writes one frame (°C per pixel, row-major) into `sc.frame`. `glowDecay`: glowDecayPerFrame(spec). */
export function synthesise(
  spec: FrameSpec,
  st: SensorState,
  sc: Scratch,
  atMs: number,
  people: Float32Array,
  count: number,
  glowDecay: number,
): void {
  const n = spec.cols * spec.rows;
  const amb = ambientAt(spec, atMs);
  const frame = sc.frame;
  const glow = st.glow;
  const fixed = st.fixed;
  const netd = spec.netdK;
  // Marsaglia's xorshift128 inlined on locals (the per-pixel hot loop), on the state noise.ts's seedState made:
  // one draw gives two pixels their noise, from its high and low 16 bits.
  const rs = st.rng;
  let s0 = rs[0] as number;
  let s1 = rs[1] as number;
  let s2 = rs[2] as number;
  let s3 = rs[3] as number;
  for (let p = 0; p < n; p += 2) {
    let t = s3;
    s3 = s2;
    s2 = s1;
    s1 = s0;
    t ^= t << 11;
    t ^= t >>> 8;
    s0 = (t ^ s1 ^ (s1 >>> 19)) >>> 0;
    frame[p] = amb + (fixed[p] as number) + netd * (GAUSS[s0 >>> HI_SHIFT] as number);
    if (p + 1 < n)
      frame[p + 1] = amb + (fixed[p + 1] as number) + netd * (GAUSS[(s0 >>> LO_SHIFT) & LO_MASK] as number);
  }
  if (st.f64[4] === 1) decayGlow(st, frame, n, glowDecay);
  rs[0] = s0;
  rs[1] = s1;
  rs[2] = s2;
  rs[3] = s3;
  for (let k = 0; k < count; k++) {
    const o = k * PERSON_STRIDE;
    const x = people[o] as number;
    const y = people[o + 1] as number;
    if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
    const seated = people[o + 2] === POSTURE_CODE.sitting;
    if (seated) st.f64[4] = 1;
    const surface = people[o + 3] as number;
    const dt = Math.max(0, surface - amb);
    const shoulderK = dt * CLOTHING;
    // Parallax: each part is seen at its own height (pinhole, docs/edge.md).
    const ms = seated ? spec.magnify[2] : spec.magnify[0];
    const mh = seated ? spec.magnify[3] : spec.magnify[1];
    const c = spec.side / 2;
    const sx = c + (x - c) * ms;
    const sy = c + (y - c) * ms;
    const sHalf = (seated ? SEATED_HALF_M : SHOULDER_HALF_M) * ms;
    // Lower body: hidden under the shoulders on the axis, beside them off it (the part of the
    // body still in view when the shoulders have left the field of view at the edge).
    const ml = seated ? spec.magnify[5] : spec.magnify[4];
    const lx = c + (x - c) * ml;
    const ly = c + (y - c) * ml;
    const lHalf = (seated ? LAP_HALF_M : HIP_HALF_M) * ml;
    const shown = 1 - overlapShare(lx, ly, lHalf, sx, sy, sHalf);
    if (shown > 0.01) addBox(spec, sc, lx, ly, lHalf, shoulderK * shown, null, 0);
    addBox(spec, sc, sx, sy, sHalf, shoulderK, seated ? glow : null, GLOW_K * (1 - glowDecay));
    addBox(spec, sc, c + (x - c) * mh, c + (y - c) * mh, HEAD_HALF_M * mh, dt - shoulderK, null, 0);
  }
  // Overlapping bodies add up beyond any real surface: the array saturates at its range.
  if (count > 1)
    for (let p = 0; p < n; p++) frame[p] = Math.min(FRAME_MAX_C, Math.max(FRAME_MIN_C, frame[p] as number));
}

/** Adds the decayed afterglow to the frame; clears it once it has faded (most frames have none). */
function decayGlow(st: SensorState, frame: Float32Array, n: number, decay: number): void {
  const glow = st.glow;
  let max = 0;
  for (let p = 0; p < n; p++) {
    const g = (glow[p] as number) * decay;
    glow[p] = g;
    frame[p] = (frame[p] as number) + g;
    if (g > max) max = g;
  }
  if (max < 1e-3) {
    glow.fill(0);
    st.f64[4] = 0;
  }
}

/**
 * Adds `k` kelvin × (fraction of each pixel covered by the square of half-size `half` at
 * (x, y) metres). When `glow` is given, charges the seat afterglow under the same square.
 */
function addBox(
  spec: FrameSpec,
  sc: Scratch,
  x: number,
  y: number,
  half: number,
  k: number,
  glow: Float32Array | null,
  charge: number,
): void {
  const { cols, rows } = spec;
  const pw = spec.side / cols;
  const ph = spec.side / rows;
  const x0 = (x - half) / pw;
  const x1 = (x + half) / pw;
  const y0 = (y - half) / ph;
  const y1 = (y + half) / ph;
  const i0 = Math.max(0, Math.floor(x0));
  const i1 = Math.min(cols - 1, Math.floor(x1));
  const j0 = Math.max(0, Math.floor(y0));
  const j1 = Math.min(rows - 1, Math.floor(y1));
  if (i0 > i1 || j0 > j1) return;
  const covX = sc.covX;
  const covY = sc.covY;
  for (let i = i0; i <= i1; i++) covX[i] = Math.min(x1, i + 1) - Math.max(x0, i);
  for (let j = j0; j <= j1; j++) covY[j] = Math.min(y1, j + 1) - Math.max(y0, j);
  const frame = sc.frame;
  for (let j = j0; j <= j1; j++) {
    const cy = covY[j] as number;
    const row = j * cols;
    for (let i = i0; i <= i1; i++) {
      const c = cy * (covX[i] as number);
      if (glow) {
        // The sitter hides their own warm seat: their body replaces what the seat shows.
        frame[row + i] = (frame[row + i] as number) + (k - (glow[row + i] as number)) * c;
        glow[row + i] = (glow[row + i] as number) + charge * c;
      } else {
        frame[row + i] = (frame[row + i] as number) + k * c;
      }
    }
  }
}
