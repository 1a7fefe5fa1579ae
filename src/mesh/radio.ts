import { segmentsIntersect, type Polygon, type Vec2 } from '../core/geometry.js';
import type { NetworkModel } from '../scenario/model.js';

/**
 * The 2.4 GHz radio range model of the mesh, pure: log-distance path loss, a fixed loss per
 * wall crossed and per floor between the ends, and a logistic frame-delivery curve around
 * the receiver sensitivity (docs/protocol.md §Mesh).
 */
export type RadioParams = NetworkModel['mesh'];

/** dB lost per floor slab between two radios on different levels. */
export const FLOOR_LOSS_DB = 20;
/** Width, dB, of the logistic transition from no delivery to full delivery. */
const PDR_SCALE_DB = 2;
/** Even a strong link loses the odd frame (interference, channel hopping into a busy channel). */
export const MAX_PDR = 0.995;
/** Links delivering fewer frames than this are not used for routing. */
export const MIN_USABLE_PDR = 0.5;

/**
 * Walls the straight line a→b crosses: each crossing of a room outline counts half, because
 * a wall shared by two rooms is an edge of both outlines.
 */
export function wallsCrossed(a: Vec2, b: Vec2, rooms: readonly Polygon[]): number {
  let crossings = 0;
  for (const poly of rooms) {
    for (let i = 0; i < poly.length; i++) {
      const p = poly[i] as Vec2;
      const q = poly[(i + 1) % poly.length] as Vec2;
      if (segmentsIntersect(a, b, p, q)) crossings++;
    }
  }
  return Math.ceil(crossings / 2);
}

export function rssiDbm(r: RadioParams, distanceM: number, walls: number, floors: number): number {
  const pathLoss = r.refLossDb + 10 * r.pathLossExponent * Math.log10(Math.max(1, distanceM));
  return r.txPowerDbm - pathLoss - walls * r.wallLossDb - floors * FLOOR_LOSS_DB;
}

/** Frame delivery ratio of one attempt at this RSSI. */
export function pdrAt(r: RadioParams, rssi: number): number {
  const p = 1 / (1 + Math.exp(-(rssi - r.sensitivityDbm) / PDR_SCALE_DB));
  return Math.min(MAX_PDR, p);
}
