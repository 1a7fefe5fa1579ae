import type { FrameSpec } from './spec.js';
import type { SensorState } from './state.js';
import type { Scratch } from './synth.js';

/**
 * Edge detection on one frame: difference against an adaptive per-pixel background,
 * hysteresis threshold from the sensor's sensitivity, 4-connected components, rejection of
 * blobs too faint to be a person, heat-weighted sub-pixel centroids, and splitting of a blob
 * carrying the heat of several people (weighted k-means along its principal axis).
 * Detections are written in pixel units (u across columns, v across rows).
 */

/** Background time constant on pixels with no one on them, seconds (tracks HVAC drift). */
const BG_TAU_S = 30;
/** Region growing continues down to this share of the threshold (hysteresis). */
const LOW_SHARE = 0.5;
/** A blob with less than this share of one person's heat is noise or afterglow. */
const MIN_HEAT_SHARE = 0.4;
/** Most people one blob may be split into. */
const MAX_SPLIT = 4;
/** Added to heat/personHeat before flooring into a head count: 1.6 persons' heat make 2. */
const SPLIT_BIAS = 0.4;
const COMP = 5; // heat, Σw·u, Σw·v, peak, start offset in the member list

/** Background learning rates per frame: [on background pixels, under a detected person]. */
export function backgroundRates(spec: FrameSpec): [number, number] {
  return [1 - Math.exp(-1 / (spec.fps * BG_TAU_S)), 1 - Math.exp(-1 / (spec.fps * spec.absorbTauS))];
}

/**
 * Detects people in `sc.frame`; writes [u, v] pairs into `out`; returns how many. Updates
 * the background with `rates` (backgroundRates(spec)).
 *
 * Hot path (~1 µs per 8×8 frame): one pass computes the difference, moves every pixel's
 * background at the fast rate and collects seed pixels; connected components run only when
 * some pixel exceeds the threshold, and pixels under an accepted person then get their
 * background moved back to the slow rate. `sc.labels` is all zero between calls.
 */
export function detect(
  spec: FrameSpec,
  st: SensorState,
  sc: Scratch,
  out: Float32Array,
  maxOut: number,
  rates: readonly [number, number],
): number {
  const n = spec.cols * spec.rows;
  const frame = sc.frame;
  const diff = sc.diff;
  const seeds = sc.seeds;
  const bg = st.bg;
  const thr = spec.thresholdK;
  const aBg = rates[0];
  let nseeds = 0;
  for (let p = 0; p < n; p++) {
    const b = bg[p] as number;
    const d = (frame[p] as number) - b;
    diff[p] = d;
    bg[p] = b + aBg * d;
    if (d > thr) seeds[nseeds++] = p;
  }
  if (nseeds === 0) return 0;
  const ncomp = components(spec, sc, nseeds);
  return classify(spec, st, sc, ncomp, out, maxOut, rates[1] - aBg);
}

/**
 * 4-connected flood fill from the seeds (in pixel order), grown down to LOW_SHARE of the
 * threshold. Members of component c are stack[comp[c·COMP+4] … comp[(c+1)·COMP+4]); the
 * start of component ncomp+1 is written too, so the last one has an end.
 */
function components(spec: FrameSpec, sc: Scratch, nseeds: number): number {
  const cols = spec.cols;
  const n = cols * spec.rows;
  const { diff, labels, stack, comp, seeds, colOf, rowOf } = sc;
  const low = spec.thresholdK * LOW_SHARE;
  let ncomp = 0;
  let top = 0;
  for (let s = 0; s < nseeds; s++) {
    const p = seeds[s] as number;
    if (labels[p] !== 0) continue;
    ncomp++;
    const start = top;
    let heat = 0;
    let su = 0;
    let sv = 0;
    let peak = 0;
    let read = top;
    stack[top++] = p;
    labels[p] = ncomp;
    while (read < top) {
      const q = stack[read++] as number;
      const w = diff[q] as number;
      const u = colOf[q] as number;
      heat += w;
      su += w * (u + 0.5);
      sv += w * ((rowOf[q] as number) + 0.5);
      if (w > peak) peak = w;
      if (u > 0 && labels[q - 1] === 0 && (diff[q - 1] as number) > low) top = push(stack, labels, top, q - 1, ncomp);
      if (u < cols - 1 && labels[q + 1] === 0 && (diff[q + 1] as number) > low)
        top = push(stack, labels, top, q + 1, ncomp);
      if (q >= cols && labels[q - cols] === 0 && (diff[q - cols] as number) > low)
        top = push(stack, labels, top, q - cols, ncomp);
      if (q + cols < n && labels[q + cols] === 0 && (diff[q + cols] as number) > low)
        top = push(stack, labels, top, q + cols, ncomp);
    }
    const base = ncomp * COMP;
    comp[base] = heat;
    comp[base + 1] = su;
    comp[base + 2] = sv;
    comp[base + 3] = peak;
    comp[base + 4] = start;
  }
  comp[(ncomp + 1) * COMP + 4] = top;
  return ncomp;
}

/**
 * Turns components into detections (rejecting faint ones, splitting merged ones), moves the
 * background under accepted people back to the slow rate (`fgMinusBg` = aFg − aBg), and
 * clears the labels.
 */
function classify(
  spec: FrameSpec,
  st: SensorState,
  sc: Scratch,
  ncomp: number,
  out: Float32Array,
  maxOut: number,
  fgMinusBg: number,
): number {
  const { comp, stack, labels, diff } = sc;
  const bg = st.bg;
  let found = 0;
  for (let c = 1; c <= ncomp; c++) {
    const base = c * COMP;
    const heat = comp[base] as number;
    const start = comp[base + 4] as number;
    const end = comp[base + COMP + 4] as number;
    if (heat < MIN_HEAT_SHARE * spec.personHeat) continue; // noise or afterglow: background keeps learning it
    for (let m = start; m < end; m++) {
      const q = stack[m] as number;
      bg[q] = (bg[q] as number) + fgMinusBg * (diff[q] as number);
    }
    // Two people need clearly more than one person's heat (seated bodies and noise add some).
    const k = Math.min(MAX_SPLIT, Math.max(1, Math.floor(heat / spec.personHeat + SPLIT_BIAS)));
    if (k === 1 || end - start < k) {
      if (found < maxOut) {
        out[2 * found] = (comp[base + 1] as number) / heat;
        out[2 * found + 1] = (comp[base + 2] as number) / heat;
        found++;
      }
    } else {
      found = splitBlob(sc, start, end, k, out, found, maxOut);
    }
  }
  const top = comp[(ncomp + 1) * COMP + 4] as number;
  for (let m = 0; m < top; m++) labels[stack[m] as number] = 0;
  return found;
}

function push(stack: Int32Array, labels: Int32Array, top: number, q: number, c: number): number {
  labels[q] = c;
  stack[top] = q;
  return top + 1;
}

/** Weighted k-means over a blob's pixels, seeded along its principal axis. */
function splitBlob(
  sc: Scratch,
  start: number,
  end: number,
  k: number,
  out: Float32Array,
  found: number,
  maxOut: number,
): number {
  const { stack, diff } = sc;
  let sw = 0;
  let mu = 0;
  let mv = 0;
  for (let m = start; m < end; m++) {
    const q = stack[m] as number;
    const w = diff[q] as number;
    sw += w;
    mu += w * ((sc.colOf[q] as number) + 0.5);
    mv += w * ((sc.rowOf[q] as number) + 0.5);
  }
  mu /= sw;
  mv /= sw;
  let suu = 0;
  let svv = 0;
  let suv = 0;
  for (let m = start; m < end; m++) {
    const q = stack[m] as number;
    const w = diff[q] as number;
    const du = (sc.colOf[q] as number) + 0.5 - mu;
    const dv = (sc.rowOf[q] as number) + 0.5 - mv;
    suu += w * du * du;
    svv += w * dv * dv;
    suv += w * du * dv;
  }
  // Principal axis of the weighted covariance.
  const theta = 0.5 * Math.atan2(2 * suv, suu - svv);
  const ex = Math.cos(theta);
  const ey = Math.sin(theta);
  const spread = Math.sqrt(Math.max(1e-6, (suu * ex * ex + 2 * suv * ex * ey + svv * ey * ey) / sw));
  const cu = sc.kmeans.subarray(0, k);
  const cv = sc.kmeans.subarray(MAX_SPLIT, MAX_SPLIT + k);
  for (let c = 0; c < k; c++) {
    const t = k === 1 ? 0 : (2 * c) / (k - 1) - 1;
    cu[c] = mu + ex * spread * t * 1.2;
    cv[c] = mv + ey * spread * t * 1.2;
  }
  lloyd(sc, start, end, cu, cv);
  for (let c = 0; c < k && found < maxOut; c++) {
    out[2 * found] = cu[c] as number;
    out[2 * found + 1] = cv[c] as number;
    found++;
  }
  return found;
}

function lloyd(sc: Scratch, start: number, end: number, cu: Float64Array, cv: Float64Array): void {
  const k = cu.length;
  const acc = sc.kmeans.subarray(2 * MAX_SPLIT, 2 * MAX_SPLIT + 3 * k);
  for (let iter = 0; iter < 6; iter++) {
    acc.fill(0);
    for (let m = start; m < end; m++) {
      const q = sc.stack[m] as number;
      const w = sc.diff[q] as number;
      const u = (sc.colOf[q] as number) + 0.5;
      const v = (sc.rowOf[q] as number) + 0.5;
      let best = 0;
      let bestD = Infinity;
      for (let c = 0; c < k; c++) {
        const d = (u - (cu[c] as number)) ** 2 + (v - (cv[c] as number)) ** 2;
        if (d < bestD) {
          bestD = d;
          best = c;
        }
      }
      acc[3 * best] = (acc[3 * best] as number) + w;
      acc[3 * best + 1] = (acc[3 * best + 1] as number) + w * u;
      acc[3 * best + 2] = (acc[3 * best + 2] as number) + w * v;
    }
    for (let c = 0; c < k; c++) {
      const w = acc[3 * c] as number;
      if (w > 0) {
        cu[c] = (acc[3 * c + 1] as number) / w;
        cv[c] = (acc[3 * c + 2] as number) / w;
      }
    }
  }
}
