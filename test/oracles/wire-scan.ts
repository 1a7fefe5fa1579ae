import { AppError, ErrorCodes } from '../../src/core/errors.js';

/**
 * The cloud hot path's previous decoder (src/cloud/kernel/wire-scan.ts until #31 item 6),
 * kept as an oracle: the one decoder's walk (src/proto/uplink-decode.ts) must read what this
 * one read wherever it read anything (test/cloud/kernel/wire-agreement.test.ts).
 *
 * A zero-allocation scanner of `HiveUplink` (proto/occusim/v1/uplink.proto): it walks the
 * protobuf wire format once and hands each packet to a visitor, without building objects or
 * strings per packet. It reads only what an encoder of this .proto writes and throws
 * DECODE_FAILED on anything else (the live cloud then left the message to its slow path,
 * `decodeUplink`): unknown fields, a known field with another wire type, a second oneof body,
 * uint32 values over 32 bits and integers over 2^53. Malformed input throws DECODE_FAILED too.
 */

export interface ScanVisitor {
  /** Once, before the packets; the serial's bytes are [start, end) of the buffer. */
  header(seq: number, sentAtMs: number, serialStart: number, serialEnd: number): void;
  /** A presence packet's detections are [start, end) in the visitor's xs/ys after `point` calls. */
  presenceStart(macStart: number, macEnd: number, sensedAtMs: number): void;
  point(x: number, y: number): void;
  presenceEnd(): void;
  traffic(
    macStart: number,
    macEnd: number,
    sensedAtMs: number,
    intervalMs: number,
    inCount: number,
    outCount: number,
  ): void;
}

export class WireScanner {
  #b: Uint8Array = new Uint8Array(0);
  #v: DataView = new DataView(new ArrayBuffer(0));
  #p = 0;
  /** End of the span last read by #span (kept in a field: no tuple per field). */
  #end = 0;
  readonly #packets: number[] = [];

  scan(bytes: Uint8Array, visit: ScanVisitor): void {
    this.#b = bytes;
    this.#v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#p = 0;
    let seq = 0;
    let sent = 0;
    let sStart = 0;
    let sEnd = 0;
    const packets = this.#packets;
    packets.length = 0;
    while (this.#p < bytes.length) {
      const tag = this.#varint();
      const field = tag > 0x7fffffff ? Math.floor(tag / 8) : tag >>> 3;
      if (field === 1 && (tag & 7) === 2) {
        sStart = this.#span();
        sEnd = this.#end;
      } else if (field === 2 && (tag & 7) === 0) seq = this.#varint();
      else if (field === 3 && (tag & 7) === 0) sent = this.#varint();
      else if (field === 4 && (tag & 7) === 2) {
        packets.push(this.#span(), this.#end);
      } else if (field === 5 && (tag & 7) === 0)
        this.#uint32(); // protocol_minor
      else
        throw new AppError(
          ErrorCodes.DECODE_FAILED,
          `HiveUplink: field ${field} with wire type ${tag & 7} is not read here`,
        );
    }
    visit.header(seq, sent, sStart, sEnd);
    for (let i = 0; i < packets.length; i += 2) this.#packet(packets[i] as number, packets[i + 1] as number, visit);
  }

  #packet(start: number, end: number, visit: ScanVisitor): void {
    this.#p = start;
    let macS = 0;
    let macE = 0;
    let t = 0;
    let bodyKind = 0;
    let bodyS = 0;
    let bodyE = 0;
    const b = this.#b;
    // The encoder's layout: 0a <len> mac, 10 <varint> sensed_at — read in place when short.
    if (b[start] === 0x0a && (b[start + 1] as number) < 0x80) {
      macS = start + 2;
      macE = macS + (b[start + 1] as number);
      if (macE <= end && b[macE] === 0x10) {
        this.#p = macE + 1;
        t = this.#varint();
      } else this.#p = start;
    }
    while (this.#p < end) {
      const tag = this.#varint();
      const field = tag > 0x7fffffff ? Math.floor(tag / 8) : tag >>> 3;
      if (field === 1 && (tag & 7) === 2) {
        macS = this.#span();
        macE = this.#end;
      } else if (field === 2 && (tag & 7) === 0) t = this.#varint();
      else if ((field === 3 || field === 4) && (tag & 7) === 2) {
        if (bodyKind !== 0) throw new AppError(ErrorCodes.DECODE_FAILED, 'SensorPacket with two bodies');
        bodyKind = field;
        bodyS = this.#span();
        bodyE = this.#end;
      } else
        throw new AppError(
          ErrorCodes.DECODE_FAILED,
          `SensorPacket: field ${field} with wire type ${tag & 7} is not read here`,
        );
      if (this.#p > end) throw new AppError(ErrorCodes.DECODE_FAILED, 'packet overruns its length');
    }
    if (bodyKind === 3) this.#presence(macS, macE, t, bodyS, bodyE, visit);
    else if (bodyKind === 4) this.#traffic(macS, macE, t, bodyS, bodyE, visit);
    else throw new AppError(ErrorCodes.DECODE_FAILED, 'SensorPacket without a body');
  }

  #presence(macS: number, macE: number, t: number, start: number, end: number, visit: ScanVisitor): void {
    visit.presenceStart(macS, macE, t);
    this.#p = start;
    const b = this.#b;
    const v = this.#v;
    while (this.#p < end) {
      const p = this.#p;
      // The encoder's layout of a Detection (x then y, both set): 0a 0a 0d f32 15 f32 —
      // read it in place; anything else takes the general path below.
      if (p + 12 <= end && b[p] === 0x0a && b[p + 1] === 0x0a && b[p + 2] === 0x0d && b[p + 7] === 0x15) {
        this.#p = p + 12;
        visit.point(v.getFloat32(p + 3, true), v.getFloat32(p + 8, true));
        continue;
      }
      const tag = this.#varint();
      if (tag !== 0x0a) throw new AppError(ErrorCodes.DECODE_FAILED, `Presence: tag ${tag} is not read here`);
      const ds = this.#span();
      const de = this.#end;
      let x = 0;
      let y = 0;
      this.#p = ds;
      while (this.#p < de) {
        const dt = this.#varint();
        if (dt === 0x0d) x = this.#float();
        else if (dt === 0x15) y = this.#float();
        else throw new AppError(ErrorCodes.DECODE_FAILED, `Detection: tag ${dt} is not read here`);
        if (this.#p > de) throw new AppError(ErrorCodes.DECODE_FAILED, 'Detection overruns its length');
      }
      visit.point(x, y);
    }
    visit.presenceEnd();
  }

  #traffic(macS: number, macE: number, t: number, start: number, end: number, visit: ScanVisitor): void {
    this.#p = start;
    let interval = 0;
    let inC = 0;
    let outC = 0;
    while (this.#p < end) {
      const tag = this.#varint();
      if (tag === 0x08) interval = this.#uint32();
      else if (tag === 0x10) inC = this.#uint32();
      else if (tag === 0x18) outC = this.#uint32();
      else throw new AppError(ErrorCodes.DECODE_FAILED, `Traffic: tag ${tag} is not read here`);
      if (this.#p > end) throw new AppError(ErrorCodes.DECODE_FAILED, 'Traffic overruns its length');
    }
    visit.traffic(macS, macE, t, interval, inC, outC);
  }

  #varint(): number {
    const b = this.#b;
    let p = this.#p;
    // One-byte varints (tags, small lengths) are the common case.
    if (p < b.length && (b[p] as number) < 0x80) {
      this.#p = p + 1;
      return b[p] as number;
    }
    // Up to 4 bytes (28 bits) in 32-bit integer arithmetic, the rest in doubles (exact to 2^53).
    let result = 0;
    let shift = 0;
    while (shift < 28 && p < b.length) {
      const byte = b[p++] as number;
      result |= (byte & 0x7f) << shift;
      if (byte < 0x80) {
        this.#p = p;
        return result >>> 0;
      }
      shift += 7;
    }
    let big = result >>> 0;
    let mul = 2 ** 28;
    for (let i = 4; i < 10; i++) {
      if (p >= b.length) throw new AppError(ErrorCodes.DECODE_FAILED, 'truncated varint');
      const byte = b[p++] as number;
      big += (byte & 0x7f) * mul;
      if (byte < 0x80) {
        // Past 2^53 a double is no longer exact, and protobufjs rounds differently.
        if (big > Number.MAX_SAFE_INTEGER) throw new AppError(ErrorCodes.DECODE_FAILED, 'varint over 2^53');
        this.#p = p;
        return big;
      }
      mul *= 128;
    }
    throw new AppError(ErrorCodes.DECODE_FAILED, 'varint longer than 10 bytes');
  }

  /** A uint32 field: protobufjs keeps the low 32 bits of a longer varint; such a value is left to it. */
  #uint32(): number {
    const v = this.#varint();
    if (v > 0xffffffff) throw new AppError(ErrorCodes.DECODE_FAILED, 'uint32 over 32 bits');
    return v;
  }

  /** Reads a length-delimited field: returns its start, leaves its end in #end. */
  #span(): number {
    const len = this.#varint();
    const start = this.#p;
    if (start + len > this.#b.length)
      throw new AppError(ErrorCodes.DECODE_FAILED, 'length-delimited field overruns the message');
    this.#p = start + len;
    this.#end = this.#p;
    return start;
  }

  #float(): number {
    if (this.#p + 4 > this.#b.length) throw new AppError(ErrorCodes.DECODE_FAILED, 'truncated float');
    const x = this.#v.getFloat32(this.#p, true);
    this.#p += 4;
    return x;
  }
}
