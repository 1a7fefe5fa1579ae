import protobuf from 'protobufjs';
import { AppError, ErrorCodes } from '../../src/core/errors.js';
import type { UplinkBatch, WirePacket } from '../../src/proto/messages.js';

/**
 * The hand-written HiveUplink decoder that was live before the one walker
 * (src/proto/uplink-decode.ts, #31 item 6), kept as an oracle: it builds the batch straight
 * from protobufjs's Reader, so test/proto/uplink-decode.test.ts holds the live decoder to it
 * object for object and reason for reason (dead letters carry the reason text).
 */
const TWO_32 = 4294967296;

type Reader = protobuf.Reader;

function outOfRange(r: Reader, n = 1): RangeError {
  return new RangeError(`index out of range: ${String(r.pos)} + ${String(n)} > ${String(r.len)}`);
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
      if (r.pos >= r.len) throw outOfRange(r);
      lo = (lo | (((buf[r.pos] ?? 0) & 127) << (i * 7))) >>> 0;
      if ((buf[r.pos++] ?? 0) < 128) return lo + hi * TWO_32;
    }
    // protobufjs takes a fourth byte here unchecked and stops, whatever its top bit.
    lo = (lo | (((buf[r.pos++] ?? 0) & 127) << (i * 7))) >>> 0;
    return lo + hi * TWO_32;
  }
  const checked = !(r.len - r.pos > 4);
  for (; i < 5; ++i) {
    if (checked && r.pos >= r.len) throw outOfRange(r);
    hi = (hi | (((buf[r.pos] ?? 0) & 127) << (i * 7 + 3))) >>> 0;
    if ((buf[r.pos++] ?? 0) < 128) return lo + hi * TWO_32;
  }
  throw new Error('invalid varint encoding');
}

/** Enters a length-delimited sub-message: returns the outer limit to restore with leave. */
function enter(r: Reader): number {
  const length = r.uint32(); // before reading pos: the length's own bytes come first
  const end = r.pos + length;
  if (end > r.len) throw new RangeError('index out of range');
  const outer = r.len;
  r.len = end;
  return outer;
}

function leave(r: Reader, outer: number): void {
  if (r.pos !== r.len) throw new RangeError('index out of range');
  r.len = outer;
}

function readDetection(r: Reader): readonly [number, number] {
  const outer = enter(r);
  let x = 0;
  let y = 0;
  while (r.pos < r.len) {
    const t = r.uint32();
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
  return [x, y] as const;
}

function readPresence(r: Reader): Array<readonly [number, number]> {
  const outer = enter(r);
  const detections: Array<readonly [number, number]> = [];
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t >>> 3 === 1) detections.push(readDetection(r));
    else r.skipType(t & 7, 2);
  }
  leave(r, outer);
  return detections;
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
    const t = r.uint32();
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

/** A packet, or null when it has neither body (the caller reports which one, after the whole decode). */
function readPacket(r: Reader): WirePacket | null {
  const outer = enter(r);
  let sensorMac = '';
  let sensedAtMs = 0;
  let detections: Array<readonly [number, number]> | null = null;
  let traffic = false;
  let intervalMs = 0;
  let inCount = 0;
  let outCount = 0;
  while (r.pos < r.len) {
    const t = r.uint32();
    switch (t >>> 3) {
      case 1:
        sensorMac = r.string();
        break;
      case 2:
        sensedAtMs = readUint64(r);
        break;
      case 3:
        detections = readPresence(r);
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
  if (traffic) return { kind: 'traffic', sensorMac, sensedAtMs, intervalMs, in: inCount, out: outCount };
  if (detections !== null) return { kind: 'presence', sensorMac, sensedAtMs, detections };
  return null;
}

/** HiveUplink bytes → batch; accepts and rejects exactly what the reflection decoder does. */
export function decodeUplinkWireOracle(bytes: Uint8Array): UplinkBatch {
  let hiveSerial = '';
  let seq = 0;
  let sentAtMs = 0;
  let protocolMinor = 0;
  const packets: WirePacket[] = [];
  let bodiless = -1;
  try {
    const r = protobuf.Reader.create(bytes);
    while (r.pos < r.len) {
      const t = r.uint32();
      switch (t >>> 3) {
        case 1:
          hiveSerial = r.string();
          break;
        case 2:
          seq = readUint64(r);
          break;
        case 3:
          sentAtMs = readUint64(r);
          break;
        case 4: {
          const p = readPacket(r);
          if (p === null && bodiless < 0) bodiless = packets.length;
          // A placeholder keeps the index; the batch is refused below anyway.
          packets.push(p ?? PLACEHOLDER);
          break;
        }
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
  if (bodiless >= 0)
    throw new AppError(ErrorCodes.DECODE_FAILED, `packets[${String(bodiless)}]: no presence or traffic body`);
  const batch = { hiveSerial, seq, sentAtMs, packets };
  // protocol_minor is absent on the wire from v1.0 senders: keep the domain object minimal.
  return protocolMinor === 0 ? batch : { ...batch, protocolMinor };
}

const PLACEHOLDER: WirePacket = { kind: 'traffic', sensorMac: '', sensedAtMs: 0, intervalMs: 0, in: 0, out: 0 };
