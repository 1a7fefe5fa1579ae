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
 */
export function detect(spec: FrameSpec, st: SensorState, sc: Scratch, out: Float32Array, maxOut: number, rates: readonly [number, number]): number {
  const { cols } = spec;
  const n = cols * spec.rows;
  const { frame, diff, labels, stack, comp } = sc;
  const bg = st.bg;
  const thr = spec.thresholdK;
  const low = thr * LOW_SHARE;
  for (let p = 0; p < n; p++) {
    diff[p] = (frame[p] as number) - (bg[p] as number);
    labels[p] = 0;
  }
  // Members of component c are stack[comp[c·COMP+4] … next start): flood fill writes them in order.
  let ncomp = 0;
  let top = 0;
  for (let p = 0; p < n; p++) {
    if (labels[p] !== 0 || (diff[p] as number) <= thr) continue;
    ncomp++;
    const base = ncomp * COMP;
    comp[base] = 0;
    comp[base + 1] = 0;
    comp[base + 2] = 0;
    comp[base + 3] = 0;
    comp[base + 4] = top;
    let read = top;
    stack[top++] = p;
    labels[p] = ncomp;
    while (read < top) {
      const q = stack[read++] as number;
      const w = diff[q] as number;
      const u = q % cols;
      const v = (q - u) / cols;
      comp[base] = (comp[base] as number) + w;
      comp[base + 1] = (comp[base + 1] as number) + w * (u + 0.5);
      comp[base + 2] = (comp[base + 2] as number) + w * (v + 0.5);
      if (w > (comp[base + 3] as number)) comp[base + 3] = w;
      if (u > 0 && labels[q - 1] === 0 && (diff[q - 1] as number) > low) top = push(stack, labels, top, q - 1, ncomp);
      if (u < cols - 1 && labels[q + 1] === 0 && (diff[q + 1] as number) > low) top = push(stack, labels, top, q + 1, ncomp);
      if (q >= cols && labels[q - cols] === 0 && (diff[q - cols] as number) > low) top = push(stack, labels, top, q - cols, ncomp);
      if (q + cols < n && labels[q + cols] === 0 && (diff[q + cols] as number) > low) top = push(stack, labels, top, q + cols, ncomp);
    }
  }
  let found = 0;
  for (let c = 1; c <= ncomp; c++) {
    const base = c * COMP;
    const heat = comp[base] as number;
    const accepted = heat >= MIN_HEAT_SHARE * spec.personHeat;
    if (!accepted) {
      markRejected(stack, labels, comp[base + 4] as number, c < ncomp ? (comp[base + COMP + 4] as number) : top);
      continue;
    }
    // Two people need clearly more than one person's heat (seated bodies and noise add some).
    const k = Math.min(MAX_SPLIT, Math.max(1, Math.floor(heat / spec.personHeat + SPLIT_BIAS)));
    const start = comp[base + 4] as number;
    const end = c < ncomp ? (comp[base + COMP + 4] as number) : top;
    if (k === 1 || end - start < k) {
      if (found < maxOut) {
        out[2 * found] = (comp[base + 1] as number) / heat;
        out[2 * found + 1] = (comp[base + 2] as number) / heat;
        found++;
      }
    } else {
      found = splitBlob(sc, cols, start, end, k, out, found, maxOut);
    }
  }
  updateBackground(st, sc, n, rates[0], rates[1]);
  return found;
}

function push(stack: Int32Array, labels: Int32Array, top: number, q: number, c: number): number {
  labels[q] = c;
  stack[top] = q;
  return top + 1;
}

/** Rejected blobs count as background (label −1) so the model keeps learning them. */
function markRejected(stack: Int32Array, labels: Int32Array, start: number, end: number): void {
  for (let m = start; m < end; m++) labels[stack[m] as number] = -1;
}

/**
 * Background: pixels outside accepted blobs follow the frame quickly (drift, afterglow);
 * pixels under a person follow it only with `absorbTauS`, so someone sitting still is not
 * absorbed into the background for many minutes.
 */
function updateBackground(st: SensorState, sc: Scratch, n: number, aBg: number, aFg: number): void {
  const { diff, labels } = sc;
  const bg = st.bg;
  for (let p = 0; p < n; p++) {
    const a = (labels[p] as number) > 0 ? aFg : aBg;
    bg[p] = (bg[p] as number) + a * (diff[p] as number);
  }
}

/** Weighted k-means over a blob's pixels, seeded along its principal axis. */
function splitBlob(sc: Scratch, cols: number, start: number, end: number, k: number, out: Float32Array, found: number, maxOut: number): number {
  const { stack, diff } = sc;
  let sw = 0;
  let mu = 0;
  let mv = 0;
  for (let m = start; m < end; m++) {
    const q = stack[m] as number;
    const w = diff[q] as number;
    sw += w;
    mu += w * ((q % cols) + 0.5);
    mv += w * (Math.floor(q / cols) + 0.5);
  }
  mu /= sw;
  mv /= sw;
  let suu = 0;
  let svv = 0;
  let suv = 0;
  for (let m = start; m < end; m++) {
    const q = stack[m] as number;
    const w = diff[q] as number;
    const du = (q % cols) + 0.5 - mu;
    const dv = Math.floor(q / cols) + 0.5 - mv;
    suu += w * du * du;
    svv += w * dv * dv;
    suv += w * du * dv;
  }
  // Principal axis of the weighted covariance.
  const theta = 0.5 * Math.atan2(2 * suv, suu - svv);
  const ex = Math.cos(theta);
  const ey = Math.sin(theta);
  const spread = Math.sqrt(Math.max(1e-6, (suu * ex * ex + 2 * suv * ex * ey + svv * ey * ey) / sw));
  const cu = new Float64Array(k);
  const cv = new Float64Array(k);
  for (let c = 0; c < k; c++) {
    const t = k === 1 ? 0 : (2 * c) / (k - 1) - 1;
    cu[c] = mu + ex * spread * t * 1.2;
    cv[c] = mv + ey * spread * t * 1.2;
  }
  lloyd(sc, cols, start, end, cu, cv);
  for (let c = 0; c < k && found < maxOut; c++) {
    out[2 * found] = cu[c] as number;
    out[2 * found + 1] = cv[c] as number;
    found++;
  }
  return found;
}

function lloyd(sc: Scratch, cols: number, start: number, end: number, cu: Float64Array, cv: Float64Array): void {
  const k = cu.length;
  const acc = new Float64Array(3 * k);
  for (let iter = 0; iter < 6; iter++) {
    acc.fill(0);
    for (let m = start; m < end; m++) {
      const q = sc.stack[m] as number;
      const w = sc.diff[q] as number;
      const u = (q % cols) + 0.5;
      const v = Math.floor(q / cols) + 0.5;
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
