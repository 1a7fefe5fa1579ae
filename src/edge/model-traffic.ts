import { rngFor, type Rng } from '../core/rng.js';
import type { DoorModel, NoiseModel, SensorModel } from '../scenario/model.js';
import type { DoorCrossing } from '../sim/types.js';
import type { TrafficPacket } from './packet.js';

/**
 * Traffic sensor at `--fidelity model`: counts the crossings of its door line with a miss
 * probability, higher when two people cross within a second of each other (side by side,
 * the classic failure of door-line counting), and reports in/out per interval.
 */
const SIDE_BY_SIDE_MS = 1000;

export class ModelTrafficSensor {
  readonly sensor: SensorModel;
  readonly #rng: Rng;
  readonly #noise: NoiseModel['traffic'];
  readonly #startMs: number;
  /** True when the sensor's "in" is the door's "in" (its room is the door's toRoom). */
  readonly #sameSense: boolean;
  #in = 0;
  #out = 0;
  #lastCrossingMs = Number.NEGATIVE_INFINITY;

  constructor(sensor: SensorModel, door: DoorModel, noise: NoiseModel['traffic'], seed: number, startMs: number) {
    this.sensor = sensor;
    this.#rng = rngFor(seed, sensor.id);
    this.#noise = noise;
    this.#startMs = startMs;
    this.#sameSense = sensor.roomId === door.toRoomId;
  }

  /** Counts this tick's crossings of the door; returns the interval's packet when one is due. */
  sample(atMs: number, crossings: readonly DoorCrossing[]): TrafficPacket | null {
    for (const c of crossings) {
      if (c.doorId !== this.sensor.doorId) continue;
      const sideBySide = c.atMs - this.#lastCrossingMs < SIDE_BY_SIDE_MS;
      this.#lastCrossingMs = c.atMs;
      const pMiss = this.#noise.miss + (sideBySide ? this.#noise.crowdMiss : 0);
      if (this.#rng.chance(pMiss)) continue;
      const entering = (c.direction === 'in') === this.#sameSense;
      if (entering) this.#in++;
      else this.#out++;
    }
    const elapsed = atMs - this.#startMs;
    if (elapsed === 0 || elapsed % this.sensor.reportIntervalMs !== 0) return null;
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
}
