import { footprintTransform, type FootprintTransform } from '../core/footprint.js';
import { rngFor, type Rng } from '../core/rng.js';
import type { NoiseModel, SensorModel, SensorModelName } from '../scenario/model.js';
import type { PersonState } from '../sim/types.js';
import type { EdgePacketWriter } from './edge-packets.js';
import type { PresencePacket } from './packet.js';

/**
 * Presence sensor at `--fidelity model`: no frames, a statistical error model instead
 * (docs/sensor-model.md). It sees the people of its own room inside its footprint (walls
 * block thermal radiation), misses some, merges people standing closer than a blob, adds
 * position jitter and occasional false detections.
 */

/** Two people closer than this appear as one blob to a low-resolution array. */
const BLOB_MERGE_M = 0.35;
/** Mounting height at which `jitterM` and `miss` apply unscaled. */
const REFERENCE_HEIGHT_M = 3;
/**
 * Per-array factors on `miss` and `jitterM`, calibrated against the frame detector's measured
 * accuracy on quickstart (docs/sensor-model.md, "Calibration"): coarse arrays miss and
 * mislocate far more than fine ones.
 */
export const RESOLUTION_FACTORS: Record<SensorModelName, { miss: number; jitter: number }> = {
  'tp-8x8': { miss: 2.5, jitter: 0.85 },
  'tp-16x12': { miss: 0.6, jitter: 0.25 },
  'tp-32x24': { miss: 0.2, jitter: 0.12 },
  'tp-32x32': { miss: 0.15, jitter: 0.1 },
};

const NO_DETECTIONS: ReadonlyArray<readonly [number, number]> = Object.freeze([]);

export class ModelPresenceSensor {
  readonly sensor: SensorModel;
  readonly #footprint: FootprintTransform;
  readonly #rng: Rng;
  readonly #noise: NoiseModel['presence'];
  readonly #startMs: number;
  // Reused per sample: the people this sensor sees.
  readonly #seenX: number[] = [];
  readonly #seenY: number[] = [];
  /** Reused per sample: the detections, copied into the packet when there are any. */
  readonly #found: Array<readonly [number, number]> = [];

  constructor(sensor: SensorModel, noise: NoiseModel['presence'], seed: number, startMs: number) {
    this.sensor = sensor;
    this.#footprint = footprintTransform({
      center: sensor.center,
      height: sensor.height,
      orientationDeg: sensor.orientationDeg,
      fovDeg: sensor.fovDeg,
    });
    this.#rng = rngFor(seed, sensor.id);
    this.#noise = noise;
    this.#startMs = startMs;
  }

  /** A packet when a report is due at `atMs` (every reportIntervalMs from the start), else null. */
  sample(atMs: number, people: readonly PersonState[]): PresencePacket | null {
    if (!this.#sense(atMs, people)) return null;
    const found = this.#found;
    // Most reports see nobody: they share one frozen empty array.
    const detections = found.length === 0 ? NO_DETECTIONS : found.slice();
    return { kind: 'presence', sensorId: this.sensor.id, sensedAtMs: atMs, detections };
  }

  /**
   * The same report written into the edge's flat packets under `sensorIndex` (no object that
   * lives until the hand-off); the same draws, so the same numbers as `sample`. Whether one was due.
   */
  sampleInto(atMs: number, people: readonly PersonState[], out: EdgePacketWriter, sensorIndex: number): boolean {
    if (!this.#sense(atMs, people)) return false;
    out.presence(sensorIndex, atMs);
    for (const [x, y] of this.#found) out.detection(x, y);
    out.end();
    return true;
  }

  /** Fills `#found` with the report's detections when one is due at `atMs`. */
  #sense(atMs: number, people: readonly PersonState[]): boolean {
    if ((atMs - this.#startMs) % this.sensor.reportIntervalMs !== 0) return false;
    this.#collectVisible(people);
    const found = this.#found;
    found.length = 0;
    this.#detectPeople(found);
    this.#addFalsePositives(found);
    return true;
  }

  #collectVisible(people: readonly PersonState[]): void {
    this.#seenX.length = 0;
    this.#seenY.length = 0;
    const room = this.sensor.roomId;
    for (const p of people) {
      if (p.roomId !== room || !this.#footprint.sees(p.x, p.y)) continue;
      // Blob merging: a person within BLOB_MERGE_M of one already seen shares their blob.
      let merged = false;
      for (let i = 0; i < this.#seenX.length; i++) {
        const dx = (this.#seenX[i] as number) - p.x;
        const dy = (this.#seenY[i] as number) - p.y;
        if (dx * dx + dy * dy < BLOB_MERGE_M * BLOB_MERGE_M) {
          this.#seenX[i] = ((this.#seenX[i] as number) + p.x) / 2;
          this.#seenY[i] = ((this.#seenY[i] as number) + p.y) / 2;
          merged = true;
          break;
        }
      }
      if (!merged) {
        this.#seenX.push(p.x);
        this.#seenY.push(p.y);
      }
    }
  }

  #detectPeople(out: Array<readonly [number, number]>): void {
    const heightScale = this.sensor.height / REFERENCE_HEIGHT_M;
    const n = this.#seenX.length;
    // Higher mounting → fewer pixels per person; crowds → more occlusion of blob edges.
    const f = RESOLUTION_FACTORS[this.sensor.model];
    const pMiss = Math.min(0.9, this.#noise.miss * f.miss * heightScale * heightScale * (1 + 0.15 * Math.max(0, n - 1)));
    const sd = this.#noise.jitterM * f.jitter * heightScale;
    for (let i = 0; i < n; i++) {
      // Draw both numbers whatever the outcome, so one miss does not shift later draws' meaning.
      const missed = this.#rng.chance(pMiss);
      const x = this.#rng.normal(this.#seenX[i] as number, sd);
      const y = this.#rng.normal(this.#seenY[i] as number, sd);
      if (missed) continue;
      out.push(this.#toLocal(x, y));
    }
  }

  #addFalsePositives(out: Array<readonly [number, number]>): void {
    if (!this.#rng.chance(this.#noise.falsePositive)) return;
    out.push([Math.fround(this.#rng.next()), Math.fround(this.#rng.next())]);
  }

  /** Sensor-local coordinates, clamped into the footprint and rounded to float32 as on the wire. */
  #toLocal(x: number, y: number): readonly [number, number] {
    const [lx, ly] = this.#footprint.toLocal(x, y);
    const clamp = (v: number): number => Math.fround(Math.min(0.9999, Math.max(0, v)));
    return [clamp(lx), clamp(ly)];
  }
}
