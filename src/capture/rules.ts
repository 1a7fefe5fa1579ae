import type protobuf from 'protobufjs';
import { isAppError, ErrorCodes } from '../core/errors.js';
import { protoRoot } from '../proto/codec.js';
import { spanText, walkUplink, type UplinkVisitor } from '../proto/uplink-decode.js';

/**
 * Field-level decoding for the conformance checker: the raw protobuf object (so a missing
 * field is reported as such rather than as a decode error), with the rule names of
 * docs/protocol.md §Conformance.
 */
export type Rule =
  | 'topic'
  | 'decode'
  | 'required'
  | 'known-sensor'
  | 'sequence'
  | 'retransmission'
  | 'timestamp'
  | 'limits'
  | 'ack'
  | 'heartbeat';

export const RULES: readonly Rule[] = [
  'topic',
  'decode',
  'required',
  'known-sensor',
  'sequence',
  'retransmission',
  'timestamp',
  'limits',
  'ack',
  'heartbeat',
];

export interface Violation {
  /** Message index in the capture (or in arrival order when listening). */
  index: number;
  topic: string;
  /** Protobuf field path, e.g. `packets[3].sensed_at_ms`. */
  field: string;
  rule: Rule;
  message: string;
}

export interface RawUplinkFields {
  packets: RawPacketFields[];
  hiveSerial: string;
  seq: number;
  sentAtMs: number;
  protocolMinor: number;
}
interface RawPacketFields {
  sensorMac: string;
  sensedAtMs: number;
  presence?: { detections: Array<{ x: number; y: number }> };
  body?: 'presence' | 'traffic';
  traffic?: { intervalMs: number; in: number; out: number };
}
export interface RawAckFields {
  hiveSerial: string;
  ackedSeq: number;
  ackedAtMs: number;
}
export interface RawHeartbeatFields {
  hiveSerial: string;
  sentAtMs: number;
  firmwareVersion: string;
  state: number;
}

const OPTS: protobuf.IConversionOptions = { longs: Number, enums: Number, defaults: true, oneofs: true, arrays: true };

/**
 * The uplink's fields as the wire carries them, read by the one uplink decoder
 * (proto/uplink-decode.ts), or its complaint: a packet without a body is a field to report
 * here, not a refused batch. The object has the shape (keys in order, both bodies of a packet
 * that carries two, `body` naming the one the protocol reads) that protobufjs reflection's
 * toObject gave, so retransmissions compare as they did (test/capture/rules.test.ts).
 */
export function rawUplink(payload: Uint8Array): RawUplinkFields | string {
  const fields = new RawUplinkBuilder(payload);
  try {
    walkUplink(payload, fields);
  } catch (err) {
    if (!isAppError(err, ErrorCodes.DECODE_FAILED)) throw err;
    return err.message;
  }
  return fields.raw;
}

class RawUplinkBuilder implements UplinkVisitor {
  readonly raw: RawUplinkFields = { packets: [], hiveSerial: '', seq: 0, sentAtMs: 0, protocolMinor: 0 };
  /** The packet's latest presence body, if it has one yet. */
  #presence: { detections: Array<{ x: number; y: number }> } | null = null;

  constructor(readonly bytes: Uint8Array) {}

  header(serialStart: number, serialEnd: number, seq: number, sentAtMs: number, protocolMinor: number): void {
    Object.assign(this.raw, { hiveSerial: spanText(this.bytes, serialStart, serialEnd), seq, sentAtMs, protocolMinor });
  }

  presenceBody(): void {
    this.#presence = { detections: [] };
  }

  point(x: number, y: number): void {
    this.#presence?.detections.push({ x, y });
  }

  presence(macStart: number, macEnd: number, sensedAtMs: number): void {
    this.#packet(macStart, macEnd, sensedAtMs, null);
  }

  bodiless(macStart: number, macEnd: number, sensedAtMs: number): void {
    this.#packet(macStart, macEnd, sensedAtMs, null);
  }

  traffic(
    macStart: number,
    macEnd: number,
    sensedAtMs: number,
    intervalMs: number,
    inCount: number,
    outCount: number,
  ): void {
    this.#packet(macStart, macEnd, sensedAtMs, { intervalMs, in: inCount, out: outCount });
  }

  /** Keys set in reflection's order: each body with `body` after it, a second body overwriting `body` in place. */
  #packet(macStart: number, macEnd: number, sensedAtMs: number, traffic: RawPacketFields['traffic'] | null): void {
    const p: RawPacketFields = { sensorMac: spanText(this.bytes, macStart, macEnd), sensedAtMs };
    if (this.#presence) {
      p.presence = this.#presence;
      p.body = 'presence';
    }
    if (traffic) {
      p.traffic = traffic;
      p.body = 'traffic';
    }
    this.#presence = null;
    this.raw.packets.push(p);
  }
}

/** Decodes `payload` as `type`, or returns the decoder's complaint. */
export function rawDecode<T>(type: 'UplinkAck' | 'HiveHeartbeat', payload: Uint8Array): T | string {
  const t = protoRoot.lookupType(`occusim.v1.${type}`);
  try {
    return t.toObject(t.decode(payload), OPTS) as T;
  } catch (err) {
    return `${type}: ${(err as Error).message}`;
  }
}

/** The packets of a batch as comparable text (retransmissions must repeat them exactly). */
export function packetsKey(packets: RawUplinkFields['packets']): string {
  return JSON.stringify(packets);
}
