import type protobuf from 'protobufjs';
import { protoRoot } from '../proto/codec.js';

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
  hiveSerial: string;
  seq: number;
  sentAtMs: number;
  protocolMinor: number;
  packets: Array<{ sensorMac: string; sensedAtMs: number; body?: string; presence?: unknown; traffic?: unknown }>;
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

/** Decodes `payload` as `type`, or returns the decoder's complaint. */
export function rawDecode<T>(type: 'HiveUplink' | 'UplinkAck' | 'HiveHeartbeat', payload: Uint8Array): T | string {
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
