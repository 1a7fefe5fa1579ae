import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { UplinkAck, UplinkBatch, WirePacket } from './messages.js';

/**
 * Protobuf codec for proto/occusim/v1, loaded by reflection from the .proto file at start
 * (nothing generated, so the .proto stays the single source of truth). Pure functions:
 * bytes in, domain objects out; malformed input throws AppError(DECODE_FAILED).
 */
const PROTO_FILE = fileURLToPath(new URL('../../proto/occusim/v1/uplink.proto', import.meta.url));

const root = protobuf.loadSync(PROTO_FILE);
const HiveUplinkT = root.lookupType('occusim.v1.HiveUplink');
const UplinkAckT = root.lookupType('occusim.v1.UplinkAck');

const TO_OBJECT: protobuf.IConversionOptions = { longs: Number, defaults: true, oneofs: true, arrays: true };

export const PROTOCOL_VERSION = 'occusim.v1';

interface RawDetection {
  x: number;
  y: number;
}
interface RawPacket {
  sensorMac: string;
  sensedAtMs: number;
  body?: 'presence' | 'traffic';
  presence?: { detections: RawDetection[] };
  traffic?: { intervalMs: number; in: number; out: number };
}
interface RawUplink {
  hiveSerial: string;
  seq: number;
  sentAtMs: number;
  packets: RawPacket[];
}

function packetToRaw(p: WirePacket): Record<string, unknown> {
  if (p.kind === 'presence') {
    return {
      sensorMac: p.sensorMac,
      sensedAtMs: p.sensedAtMs,
      presence: { detections: p.detections.map(([x, y]) => ({ x, y })) },
    };
  }
  return { sensorMac: p.sensorMac, sensedAtMs: p.sensedAtMs, traffic: { intervalMs: p.intervalMs, in: p.in, out: p.out } };
}

function packetFromRaw(r: RawPacket, index: number): WirePacket {
  if (r.body === 'presence' && r.presence) {
    return {
      kind: 'presence',
      sensorMac: r.sensorMac,
      sensedAtMs: r.sensedAtMs,
      detections: r.presence.detections.map((d) => [d.x, d.y] as const),
    };
  }
  if (r.body === 'traffic' && r.traffic) {
    return {
      kind: 'traffic',
      sensorMac: r.sensorMac,
      sensedAtMs: r.sensedAtMs,
      intervalMs: r.traffic.intervalMs,
      in: r.traffic.in,
      out: r.traffic.out,
    };
  }
  throw new AppError(ErrorCodes.DECODE_FAILED, `packets[${index}]: no presence or traffic body`);
}

export function encodeUplink(batch: UplinkBatch): Uint8Array {
  const raw = { hiveSerial: batch.hiveSerial, seq: batch.seq, sentAtMs: batch.sentAtMs, packets: batch.packets.map(packetToRaw) };
  return HiveUplinkT.encode(HiveUplinkT.fromObject(raw)).finish();
}

export function decodeUplink(bytes: Uint8Array): UplinkBatch {
  let raw: RawUplink;
  try {
    raw = HiveUplinkT.toObject(HiveUplinkT.decode(bytes), TO_OBJECT) as RawUplink;
  } catch (err) {
    throw new AppError(ErrorCodes.DECODE_FAILED, `HiveUplink: ${(err as Error).message}`, { cause: err });
  }
  return { hiveSerial: raw.hiveSerial, seq: raw.seq, sentAtMs: raw.sentAtMs, packets: raw.packets.map(packetFromRaw) };
}

export function encodeAck(ack: UplinkAck): Uint8Array {
  return UplinkAckT.encode(UplinkAckT.fromObject({ ...ack })).finish();
}

export function decodeAck(bytes: Uint8Array): UplinkAck {
  try {
    return UplinkAckT.toObject(UplinkAckT.decode(bytes), TO_OBJECT) as UplinkAck;
  } catch (err) {
    throw new AppError(ErrorCodes.DECODE_FAILED, `UplinkAck: ${(err as Error).message}`, { cause: err });
  }
}
