import { MINUTE_MS } from '../../src/core/time.js';
import { LocalDays } from '../../src/cloud/local-day.js';

import type { AssetRegistry } from '../../src/cloud/registry.js';
import { Bucketer } from '../../src/cloud/rollup.js';
import { PresenceKernel } from '../../src/cloud/kernel/presence-kernel.js';
import { PacketKind, ReadStatus, UplinkReader } from '../../src/cloud/kernel/uplink-reader.js';
import { ROLLUP_LEVELS, type PresenceMinuteRow } from '../../src/store/rows.js';

/**
 * Used by the pipeline benchmark and the kernel tests only; the live path is `CloudPipeline`.
 *
 * The pure pipeline path over typed arrays — decode + validate + dedupe + occupancy +
 * rollup — without storage: what `bench/pipeline.ts` measures. It is the live cloud's path
 * (`CloudPipeline`: the same `UplinkReader` and `PresenceKernel`) with the store replaced
 * by in-memory (hive, seq) sets and max rollups (5m … 1d, local-time buckets).
 */
export interface FastCounters {
  messages: number;
  duplicateBatches: number;
  rejected: number;
  packets: number;
  detections: number;
  duplicatePackets: number;
  deadLettered: number;
  rollupBuckets: number;
}

// Local copies: an imported binding is a property read per use under some loaders.
const MINUTE = MINUTE_MS;
const PRESENCE: number = PacketKind.Presence;

export class StorelessPipeline {
  readonly kernel: PresenceKernel;
  readonly reader: UplinkReader;
  readonly counters: FastCounters = {
    messages: 0,
    duplicateBatches: 0,
    rejected: 0,
    packets: 0,
    detections: 0,
    duplicatePackets: 0,
    deadLettered: 0,
    rollupBuckets: 0,
  };
  readonly #seqs: Array<Set<number>>;
  readonly #traffic = new Map<number, Float64Array>();
  readonly #trafficSeen = new Map<number, Uint8Array>();
  readonly #nSensors: number;
  readonly #slots: number;
  readonly #tickMs: number;
  readonly #rollup: RollupState;

  /** `timezone`: the site's zone of the rollup buckets. */
  constructor(registry: AssetRegistry, tickMs: number, timezone: string) {
    const model = { tickMs, floors: registry.assets.floors, hives: registry.assets.hives };
    this.reader = new UplinkReader(registry);
    this.#nSensors = this.reader.sensorIds.length;
    this.#tickMs = model.tickMs;
    this.#slots = Math.max(1, Math.floor(MINUTE / model.tickMs));
    this.kernel = new PresenceKernel(
      registry,
      this.reader.sensorIds,
      model.floors.map((f) => f.id),
      model.tickMs,
    );
    this.#seqs = model.hives.map(() => new Set<number>());
    this.#rollup = new RollupState(this.kernel.spaceIds.length, new Bucketer(new LocalDays(timezone)));
  }

  /** Handles one uplink message; false when it is rejected as a whole (bad topic, hive or bytes). */
  ingest(topic: string, payload: Uint8Array): boolean {
    this.counters.messages++;
    const r = this.reader;
    const hive = r.hiveOfTopic(topic);
    if (r.read(hive, payload) === ReadStatus.Message) {
      this.counters.rejected++;
      return false;
    }
    const seqs = this.#seqs[hive] as Set<number>;
    if (seqs.has(r.seq)) {
      this.counters.duplicateBatches++;
      return false;
    }
    seqs.add(r.seq);
    this.counters.packets += r.count;
    this.counters.deadLettered += r.rejected;
    const { sensor: sensors, sensedAt, kind, detStart, xs, ys } = r;
    const kernel = this.kernel;
    let detections = 0;
    for (let i = 0; i < r.count; i++) {
      const sensor = sensors[i] as number;
      if (sensor < 0) continue;
      const t = sensedAt[i] as number;
      if (kind[i] === PRESENCE) {
        const from = detStart[i] as number;
        const to = detStart[i + 1] as number;
        if (kernel.add(sensor, t, xs, ys, from, to)) detections += to - from;
        else this.counters.duplicatePackets++;
      } else this.#addTraffic(sensor, t, r.inCount[i] as number, r.outCount[i] as number);
    }
    this.counters.detections += detections;
    return true;
  }

  /** Finalises minutes before `beforeMs`: rows out, rollups updated. */
  finaliseBefore(beforeMs: number): PresenceMinuteRow[] {
    const rows: PresenceMinuteRow[] = [];
    const values = new Float64Array(this.kernel.spaceIds.length);
    for (const m of this.kernel.openMinutes()) {
      if (m >= beforeMs) break;
      values.fill(Number.NaN);
      for (const r of this.kernel.finalise(m, values)) rows.push(r);
      this.counters.rollupBuckets += this.#rollup.add(m, values);
      this.#traffic.delete(m);
      this.#trafficSeen.delete(m);
    }
    return rows;
  }

  /** Per-minute in/out sums; a (sensor, instant) counted once. */
  #addTraffic(sensor: number, t: number, inCount: number, outCount: number): void {
    const minuteMs = t - (((t % MINUTE) + MINUTE) % MINUTE);
    let seen = this.#trafficSeen.get(minuteMs);
    if (!seen) this.#trafficSeen.set(minuteMs, (seen = new Uint8Array(this.#nSensors * this.#slots)));
    const k = sensor * this.#slots + Math.floor((t - minuteMs) / this.#tickMs);
    if (seen[k] === 1) {
      this.counters.duplicatePackets++;
      return;
    }
    seen[k] = 1;
    let sums = this.#traffic.get(minuteMs);
    if (!sums) this.#traffic.set(minuteMs, (sums = new Float64Array(this.#nSensors * 2)));
    sums[sensor * 2] = (sums[sensor * 2] as number) + inCount;
    sums[sensor * 2 + 1] = (sums[sensor * 2 + 1] as number) + outCount;
  }
}

/** In-memory max rollups per level: the open bucket's running max per space. */
class RollupState {
  readonly #bucketer: Bucketer;
  readonly #start: Float64Array;
  readonly #max: Float64Array[];
  readonly #n: number;

  constructor(spaces: number, bucketer: Bucketer) {
    this.#n = spaces;
    this.#bucketer = bucketer;
    this.#start = new Float64Array(ROLLUP_LEVELS.length).fill(Number.NaN);
    this.#max = ROLLUP_LEVELS.map(() => new Float64Array(spaces).fill(Number.NaN));
  }

  /** Folds one minute in; returns how many buckets were closed. */
  add(minuteMs: number, values: Float64Array): number {
    let closed = 0;
    ROLLUP_LEVELS.forEach((level, l) => {
      const [start] = this.#bucketer.bucketOf(minuteMs, level);
      const max = this.#max[l] as Float64Array;
      if (start !== this.#start[l]) {
        if (!Number.isNaN(this.#start[l] as number)) closed += this.#n;
        this.#start[l] = start;
        max.fill(Number.NaN);
      }
      for (let i = 0; i < this.#n; i++) {
        const v = values[i] as number;
        if (!(v <= (max[i] as number))) max[i] = Number.isNaN(v) ? (max[i] as number) : v;
      }
    });
    return closed;
  }
}
