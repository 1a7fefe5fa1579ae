import { rngFor, type Rng } from '../core/rng.js';
import type { DoorModel, NoiseModel, SensorModel } from '../scenario/model.js';
import type { DoorCrossing } from '../sim/types.js';
import type { EdgePacketWriter } from './edge-packets.js';
import type { TrafficPacket } from './packet.js';

/**
 * Traffic sensor at `--fidelity model`: counts the crossings of its door line with a miss
 * probability, higher when another person crossed just before (side by side or on their
 * heels, the classic failure of door-line counting), per array (TRAFFIC_CALIBRATION), and
 * reports in/out per interval.
 */

/**
 * Per-array traffic error, fitted against the frame detector (docs/sensor-model.md, "Traffic
 * calibration"): `miss` multiplies the scenario's `miss` (a crossing alone), `crowd` its
 * `crowd_miss`, which applies to a crossing within `windowMs` of the previous one — a coarse
 * array loses people who follow each other closely, not only those side by side. Fitted on
 * test/edge/fixtures/door-calibration.yaml (843 crossings): model recall within 0.04 of the
 * frame detector's 73.4 / 91.2 / 90.4 / 92.2 % at 8×8 / 16×12 / 32×24 / 32×32.
 */
export const TRAFFIC_CALIBRATION: Readonly<
  Record<SensorModel['model'], { miss: number; crowd: number; windowMs: number }>
> = {
  'tp-8x8': { miss: 0.5, crowd: 4.3, windowMs: 3000 },
  'tp-16x12': { miss: 0.5, crowd: 1.7, windowMs: 2000 },
  'tp-32x24': { miss: 0.5, crowd: 1.85, windowMs: 2000 },
  'tp-32x32': { miss: 0.5, crowd: 1.5, windowMs: 2000 },
};
/** A crossing is never missed with certainty by the model. */
const MAX_MISS = 0.95;

export class ModelTrafficSensor {
  readonly sensor: SensorModel;
  readonly #rng: Rng;
  readonly #noise: NoiseModel['traffic'];
  readonly #startMs: number;
  /** True when the sensor's "in" is the door's "in" (its room is the door's toRoom). */
  readonly #sameSense: boolean;
  readonly #cal: (typeof TRAFFIC_CALIBRATION)[SensorModel['model']];
  #in = 0;
  #out = 0;
  #lastCrossingMs = Number.NEGATIVE_INFINITY;

  constructor(sensor: SensorModel, door: DoorModel, noise: NoiseModel['traffic'], seed: number, startMs: number) {
    this.sensor = sensor;
    this.#rng = rngFor(seed, sensor.id);
    this.#noise = noise;
    this.#startMs = startMs;
    this.#sameSense = sensor.roomId === door.toRoomId;
    this.#cal = TRAFFIC_CALIBRATION[sensor.model];
  }

  /** Counts this tick's crossings of the door; returns the interval's packet when one is due. */
  sample(atMs: number, crossings: readonly DoorCrossing[]): TrafficPacket | null {
    if (!this.#count(atMs, crossings)) return null;
    const packet: TrafficPacket = {
      kind: 'traffic',
      sensorId: this.sensor.id,
      sensedAtMs: atMs,
      intervalMs: this.sensor.reportIntervalMs,
      in: this.#in,
      out: this.#out,
    };
    this.#in = 0;
    this.#out = 0;
    return packet;
  }

  /** The same, the packet written into the edge's flat packets under `sensorIndex`; whether one was due. */
  sampleInto(atMs: number, crossings: readonly DoorCrossing[], out: EdgePacketWriter, sensorIndex: number): boolean {
    if (!this.#count(atMs, crossings)) return false;
    out.traffic(sensorIndex, atMs, this.sensor.reportIntervalMs, this.#in, this.#out);
    this.#in = 0;
    this.#out = 0;
    return true;
  }

  /**
   * Counts one crossing (of any door: others are ignored) into the interval. The same draws as
   * handing it to `sample`/`sampleInto`, which count theirs first: a caller that dispatches a
   * tick's crossings to their doors' sensors calls this, then `sampleInto` with none.
   */
  cross(c: DoorCrossing): void {
    if (c.doorId !== this.sensor.doorId) return;
    const crowded = c.atMs - this.#lastCrossingMs < this.#cal.windowMs;
    this.#lastCrossingMs = c.atMs;
    const pMiss = Math.min(
      MAX_MISS,
      this.#cal.miss * this.#noise.miss + (crowded ? this.#cal.crowd * this.#noise.crowdMiss : 0),
    );
    if (this.#rng.chance(pMiss)) return;
    const entering = (c.direction === 'in') === this.#sameSense;
    if (entering) this.#in++;
    else this.#out++;
  }

  /** Counts the crossings; whether the interval's report is due at `atMs`. */
  #count(atMs: number, crossings: readonly DoorCrossing[]): boolean {
    for (const c of crossings) this.cross(c);
    const elapsed = atMs - this.#startMs;
    return elapsed !== 0 && elapsed % this.sensor.reportIntervalMs === 0;
  }
}
