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

/** Rounded to float32 as on the wire, inside the footprint. */
const clampLocal = (v: number): number => Math.fround(Math.min(0.9999, Math.max(0, v)));

/**
 * Reused per sample, one set for every sensor (sampling is synchronous, one sensor at a time):
 * the blobs a sensor sees and the detections it reports, as numbers. Per-sensor arrays emptied
 * with `length = 0` gave their backing store back and grew a new one at the next sample, and
 * each detection was a tuple: garbage per sensor and tick (bench/README.md, "scale-main").
 */
class Scratch {
  seenX = new Float64Array(16);
  seenY = new Float64Array(16);
  seen = 0;
  /** Detections, x and y interleaved. */
  found = new Float64Array(32);
  nFound = 0;

  see(x: number, y: number): void {
    if (this.seen === this.seenX.length) {
      this.seenX = grown(this.seenX);
      this.seenY = grown(this.seenY);
    }
    this.seenX[this.seen] = x;
    this.seenY[this.seen] = y;
    this.seen++;
  }

  find(x: number, y: number): void {
    if (2 * this.nFound + 2 > this.found.length) this.found = grown(this.found);
    this.found[2 * this.nFound] = x;
    this.found[2 * this.nFound + 1] = y;
    this.nFound++;
  }
}

function grown(a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> {
  const next = new Float64Array(a.length * 2);
  next.set(a);
  return next;
}

const scratch = new Scratch();

export class ModelPresenceSensor {
  readonly sensor: SensorModel;
  readonly #footprint: FootprintTransform;
  readonly #rng: Rng;
  readonly #noise: NoiseModel['presence'];
  readonly #startMs: number;

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
    if (!this.#sense(atMs, people, 0, people.length)) return null;
    const { found, nFound } = scratch;
    // Most reports see nobody: they share one frozen empty array.
    if (nFound === 0)
      return { kind: 'presence', sensorId: this.sensor.id, sensedAtMs: atMs, detections: NO_DETECTIONS };
    const detections: Array<readonly [number, number]> = [];
    for (let k = 0; k < nFound; k++) detections.push([found[2 * k] as number, found[2 * k + 1] as number]);
    return { kind: 'presence', sensorId: this.sensor.id, sensedAtMs: atMs, detections };
  }

  /**
   * The same report written into the edge's flat packets under `sensorIndex` (no object that
   * lives until the hand-off); the same draws, so the same numbers as `sample`. `people[from …
   * to)` are the people it may see (its floor's, or only its room's: RoomPeople — others are
   * skipped by room either way). Whether one was due.
   */
  sampleInto(
    atMs: number,
    people: readonly PersonState[],
    out: EdgePacketWriter,
    sensorIndex: number,
    from = 0,
    to = people.length,
  ): boolean {
    if (!this.#sense(atMs, people, from, to)) return false;
    out.presence(sensorIndex, atMs);
    const { found, nFound } = scratch;
    for (let k = 0; k < nFound; k++) out.detection(found[2 * k] as number, found[2 * k + 1] as number);
    out.end();
    return true;
  }

  /** Fills the scratch's detections with the report's when one is due at `atMs`. */
  #sense(atMs: number, people: readonly PersonState[], from: number, to: number): boolean {
    if ((atMs - this.#startMs) % this.sensor.reportIntervalMs !== 0) return false;
    this.#collectVisible(people, from, to);
    scratch.nFound = 0;
    this.#detectPeople();
    this.#addFalsePositives();
    return true;
  }

  #collectVisible(people: readonly PersonState[], from: number, to: number): void {
    const sc = scratch;
    sc.seen = 0;
    const room = this.sensor.roomId;
    for (let k = from; k < to; k++) {
      const p = people[k] as PersonState;
      if (p.roomId !== room || !this.#footprint.sees(p.x, p.y)) continue;
      // Blob merging: a person within BLOB_MERGE_M of one already seen shares their blob.
      let merged = false;
      for (let i = 0; i < sc.seen; i++) {
        const dx = (sc.seenX[i] as number) - p.x;
        const dy = (sc.seenY[i] as number) - p.y;
        if (dx * dx + dy * dy < BLOB_MERGE_M * BLOB_MERGE_M) {
          sc.seenX[i] = ((sc.seenX[i] as number) + p.x) / 2;
          sc.seenY[i] = ((sc.seenY[i] as number) + p.y) / 2;
          merged = true;
          break;
        }
      }
      if (!merged) sc.see(p.x, p.y);
    }
  }

  #detectPeople(): void {
    const sc = scratch;
    const heightScale = this.sensor.height / REFERENCE_HEIGHT_M;
    const n = sc.seen;
    // Higher mounting → fewer pixels per person; crowds → more occlusion of blob edges.
    const f = RESOLUTION_FACTORS[this.sensor.model];
    const pMiss = Math.min(
      0.9,
      this.#noise.miss * f.miss * heightScale * heightScale * (1 + 0.15 * Math.max(0, n - 1)),
    );
    const sd = this.#noise.jitterM * f.jitter * heightScale;
    for (let i = 0; i < n; i++) {
      // Draw both numbers whatever the outcome, so one miss does not shift later draws' meaning.
      const missed = this.#rng.chance(pMiss);
      const x = this.#rng.normal(sc.seenX[i] as number, sd);
      const y = this.#rng.normal(sc.seenY[i] as number, sd);
      if (missed) continue;
      // Sensor-local coordinates, clamped into the footprint and rounded to float32 as on the wire.
      const [lx, ly] = this.#footprint.toLocal(x, y);
      sc.find(clampLocal(lx), clampLocal(ly));
    }
  }

  #addFalsePositives(): void {
    if (!this.#rng.chance(this.#noise.falsePositive)) return;
    const x = Math.fround(this.#rng.next());
    scratch.find(x, Math.fround(this.#rng.next()));
  }
}
