import protobuf from 'protobufjs';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { UplinkBatch, WirePacket } from './messages.js';

/**
 * The one decoder of occusim.v1.HiveUplink (proto/occusim/v1/uplink.proto, field numbers
 * below are its numbers). It walks the bytes once and tells a visitor what it read: the
 * cloud's hot path (`cloud/kernel/uplink-reader.ts`) fills typed arrays from it without an
 * object or a string per packet, and `decodeUplink` (below) builds the `UplinkBatch` that the
 * slow path, ingest's dead letters and the checker read. Both see the same fields, so the
 * cloud accepts, refuses and explains a message by one reading of it.
 *
 * The contract is "same as protobufjs reflection", quirks included: the walk goes through
 * protobufjs's own Reader (its uint32/float/skipType, the Reader-vs-BufferReader choice: a
 * Buffer's strings are clamped to their message, a Uint8Array's overrun throws) and copies
 * its messages, so a dead letter's reason reads as it did. A later field of a packet replaces
 * an earlier one (a second presence body drops the first's points; a traffic body wins over a
 * presence body, as reflection's toObject reports the later-declared member). The oracles it
 * is held to by property live with the tests (test/oracles/: reflection, the previous
 * hand-written decoder, the previous hot-path scanner; test/proto/uplink-decode.test.ts).
 *
 * Fast paths read the encoder's own layouts in place (a one-byte tag, a Detection as
 * `0a 0a 0d f32 15 f32`); they apply only where the general path would read the same values
 * without an error.
 */
export interface UplinkVisitor {
  /** Once, after the packets (header fields may come anywhere); the serial is bytes [start, end). */
  header(serialStart: number, serialEnd: number, seq: number, sentAtMs: number, protocolMinor: number): void;
  /** A presence body starts in the current packet: points heard since the packet began are dropped. */
  presenceBody(): void;
  point(x: number, y: number): void;
  /** A packet ends with a presence body (its points are those since the last `presenceBody`). */
  presence(macStart: number, macEnd: number, sensedAtMs: number): void;
  /** A packet ends without a body (`readUplink` then refuses the batch; the conformance checker reports it). */
  bodiless(macStart: number, macEnd: number, sensedAtMs: number): void;
  /** A packet ends with a traffic body (points of an earlier presence body in it are dropped). */
  traffic(
    macStart: number,
    macEnd: number,
    sensedAtMs: number,
    intervalMs: number,
    inCount: number,
    outCount: number,
  ): void;
}

type Reader = protobuf.Reader;

const TWO_32 = 4294967296;

/** End of the span last read by `stringSpan` (a module field: no tuple per string). */
let spanEnd = 0;
/** Whether the reader in hand is a BufferReader (strings clamped, not checked). */
let clampStrings = false;
/** The bytes in hand, for the in-place Detection reads (the float32 → number conversion protobufjs's float() makes). */
let view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));

function indexOutOfRange(r: Reader, length: number): RangeError {
  return new RangeError(`index out of range: ${String(r.pos)} + ${String(length || 1)} > ${String(r.len)}`);
}

/** A tag: one byte in place when it is one, else protobufjs's uint32 (callers loop while pos < len). */
function tag(r: Reader): number {
  const b = r.buf[r.pos] as number;
  if (b < 128) {
    r.pos++;
    return b;
  }
  return r.uint32();
}

/** A length: one byte in place when it is one (and in bounds), else protobufjs's uint32 (which throws past the end). */
function length(r: Reader): number {
  const p = r.pos;
  if (p < r.len) {
    const b = r.buf[p] as number;
    if (b < 128) {
      r.pos = p + 1;
      return b;
    }
  }
  return r.uint32();
}

/** A string field's bytes as protobufjs's `string()` reads them: returns the start, leaves the end in `spanEnd`. */
function stringSpan(r: Reader): number {
  const n = length(r);
  const start = r.pos;
  if (clampStrings) r.pos = Math.min(start + n, r.len);
  else {
    if (start + n > r.len) throw indexOutOfRange(r, n);
    r.pos = start + n;
  }
  spanEnd = r.pos;
  return start;
}

/**
 * The text of bytes [start, end) as protobufjs decodes a string of this input (Buffer or not).
 * Its own UTF-8 reader reads a cut sequence's missing bytes as zeros only from a view that ends
 * there (past `end` of the whole buffer it would read the next field's bytes): hence the view.
 */
export function spanText(bytes: Uint8Array, start: number, end: number): string {
  if (end <= start) return '';
  if (Buffer.isBuffer(bytes)) return bytes.toString('utf8', start, end);
  return protobuf.util.utf8.read(bytes.subarray(start, end), 0, end - start);
}

/** protobufjs's readLongVarint + toNumber(unsigned), without its LongBits/Long objects. */
function readUint64(r: Reader): number {
  const buf = r.buf;
  let lo = 0;
  let hi = 0;
  let i = 0;
  if (r.len - r.pos > 4) {
    for (; i < 4; ++i) {
      lo = (lo | (((buf[r.pos] ?? 0) & 127) << (i * 7))) >>> 0;
      if ((buf[r.pos++] ?? 0) < 128) return lo + hi * TWO_32;
    }
    const b = buf[r.pos] ?? 0;
    lo = (lo | ((b & 127) << 28)) >>> 0;
    hi = (hi | ((b & 127) >> 4)) >>> 0;
    if ((buf[r.pos++] ?? 0) < 128) return lo + hi * TWO_32;
    i = 0;
  } else {
    for (; i < 3; ++i) {
      if (r.pos >= r.len) throw indexOutOfRange(r, 1);
      lo = (lo | (((buf[r.pos] ?? 0) & 127) << (i * 7))) >>> 0;
      if ((buf[r.pos++] ?? 0) < 128) return lo + hi * TWO_32;
    }
    // protobufjs takes a fourth byte here unchecked and stops, whatever its top bit.
    lo = (lo | (((buf[r.pos++] ?? 0) & 127) << (i * 7))) >>> 0;
    return lo + hi * TWO_32;
  }
  const checked = !(r.len - r.pos > 4);
  for (; i < 5; ++i) {
    if (checked && r.pos >= r.len) throw indexOutOfRange(r, 1);
    hi = (hi | (((buf[r.pos] ?? 0) & 127) << (i * 7 + 3))) >>> 0;
    if ((buf[r.pos++] ?? 0) < 128) return lo + hi * TWO_32;
  }
  throw new Error('invalid varint encoding');
}

/** Enters a length-delimited sub-message: returns the outer limit to restore with leave. */
function enter(r: Reader): number {
  const n = length(r); // before reading pos: the length's own bytes come first
  const end = r.pos + n;
  if (end > r.len) throw new RangeError('index out of range');
  const outer = r.len;
  r.len = end;
  return outer;
}

function leave(r: Reader, outer: number): void {
  if (r.pos !== r.len) throw new RangeError('index out of range');
  r.len = outer;
}

function readDetection(r: Reader, visit: UplinkVisitor): void {
  const outer = enter(r);
  let x = 0;
  let y = 0;
  while (r.pos < r.len) {
    const t = tag(r);
    switch (t >>> 3) {
      case 1:
        x = r.float();
        break;
      case 2:
        y = r.float();
        break;
      default:
        r.skipType(t & 7, 3);
    }
  }
  leave(r, outer);
  visit.point(x, y);
}

function readPresence(r: Reader, visit: UplinkVisitor): void {
  const outer = enter(r);
  const buf = r.buf;
  while (r.pos < r.len) {
    const p = r.pos;
    // The encoder's Detection (length 10, x then y): what the general path reads, in place.
    if (p + 12 <= r.len && buf[p] === 0x0a && buf[p + 1] === 0x0a && buf[p + 2] === 0x0d && buf[p + 7] === 0x15) {
      r.pos = p + 12;
      visit.point(view.getFloat32(p + 3, true), view.getFloat32(p + 8, true));
      continue;
    }
    const t = tag(r);
    if (t >>> 3 === 1) readDetection(r, visit);
    else r.skipType(t & 7, 2);
  }
  leave(r, outer);
}

// Traffic fields of the packet being read (module scratch: no object per traffic body).
let tInterval = 0;
let tIn = 0;
let tOut = 0;
function readTraffic(r: Reader): void {
  const outer = enter(r);
  tInterval = 0;
  tIn = 0;
  tOut = 0;
  while (r.pos < r.len) {
    const t = tag(r);
    switch (t >>> 3) {
      case 1:
        tInterval = r.uint32();
        break;
      case 2:
        tIn = r.uint32();
        break;
      case 3:
        tOut = r.uint32();
        break;
      default:
        r.skipType(t & 7, 2);
    }
  }
  leave(r, outer);
}

/** One packet to the visitor; false when it has neither body (the caller reports which one, after the whole walk). */
function readPacket(r: Reader, visit: UplinkVisitor): boolean {
  const outer = enter(r);
  let macStart = 0;
  let macEnd = 0;
  let sensedAtMs = 0;
  let presence = false;
  let traffic = false;
  let intervalMs = 0;
  let inCount = 0;
  let outCount = 0;
  while (r.pos < r.len) {
    const t = tag(r);
    switch (t >>> 3) {
      case 1:
        macStart = stringSpan(r);
        macEnd = spanEnd;
        break;
      case 2:
        sensedAtMs = readUint64(r);
        break;
      case 3:
        visit.presenceBody();
        readPresence(r, visit);
        presence = true;
        break;
      case 4:
        readTraffic(r);
        traffic = true;
        intervalMs = tInterval;
        inCount = tIn;
        outCount = tOut;
        break;
      default:
        r.skipType(t & 7, 1);
    }
  }
  leave(r, outer);
  // Both oneof members on the wire: reflection's toObject reports the later-declared one.
  if (traffic) visit.traffic(macStart, macEnd, sensedAtMs, intervalMs, inCount, outCount);
  else if (presence) visit.presence(macStart, macEnd, sensedAtMs);
  else visit.bodiless(macStart, macEnd, sensedAtMs);
  return traffic || presence;
}

/**
 * Walks HiveUplink bytes into `visit`, its header last; throws DECODE_FAILED (an `AppError`,
 * the reason in its message) on exactly what protobufjs reflection refuses. Returns the index of
 * the first packet without a body, or -1: the wire allows one, the protocol does not.
 */
export function walkUplink(bytes: Uint8Array, visit: UplinkVisitor): number {
  let serialStart = 0;
  let serialEnd = 0;
  let seq = 0;
  let sentAtMs = 0;
  let protocolMinor = 0;
  let packets = 0;
  let bodiless = -1;
  try {
    const r = protobuf.Reader.create(bytes);
    clampStrings = r instanceof protobuf.BufferReader;
    view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    while (r.pos < r.len) {
      const t = tag(r);
      switch (t >>> 3) {
        case 1:
          serialStart = stringSpan(r);
          serialEnd = spanEnd;
          break;
        case 2:
          seq = readUint64(r);
          break;
        case 3:
          sentAtMs = readUint64(r);
          break;
        case 4:
          if (!readPacket(r, visit) && bodiless < 0) bodiless = packets;
          packets++;
          break;
        case 5:
          protocolMinor = r.uint32();
          break;
        default:
          r.skipType(t & 7, 0);
      }
    }
  } catch (err) {
    throw new AppError(ErrorCodes.DECODE_FAILED, `HiveUplink: ${(err as Error).message}`, { cause: err });
  }
  visit.header(serialStart, serialEnd, seq, sentAtMs, protocolMinor);
  return bodiless;
}

/** `walkUplink`, and a packet without a body refuses the batch too (DECODE_FAILED, the first one named). */
export function readUplink(bytes: Uint8Array, visit: UplinkVisitor): void {
  const bodiless = walkUplink(bytes, visit);
  if (bodiless >= 0)
    throw new AppError(ErrorCodes.DECODE_FAILED, `packets[${String(bodiless)}]: no presence or traffic body`);
}

/** The visitor that builds the batch as objects (`decodeUplink`). */
class BatchBuilder implements UplinkVisitor {
  readonly packets: WirePacket[] = [];
  batch: UplinkBatch | null = null;
  #points: Array<readonly [number, number]> = [];

  constructor(readonly bytes: Uint8Array) {}

  header(serialStart: number, serialEnd: number, seq: number, sentAtMs: number, protocolMinor: number): void {
    const batch = { hiveSerial: spanText(this.bytes, serialStart, serialEnd), seq, sentAtMs, packets: this.packets };
    // protocol_minor is absent on the wire from v1.0 senders: keep the domain object minimal.
    this.batch = protocolMinor === 0 ? batch : { ...batch, protocolMinor };
  }

  presenceBody(): void {
    this.#points = [];
  }

  point(x: number, y: number): void {
    this.#points.push([x, y] as const);
  }

  presence(macStart: number, macEnd: number, sensedAtMs: number): void {
    const sensorMac = spanText(this.bytes, macStart, macEnd);
    this.packets.push({ kind: 'presence', sensorMac, sensedAtMs, detections: this.#points });
    this.#points = [];
  }

  bodiless(): void {
    // The batch is refused once walked (readUplink).
  }

  traffic(
    macStart: number,
    macEnd: number,
    sensedAtMs: number,
    intervalMs: number,
    inCount: number,
    outCount: number,
  ): void {
    const sensorMac = spanText(this.bytes, macStart, macEnd);
    this.packets.push({ kind: 'traffic', sensorMac, sensedAtMs, intervalMs, in: inCount, out: outCount });
    this.#points = [];
  }
}

/** HiveUplink bytes → batch; accepts and rejects exactly what the reflection decoder does. */
export function decodeUplinkBytes(bytes: Uint8Array): UplinkBatch {
  const builder = new BatchBuilder(bytes);
  readUplink(bytes, builder);
  return builder.batch as UplinkBatch;
}
