import { parseHiveTopic } from '../../core/topics.js';
import { MAX_PACKETS_PER_BATCH, MAX_PAYLOAD_BYTES } from '../../proto/limits.js';
import type { WirePacket } from '../../proto/messages.js';
import type { AssetRegistry } from '../registry.js';
import { MacTable } from './mac-table.js';
import { isAppError, ErrorCodes } from '../../core/errors.js';
import { readUplink, type UplinkVisitor } from '../../proto/uplink-decode.js';

/**
 * Decode + validate of one `HiveUplink` for the hot path (the live cloud and the benchmark
 * share it): one walk of the uplink decoder (`proto/uplink-decode.ts`, the one the slow path
 * reads objects from too), MAC → sensor index through the interned table,
 * and the registry checks of docs/occupancy.md (known sensor, on this hive, packet kind =
 * sensor mode), into reusable typed arrays — no object per packet. Sensor indices follow
 * the sorted sensor ids (the presence kernel's order).
 *
 * `read` answers `Clean` only when the whole message and every packet passed; the live
 * cloud leaves anything else (bad topic, bytes, serial, seq, or one bad packet) to the
 * slow, explaining path (`inspectUplink`), which writes the dead letters with their reasons.
 */
export const PacketKind = { Presence: 1, Traffic: 2 } as const;
export type PacketKind = (typeof PacketKind)[keyof typeof PacketKind];

export const ReadStatus = { Clean: 0, SomePackets: 1, Message: 2 } as const;
export type ReadStatus = (typeof ReadStatus)[keyof typeof ReadStatus];

export class UplinkReader implements UplinkVisitor {
  /** Sensor ids, sorted: index i of every per-packet array refers to sensorIds[i]. */
  readonly sensorIds: readonly string[];
  // Per packet of the message last read (valid for [0, count)).
  count = 0;
  sensor = new Int32Array(256);
  kind = new Uint8Array(256);
  sensedAt = new Float64Array(256);
  /** Presence: detections [detStart[i], detStart[i + 1]) of xs/ys; traffic: in/out counts. */
  detStart = new Int32Array(257);
  inCount = new Float64Array(256);
  outCount = new Float64Array(256);
  xs = new Float64Array(1024);
  ys = new Float64Array(1024);
  detections = 0;
  /** Packets of the last message rejected by a registry check (sensor -1). */
  rejected = 0;
  hive = -1;
  seq = 0;
  sentAtMs = 0;
  minSensedMs = Infinity;
  maxSensedMs = -Infinity;
  readonly #macs: MacTable;
  readonly #hiveIdx: Map<string, number>;
  readonly #hiveSerialBytes: Uint8Array[];
  readonly #sensorHive: Int32Array;
  readonly #sensorPresence: Uint8Array;
  #bytes: Uint8Array = new Uint8Array(0);
  #view: DataView = new DataView(new ArrayBuffer(0));
  #headerOk = false;
  /** Detections of the packet being read start here (a later body of it drops earlier points). */
  #pointsFrom = 0;

  constructor(registry: AssetRegistry) {
    const model = registry.assets;
    this.sensorIds = model.sensors.map((s) => s.id).sort();
    this.#hiveIdx = new Map(model.hives.map((h, i) => [h.serial, i] as const));
    this.#hiveSerialBytes = model.hives.map((h) => new TextEncoder().encode(h.serial));
    const hiveOfId = new Map(model.hives.map((h, i) => [h.id, i] as const));
    this.#sensorHive = new Int32Array(this.sensorIds.length);
    this.#sensorPresence = new Uint8Array(this.sensorIds.length);
    this.sensorIds.forEach((id, i) => {
      const s = registry.sensor(id);
      this.#sensorHive[i] = s ? (hiveOfId.get(s.hiveId) ?? -1) : -1;
      this.#sensorPresence[i] = s?.mode === 'presence' ? 1 : 0;
    });
    this.#macs = new MacTable(this.sensorIds.map((id) => registry.sensor(id)?.mac ?? ''));
  }

  /** Hive index of a topic's serial, or -1 (not an uplink topic, or unknown hive). */
  hiveOfTopic(topic: string): number {
    const parsed = parseHiveTopic(topic);
    return parsed && parsed.kind === 'uplink' ? (this.#hiveIdx.get(parsed.serial) ?? -1) : -1;
  }

  /**
   * Reads one message into the arrays: `ReadStatus.Clean`, `SomePackets` (only packets
   * failed a registry check: sensor -1) or `Message` (topic, bytes, serial or seq bad).
   */
  read(hive: number, payload: Uint8Array): ReadStatus {
    this.#reset(hive);
    // Over a protocol limit: the slow path dead-letters it with the reason (inspectUplink).
    if (hive < 0 || payload.length > MAX_PAYLOAD_BYTES) return ReadStatus.Message;
    this.#bytes = payload;
    this.#view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    try {
      readUplink(payload, this);
    } catch (err) {
      if (!isAppError(err, ErrorCodes.DECODE_FAILED)) throw err;
      return ReadStatus.Message;
    }
    if (!this.#headerOk || this.count > MAX_PACKETS_PER_BATCH) return ReadStatus.Message;
    return this.rejected === 0 ? ReadStatus.Clean : ReadStatus.SomePackets;
  }

  /** Fills the arrays from packets the slow path accepted (sensor ids already resolved). */
  fill(hive: number, packets: ReadonlyArray<{ sensorId: string; packet: WirePacket }>): void {
    this.#reset(hive);
    const index = new Map(this.sensorIds.map((id, i) => [id, i] as const));
    for (const { sensorId, packet } of packets) {
      if (packet.kind === 'presence') for (const [x, y] of packet.detections) this.point(x, y);
      const i = this.#open(
        index.get(sensorId) ?? -1,
        packet.sensedAtMs,
        packet.kind === 'presence' ? PacketKind.Presence : PacketKind.Traffic,
      );
      if (packet.kind === 'traffic') {
        this.inCount[i] = packet.in;
        this.outCount[i] = packet.out;
      }
    }
  }

  header(s: number, e: number, seq: number, sentAtMs: number): void {
    this.seq = seq;
    this.sentAtMs = sentAtMs;
    const want = this.#hiveSerialBytes[this.hive] as Uint8Array;
    const b = this.#bytes;
    let same = e - s === want.length;
    for (let i = 0; same && i < want.length; i++) same = b[s + i] === want[i];
    this.#headerOk = same && Number.isSafeInteger(seq) && seq >= 1;
  }

  presenceBody(): void {
    this.detections = this.#pointsFrom;
  }

  point(x: number, y: number): void {
    const d = this.detections++;
    if (d === this.xs.length) {
      this.xs = grow(this.xs, d * 2);
      this.ys = grow(this.ys, d * 2);
    }
    this.xs[d] = x;
    this.ys[d] = y;
  }

  presence(macS: number, macE: number, t: number): void {
    this.#open(this.#sensorOf(macS, macE, 1), t, PacketKind.Presence);
  }

  bodiless(): void {
    // The batch is refused once walked: the slow path dead-letters it with the reason.
  }

  traffic(macS: number, macE: number, t: number, _intervalMs: number, inCount: number, outCount: number): void {
    this.detections = this.#pointsFrom;
    const i = this.#open(this.#sensorOf(macS, macE, 0), t, PacketKind.Traffic);
    this.inCount[i] = inCount;
    this.outCount[i] = outCount;
  }

  #reset(hive: number): void {
    this.hive = hive;
    this.count = 0;
    this.detections = 0;
    this.rejected = 0;
    this.detStart[0] = 0;
    this.#pointsFrom = 0;
    this.minSensedMs = Infinity;
    this.maxSensedMs = -Infinity;
    this.#headerOk = false;
  }

  /** Packet `count`, its detections those heard since the last packet ([#pointsFrom, detections)). */
  #open(sensor: number, t: number, kind: PacketKind): number {
    const i = this.count++;
    if (this.count === this.sensor.length) this.#growPackets();
    this.sensor[i] = sensor;
    this.kind[i] = kind;
    this.sensedAt[i] = t;
    this.detStart[i] = this.#pointsFrom;
    this.detStart[i + 1] = this.detections;
    this.#pointsFrom = this.detections;
    if (sensor < 0) this.rejected++;
    if (t < this.minSensedMs) this.minSensedMs = t;
    if (t > this.maxSensedMs) this.maxSensedMs = t;
    return i;
  }

  /** Sensor index of a packet's MAC when valid for this hive and kind (presence 1 / traffic 0); else -1. */
  #sensorOf(s: number, e: number, presence: number): number {
    const sensor = this.#macs.lookup(this.#bytes, this.#view, s, e);
    if (sensor < 0 || this.#sensorHive[sensor] !== this.hive || this.#sensorPresence[sensor] !== presence) return -1;
    return sensor;
  }

  #growPackets(): void {
    const n = this.sensor.length * 2;
    this.sensor = grow(this.sensor, n);
    this.kind = grow(this.kind, n);
    this.sensedAt = grow(this.sensedAt, n);
    this.detStart = grow(this.detStart, n + 1);
    this.inCount = grow(this.inCount, n);
    this.outCount = grow(this.outCount, n);
  }
}

function grow<T extends Int32Array | Uint8Array | Float64Array>(a: T, n: number): T {
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}
