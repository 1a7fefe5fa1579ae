import { parseHiveTopic } from '../../core/topics.js';
import { MINUTE_MS } from '../../core/time.js';
import type { ScenarioModel } from '../../scenario/model.js';
import { LocalDays } from '../local-day.js';
import type { PresenceMinuteRow } from '../presence.js';
import type { AssetRegistry } from '../registry.js';
import { Bucketer, ROLLUP_LEVELS } from '../rollup.js';
import { PresenceKernel } from './presence-kernel.js';
import { WireError, WireScanner, type ScanVisitor } from './wire-scan.js';

/**
 * The pure pipeline path over typed arrays — decode + validate + dedupe + occupancy +
 * rollup — without storage: what `bench/pipeline.ts` measures. Per message: topic → hive,
 * a single pass over the protobuf bytes, MAC → sensor by hashing the bytes (no string),
 * registry checks (known sensor, on this hive, mode), (hive, seq) and (sensor, instant)
 * dedupe, then presence counts into per-minute typed arrays. Finalised minutes feed
 * in-memory max rollups (5m … 1d, local-time buckets).
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

/** ASCII lower case: MACs match case-insensitively. */
const lower = (c: number): number => (c >= 65 && c <= 90 ? c + 32 : c);

/** FNV-1a of the MAC's last 8 bytes (where MACs differ) and its length. */
const fnv = (b: Uint8Array, s: number, e: number): number => {
  let h = Math.imul(0x811c9dc5 ^ (e - s), 0x01000193);
  for (let i = Math.max(s, e - 8); i < e; i++) h = Math.imul(h ^ lower(b[i] as number), 0x01000193);
  // 30 bits: small-integer Map keys hash fastest.
  return h >>> 2;
};

export class FastPipeline implements ScanVisitor {
  readonly kernel: PresenceKernel;
  readonly counters: FastCounters = { messages: 0, duplicateBatches: 0, rejected: 0, packets: 0, detections: 0, duplicatePackets: 0, deadLettered: 0, rollupBuckets: 0 };
  readonly #scanner = new WireScanner();
  readonly #hiveIdx: Map<string, number>;
  readonly #hiveSerialBytes: Uint8Array[];
  readonly #seqs: Array<Set<number>>;
  readonly #macs = new Map<number, MacEntry[]>();
  readonly #sensorHive: Int32Array;
  readonly #sensorPresence: Uint8Array;
  readonly #traffic = new Map<number, Float64Array>();
  readonly #seen = new Map<number, Uint8Array>();
  readonly #slots: number;
  readonly #tickMs: number;
  readonly #rollup: RollupState;
  #bytes: Uint8Array = new Uint8Array(0);
  /** The (sensor, instant) bitmap of the minute last looked up: packets come in runs of one minute. */
  #seenMinute = Number.NaN;
  #seenBuf: Uint8Array = new Uint8Array(0);
  #view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
  #hive = -1;
  #cur = -1;

  constructor(model: ScenarioModel, registry: AssetRegistry) {
    const sensorIds = model.sensors.map((s) => s.id).sort();
    const floorIds = model.floors.map((f) => f.id);
    this.#tickMs = model.tickMs;
    this.#slots = Math.max(1, Math.floor(MINUTE_MS / model.tickMs));
    this.kernel = new PresenceKernel(registry, sensorIds, floorIds, model.tickMs);
    this.#hiveIdx = new Map(model.hives.map((h, i) => [h.serial, i] as const));
    this.#hiveSerialBytes = model.hives.map((h) => new TextEncoder().encode(h.serial));
    this.#seqs = model.hives.map(() => new Set<number>());
    const hiveOfId = new Map(model.hives.map((h, i) => [h.id, i] as const));
    this.#sensorHive = new Int32Array(sensorIds.length);
    this.#sensorPresence = new Uint8Array(sensorIds.length);
    sensorIds.forEach((id, i) => {
      const s = registry.sensor(id);
      if (!s) return;
      this.#sensorHive[i] = hiveOfId.get(s.hiveId) ?? -1;
      this.#sensorPresence[i] = s.mode === 'presence' ? 1 : 0;
      const mac = new TextEncoder().encode(s.mac.toLowerCase());
      const h = fnv(mac, 0, mac.length);
      const entry = { mac, view: new DataView(mac.buffer, mac.byteOffset, mac.byteLength), sensor: i };
      const list = this.#macs.get(h);
      if (list) list.push(entry);
      else this.#macs.set(h, [entry]);
    });
    this.#rollup = new RollupState(this.kernel.spaceIds.length, new Bucketer(new LocalDays(model.sites[0]?.timezone ?? 'UTC')));
  }

  /** Handles one uplink message; false when it is rejected as a whole (bad topic, hive or bytes). */
  ingest(topic: string, payload: Uint8Array): boolean {
    this.counters.messages++;
    const parsed = parseHiveTopic(topic);
    const hive = parsed && parsed.kind === 'uplink' ? this.#hiveIdx.get(parsed.serial) : undefined;
    if (hive === undefined) {
      this.counters.rejected++;
      return false;
    }
    this.#hive = hive;
    this.#bytes = payload;
    this.#view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    try {
      this.#scanner.scan(payload, this);
    } catch (err) {
      if (!(err instanceof WireError) && !(err instanceof RejectBatch)) throw err;
      this.counters.rejected++;
      return false;
    }
    return true;
  }

  header(seq: number, _sentAtMs: number, s: number, e: number): void {
    const want = this.#hiveSerialBytes[this.#hive] as Uint8Array;
    const b = this.#bytes;
    if (e - s !== want.length || want.some((c, i) => b[s + i] !== c) || seq < 1) throw new RejectBatch();
    const seqs = this.#seqs[this.#hive] as Set<number>;
    if (seqs.has(seq)) {
      this.counters.duplicateBatches++;
      throw new RejectBatch();
    }
    seqs.add(seq);
  }

  presenceStart(macS: number, macE: number, t: number): void {
    this.counters.packets++;
    const sensor = this.#sensor(macS, macE, true);
    this.#cur = sensor >= 0 && this.#firstReport(sensor, t) ? sensor : -1;
    if (this.#cur >= 0) this.kernel.report(sensor, t);
  }

  point(x: number, y: number): void {
    if (this.#cur < 0) return;
    this.counters.detections++;
    this.kernel.detection(this.#cur, x, y);
  }

  presenceEnd(): void {
    this.#cur = -1;
  }

  traffic(macS: number, macE: number, t: number, _interval: number, inCount: number, outCount: number): void {
    this.counters.packets++;
    const sensor = this.#sensor(macS, macE, false);
    if (sensor < 0 || !this.#firstReport(sensor, t)) return;
    const minuteMs = t - (((t % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);
    let sums = this.#traffic.get(minuteMs);
    if (!sums) this.#traffic.set(minuteMs, (sums = new Float64Array(this.#sensorHive.length * 2)));
    sums[sensor * 2] = (sums[sensor * 2] as number) + inCount;
    sums[sensor * 2 + 1] = (sums[sensor * 2 + 1] as number) + outCount;
  }

  /** Finalises minutes before `beforeMs`: rows out, rollups updated. */
  finaliseBefore(beforeMs: number): PresenceMinuteRow[] {
    const rows: PresenceMinuteRow[] = [];
    const values = new Float64Array(this.kernel.spaceIds.length);
    for (const m of this.kernel.openMinutes()) {
      if (m >= beforeMs) break;
      values.fill(Number.NaN);
      rows.push(...this.kernel.finalise(m, values));
      this.counters.rollupBuckets += this.#rollup.add(m, values);
      this.#seen.delete(m);
      if (m === this.#seenMinute) this.#seenMinute = Number.NaN;
      this.#traffic.delete(m);
    }
    return rows;
  }

  /** Sensor index of a packet's MAC, when valid for this hive and packet kind; else dead-lettered (-1). */
  #sensor(s: number, e: number, presence: boolean): number {
    const b = this.#bytes;
    const list = this.#macs.get(fnv(b, s, e));
    const hit = list === undefined ? undefined : findMac(list, b, this.#view, s, e);
    if (!hit || this.#sensorHive[hit.sensor] !== this.#hive || (this.#sensorPresence[hit.sensor] === 1) !== presence) {
      this.counters.deadLettered++;
      return -1;
    }
    return hit.sensor;
  }

  /** (sensor, instant) dedupe: true the first time. */
  #firstReport(sensor: number, t: number): boolean {
    if (!(t >= this.#seenMinute && t < this.#seenMinute + MINUTE_MS)) {
      const minuteMs = t - (((t % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);
      let seen = this.#seen.get(minuteMs);
      if (!seen) this.#seen.set(minuteMs, (seen = new Uint8Array(this.#sensorHive.length * this.#slots)));
      this.#seenMinute = minuteMs;
      this.#seenBuf = seen;
    }
    const k = sensor * this.#slots + Math.floor((t - this.#seenMinute) / this.#tickMs);
    if (this.#seenBuf[k] === 1) {
      this.counters.duplicatePackets++;
      return false;
    }
    this.#seenBuf[k] = 1;
    return true;
  }

}

class RejectBatch extends Error {}

interface MacEntry {
  mac: Uint8Array;
  view: DataView;
  sensor: number;
}

/** The registered MAC equal to bytes [s, e): words first (exact case), bytes case-insensitively otherwise. */
function findMac(list: readonly MacEntry[], b: Uint8Array, v: DataView, s: number, e: number): MacEntry | undefined {
  for (const entry of list) {
    const mac = entry.mac;
    if (mac.length !== e - s) continue;
    let i = 0;
    while (i + 4 <= mac.length && v.getUint32(s + i) === entry.view.getUint32(i)) i += 4;
    while (i < mac.length && mac[i] === lower(b[s + i] as number)) i++;
    if (i === mac.length) return entry;
  }
  return undefined;
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
