import protobuf from 'protobufjs';
import type { UplinkBatch, WirePacket } from './messages.js';

/**
 * Hand-written encoder of occusim.v1.HiveUplink, the hot message (thousands of packets per
 * batch, encoded on the hive thread). The reflection path built an intermediate object per
 * packet and per detection; this one goes from WirePacket (or from packets encoded as they
 * arrive, `UplinkPackets`) straight to bytes: size first, one buffer, one pass. Its decoding
 * counterpart is `uplink-decode.ts`, the one decoder.
 *
 * proto/occusim/v1/uplink.proto stays the source of truth (field numbers below are its
 * numbers). The contract is "same bytes as the reflection encoder", and
 * test/proto/uplink-wire.test.ts holds it to that by property (the reflection codec is the
 * oracle in test/oracles/uplink-reflect.ts).
 */

// HiveUplink
const F_HIVE_SERIAL = (1 << 3) | 2;
const F_SEQ = (2 << 3) | 0;
const F_SENT_AT = (3 << 3) | 0;
const F_PACKETS = (4 << 3) | 2;
const F_PROTOCOL_MINOR = (5 << 3) | 0;
// SensorPacket
const F_SENSOR_MAC = (1 << 3) | 2;
const F_SENSED_AT = (2 << 3) | 0;
const F_PRESENCE = (3 << 3) | 2;
const F_TRAFFIC = (4 << 3) | 2;
// Presence, Detection, Traffic
const F_DETECTIONS = (1 << 3) | 2;
const F_X = (1 << 3) | 5;
const F_Y = (2 << 3) | 5;
const F_INTERVAL = (1 << 3) | 0;
const F_IN = (2 << 3) | 0;
const F_OUT = (3 << 3) | 0;
/** A Detection body: two tagged fixed32 floats. */
const DETECTION_BODY = 10;
const DETECTION_SIZE = 1 + 1 + DETECTION_BODY;

const TWO_32 = 4294967296;
const TWO_64 = 18446744073709551616;

// ---- encoding -------------------------------------------------------------------------

function varint32Size(v: number): number {
  v >>>= 0;
  return v < 128 ? 1 : v < 16384 ? 2 : v < 2097152 ? 3 : v < 268435456 ? 4 : 5;
}

// uint64 as protobufjs converts a number (Long.fromValue(v, true)): NaN and negatives are 0,
// 2^64 and above saturate, fractions truncate. Result in these two scratch words.
let lo64 = 0;
let hi64 = 0;
function split64(v: number): void {
  if (Number.isNaN(v) || v < 0) {
    lo64 = 0;
    hi64 = 0;
  } else if (v >= TWO_64) {
    lo64 = 0xffffffff;
    hi64 = 0xffffffff;
  } else {
    lo64 = ((v % TWO_32) | 0) >>> 0;
    hi64 = ((v / TWO_32) | 0) >>> 0;
  }
}

function varint64Size(v: number): number {
  split64(v);
  const part0 = lo64;
  const part1 = ((lo64 >>> 28) | (hi64 << 4)) >>> 0;
  const part2 = hi64 >>> 24;
  if (part2 === 0) {
    if (part1 === 0) return part0 < 16384 ? (part0 < 128 ? 1 : 2) : part0 < 2097152 ? 3 : 4;
    return part1 < 16384 ? (part1 < 128 ? 5 : 6) : part1 < 2097152 ? 7 : 8;
  }
  return part2 < 128 ? 9 : 10;
}

function stringSize(s: string): number {
  const n = Buffer.byteLength(s);
  return varint32Size(n) + n;
}

// Per-packet sizes from the sizing pass, reused by the writing pass (grown, never shrunk:
// no allocation per batch once warm).
let packetSizes = new Int32Array(1024);

function trafficBodySize(p: Extract<WirePacket, { kind: 'traffic' }>): number {
  return 3 + varint32Size(p.intervalMs) + varint32Size(p.in) + varint32Size(p.out);
}

function packetBodySize(p: WirePacket): number {
  let n = 1 + stringSize(p.sensorMac) + 1 + varint64Size(p.sensedAtMs);
  if (p.kind === 'presence') {
    const body = p.detections.length * DETECTION_SIZE;
    n += 1 + varint32Size(body) + body;
  } else {
    const body = trafficBodySize(p);
    n += 1 + varint32Size(body) + body;
  }
  return n;
}

class ByteWriter {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  varint32(v: number): void {
    const buf = this.buf;
    v >>>= 0;
    while (v > 127) {
      buf[this.pos++] = (v & 127) | 128;
      v >>>= 7;
    }
    buf[this.pos++] = v;
  }

  varint64(v: number): void {
    split64(v);
    const buf = this.buf;
    let lo = lo64;
    let hi = hi64;
    while (hi) {
      buf[this.pos++] = (lo & 127) | 128;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    while (lo > 127) {
      buf[this.pos++] = (lo & 127) | 128;
      lo >>>= 7;
    }
    buf[this.pos++] = lo;
  }

  // As protobufjs's BufferWriter: its own UTF-8 writer for short strings (lone surrogates
  // written as 3 bytes), Buffer's for long ones; both are as long as Buffer.byteLength.
  string(s: string): void {
    const n = Buffer.byteLength(s);
    this.varint32(n);
    if (n === 0) return;
    if (s.length < 40) protobuf.util.utf8.write(s, this.buf, this.pos);
    else this.buf.write(s, this.pos);
    this.pos += n;
  }

  float(v: number): void {
    F32[0] = v;
    const buf = this.buf;
    buf[this.pos] = F32_BYTES[0] ?? 0;
    buf[this.pos + 1] = F32_BYTES[1] ?? 0;
    buf[this.pos + 2] = F32_BYTES[2] ?? 0;
    buf[this.pos + 3] = F32_BYTES[3] ?? 0;
    this.pos += 4;
  }
}

// Float conversion the way protobufjs does it (through a Float32Array), little-endian bytes.
const F32 = new Float32Array(1);
const F32_BYTES = new Uint8Array(F32.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
if (!LITTLE_ENDIAN) throw new Error('uplink-wire: big-endian hosts are not supported');

/** HiveUplink bytes, identical to protobufjs reflection's encoding of the same batch. */
export function encodeUplinkWire(batch: UplinkBatch): Uint8Array {
  const packets = batch.packets;
  if (packetSizes.length < packets.length)
    packetSizes = new Int32Array(Math.max(packets.length, packetSizes.length * 2));
  let size = 1 + stringSize(batch.hiveSerial) + 1 + varint64Size(batch.seq) + 1 + varint64Size(batch.sentAtMs);
  for (let i = 0; i < packets.length; i++) {
    const n = packetBodySize(packets[i] as WirePacket);
    packetSizes[i] = n;
    size += 1 + varint32Size(n) + n;
  }
  if (batch.protocolMinor != null) size += 1 + varint32Size(batch.protocolMinor);

  const w = new ByteWriter(Buffer.allocUnsafe(size));
  w.varint32(F_HIVE_SERIAL);
  w.string(batch.hiveSerial);
  w.varint32(F_SEQ);
  w.varint64(batch.seq);
  w.varint32(F_SENT_AT);
  w.varint64(batch.sentAtMs);
  for (let i = 0; i < packets.length; i++) {
    const p = packets[i] as WirePacket;
    w.varint32(F_PACKETS);
    w.varint32(packetSizes[i] ?? 0);
    w.varint32(F_SENSOR_MAC);
    w.string(p.sensorMac);
    writeAfterMac(w, p);
  }
  if (batch.protocolMinor != null) {
    w.varint32(F_PROTOCOL_MINOR);
    w.varint32(batch.protocolMinor);
  }
  if (w.pos !== size) throw new Error(`uplink-wire: sized ${String(size)} bytes, wrote ${String(w.pos)}`);
  return w.buf;
}

// ---- encoding a hive's packets as they arrive ------------------------------------------

/**
 * Sensors' `sensor_mac` fields (tag, length, UTF-8 bytes) encoded once, by sensor index, in
 * one array: a packet copies its sensor's ~19 bytes instead of encoding the string again.
 */
export class MacFields {
  readonly #bytes: Uint8Array;
  /** Field k is bytes [starts[k], starts[k + 1]). */
  readonly #starts: Int32Array;

  constructor(macs: readonly string[]) {
    let size = 0;
    for (const mac of macs) size += 1 + stringSize(mac);
    const w = new ByteWriter(Buffer.alloc(size));
    this.#starts = new Int32Array(macs.length + 1);
    macs.forEach((mac, k) => {
      this.#starts[k] = w.pos;
      w.varint32(F_SENSOR_MAC);
      w.string(mac);
    });
    this.#starts[macs.length] = w.pos;
    this.#bytes = w.buf;
  }

  get count(): number {
    return this.#starts.length - 1;
  }

  size(k: number): number {
    if (!(k >= 0 && k < this.count)) throw new RangeError(`uplink-wire: no MAC #${String(k)}`);
    return (this.#starts[k + 1] as number) - (this.#starts[k] as number);
  }

  copy(k: number, to: Uint8Array, at: number): number {
    const bytes = this.#bytes;
    const end = this.#starts[k + 1] as number;
    for (let i = this.#starts[k] as number; i < end; i++) to[at++] = bytes[i] as number;
    return at;
  }
}

/**
 * A run of HiveUplink's repeated `packets` field, each packet encoded as it is received, in one
 * buffer reused from batch to batch: a batch is then its header, a copy of a slice of these
 * bytes and its trailer (`encodeUplinkFrom`), byte for byte what `encodeUplinkWire` writes for
 * the same packets — and no WirePacket object (nor array per detection) lives from a packet's
 * arrival at its hive to its batch's ack.
 */
export class UplinkPackets {
  #w = new ByteWriter(Buffer.allocUnsafe(4096));
  /** Byte offset where packet k ends. */
  #ends = new Int32Array(256);
  #sensedAt = new Float64Array(256);
  #count = 0;

  get count(): number {
    return this.#count;
  }

  /** Start offset of packet k (k = count: the end of the last). */
  offset(k: number): number {
    return k === 0 ? 0 : (this.#ends[k - 1] as number);
  }

  /** The encoded packets [from, to): a view, valid until the next write or `clear`. */
  bytes(from: number, to: number): Uint8Array {
    return this.#w.buf.subarray(this.offset(from), this.offset(to));
  }

  /** The sensing instants of packets [from, to), copied. */
  sensedAtMs(from: number, to: number): Float64Array {
    return this.#sensedAt.slice(from, to);
  }

  clear(): void {
    this.#count = 0;
    this.#w.pos = 0;
  }

  /** A packet as an object (what `encodeUplinkWire` would write for it). */
  push(p: WirePacket): void {
    const body = packetBodySize(p);
    const w = this.#room(p.sensedAtMs, 1 + varint32Size(body) + body);
    w.varint32(F_PACKETS);
    w.varint32(body);
    w.varint32(F_SENSOR_MAC);
    w.string(p.sensorMac);
    this.#rest(w, p);
  }

  /** A presence packet of sensor `sensor` (in `macs`): its `n` detections are coords[from + 2k], coords[from + 2k + 1]. */
  presence(
    macs: MacFields,
    sensor: number,
    sensedAtMs: number,
    coords: ArrayLike<number>,
    from: number,
    n: number,
  ): void {
    const presence = n * DETECTION_SIZE;
    const w = this.#head(macs, sensor, sensedAtMs, presence);
    w.varint32(F_PRESENCE);
    w.varint32(presence);
    for (let k = 0, i = from; k < n; k++, i += 2) {
      w.varint32(F_DETECTIONS);
      w.varint32(DETECTION_BODY);
      w.varint32(F_X);
      w.float(coords[i] as number);
      w.varint32(F_Y);
      w.float(coords[i + 1] as number);
    }
    this.#ended(w);
  }

  /** A traffic packet of sensor `sensor` (in `macs`). */
  traffic(
    macs: MacFields,
    sensor: number,
    sensedAtMs: number,
    intervalMs: number,
    inCount: number,
    outCount: number,
  ): void {
    const traffic = 3 + varint32Size(intervalMs) + varint32Size(inCount) + varint32Size(outCount);
    const w = this.#head(macs, sensor, sensedAtMs, traffic);
    w.varint32(F_TRAFFIC);
    w.varint32(traffic);
    w.varint32(F_INTERVAL);
    w.varint32(intervalMs);
    w.varint32(F_IN);
    w.varint32(inCount);
    w.varint32(F_OUT);
    w.varint32(outCount);
    this.#ended(w);
  }

  /**
   * A packet's tag, length, MAC and sensing time written, with room for its presence or traffic
   * field of `kindBody` bytes (one tag byte, its length, the body) after them.
   */
  #head(macs: MacFields, sensor: number, sensedAtMs: number, kindBody: number): ByteWriter {
    const body = macs.size(sensor) + 1 + varint64Size(sensedAtMs) + 1 + varint32Size(kindBody) + kindBody;
    const w = this.#room(sensedAtMs, 1 + varint32Size(body) + body);
    w.varint32(F_PACKETS);
    w.varint32(body);
    w.pos = macs.copy(sensor, w.buf, w.pos);
    w.varint32(F_SENSED_AT);
    w.varint64(sensedAtMs);
    return w;
  }

  /** The writer, with room for `size` more bytes and a slot for one more packet. */
  #room(sensedAtMs: number, size: number): ByteWriter {
    let w = this.#w;
    if (w.pos + size > w.buf.length) {
      const grown = new ByteWriter(Buffer.allocUnsafe(Math.max(w.pos + size, w.buf.length * 2)));
      w.buf.copy(grown.buf, 0, 0, w.pos);
      grown.pos = w.pos;
      this.#w = w = grown;
    }
    if (this.#count === this.#ends.length) {
      const ends = new Int32Array(this.#count * 2);
      ends.set(this.#ends);
      this.#ends = ends;
      const sensed = new Float64Array(this.#count * 2);
      sensed.set(this.#sensedAt);
      this.#sensedAt = sensed;
    }
    this.#sensedAt[this.#count] = sensedAtMs;
    return w;
  }

  #ended(w: ByteWriter): void {
    this.#ends[this.#count++] = w.pos;
  }

  /** After the MAC: as `encodeUplinkWire` writes a packet object. */
  #rest(w: ByteWriter, p: WirePacket): void {
    writeAfterMac(w, p);
    this.#ended(w);
  }
}

/** A packet's fields after its MAC (sensing time, then its presence or traffic body). */
function writeAfterMac(w: ByteWriter, p: WirePacket): void {
  w.varint32(F_SENSED_AT);
  w.varint64(p.sensedAtMs);
  if (p.kind === 'presence') {
    w.varint32(F_PRESENCE);
    w.varint32(p.detections.length * DETECTION_SIZE);
    for (const [x, y] of p.detections) {
      w.varint32(F_DETECTIONS);
      w.varint32(DETECTION_BODY);
      w.varint32(F_X);
      w.float(x);
      w.varint32(F_Y);
      w.float(y);
    }
  } else {
    w.varint32(F_TRAFFIC);
    w.varint32(trafficBodySize(p));
    w.varint32(F_INTERVAL);
    w.varint32(p.intervalMs);
    w.varint32(F_IN);
    w.varint32(p.in);
    w.varint32(F_OUT);
    w.varint32(p.out);
  }
}

/** Bytes after a HiveUplink's packets: its `protocol_minor` field, when set. */
export function uplinkTrailerSize(protocolMinor: number | undefined): number {
  return protocolMinor != null ? 1 + varint32Size(protocolMinor) : 0;
}

/**
 * HiveUplink bytes from its header fields and its packets already encoded (`UplinkPackets`'
 * bytes, or the packets of an earlier encoding of the batch): identical to `encodeUplinkWire`
 * of the same batch. The packets sit at [length − trailer − packets.length, length − trailer).
 */
export function encodeUplinkFrom(
  hiveSerial: string,
  seq: number,
  sentAtMs: number,
  packets: Uint8Array,
  protocolMinor?: number,
): Buffer {
  const size =
    1 +
    stringSize(hiveSerial) +
    1 +
    varint64Size(seq) +
    1 +
    varint64Size(sentAtMs) +
    packets.length +
    uplinkTrailerSize(protocolMinor);
  const w = new ByteWriter(Buffer.allocUnsafe(size));
  w.varint32(F_HIVE_SERIAL);
  w.string(hiveSerial);
  w.varint32(F_SEQ);
  w.varint64(seq);
  w.varint32(F_SENT_AT);
  w.varint64(sentAtMs);
  w.buf.set(packets, w.pos);
  w.pos += packets.length;
  if (protocolMinor != null) {
    w.varint32(F_PROTOCOL_MINOR);
    w.varint32(protocolMinor);
  }
  if (w.pos !== size) throw new Error(`uplink-wire: sized ${String(size)} bytes, wrote ${String(w.pos)}`);
  return w.buf;
}
