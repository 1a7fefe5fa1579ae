import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { AppError, ErrorCodes } from '../core/errors.js';
import { healthFromRaw, healthToRaw, stateFromRaw, stateToRaw, type RawHealth } from './health.js';
import { decodeUplinkBytes } from './uplink-decode.js';
import { encodeUplinkWire } from './uplink-wire.js';
import type { HiveHeartbeat, MeshFrame, UplinkAck, UplinkBatch, WirePacket } from './messages.js';

/**
 * Protobuf codec for proto/occusim/v1, loaded by reflection from the .proto file at start
 * (nothing generated, so the .proto stays the single source of truth). Pure functions:
 * bytes in, domain objects out; malformed input throws AppError(DECODE_FAILED).
 */
const PROTO_FILE = fileURLToPath(new URL('../../proto/occusim/v1/uplink.proto', import.meta.url));

/** The loaded schema (reflection), e.g. for golden vectors and the conformance checker. */
export const protoRoot = protobuf.loadSync(PROTO_FILE);
const UplinkAckT = protoRoot.lookupType('occusim.v1.UplinkAck');
const MeshFrameT = protoRoot.lookupType('occusim.v1.MeshFrame');
const HeartbeatT = protoRoot.lookupType('occusim.v1.HiveHeartbeat');

const TO_OBJECT: protobuf.IConversionOptions = {
  longs: Number,
  enums: Number,
  defaults: true,
  oneofs: true,
  arrays: true,
};

interface RawDetection {
  x: number;
  y: number;
}
export interface RawPacket {
  sensorMac: string;
  sensedAtMs: number;
  body?: 'presence' | 'traffic';
  presence?: { detections: RawDetection[] };
  traffic?: { intervalMs: number; in: number; out: number };
}
interface RawFrame {
  meshSeq: number;
  hops: number;
  payload?: 'data' | 'health';
  data?: RawPacket;
  health?: RawHealth;
}
interface RawHeartbeat extends Omit<HiveHeartbeat, 'state' | 'sensors'> {
  state: number;
  sensors: RawHealth[];
}

export function packetToRaw(p: WirePacket): Record<string, unknown> {
  if (p.kind === 'presence') {
    return {
      sensorMac: p.sensorMac,
      sensedAtMs: p.sensedAtMs,
      presence: { detections: p.detections.map(([x, y]) => ({ x, y })) },
    };
  }
  return {
    sensorMac: p.sensorMac,
    sensedAtMs: p.sensedAtMs,
    traffic: { intervalMs: p.intervalMs, in: p.in, out: p.out },
  };
}

export function packetFromRaw(r: RawPacket, index: number): WirePacket {
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

export function decodeRaw<T>(type: protobuf.Type, bytes: Uint8Array): T {
  try {
    return type.toObject(type.decode(bytes), TO_OBJECT) as T;
  } catch (err) {
    throw new AppError(ErrorCodes.DECODE_FAILED, `${type.name}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * HiveUplink is the hot message: the hand-written encoder (uplink-wire.ts) and the one decoder
 * (uplink-decode.ts, whose walk the cloud's hot path reads too), byte- and verdict-identical
 * to reflection (the oracle in test/oracles/uplink-reflect.ts).
 */
export function encodeUplink(batch: UplinkBatch): Uint8Array {
  return encodeUplinkWire(batch);
}

export function decodeUplink(bytes: Uint8Array): UplinkBatch {
  return decodeUplinkBytes(bytes);
}

export function encodeAck(ack: UplinkAck): Uint8Array {
  return UplinkAckT.encode(UplinkAckT.fromObject({ ...ack })).finish();
}

export function decodeAck(bytes: Uint8Array): UplinkAck {
  const raw = decodeRaw<UplinkAck>(UplinkAckT, bytes);
  return { hiveSerial: raw.hiveSerial, ackedSeq: raw.ackedSeq, ackedAtMs: raw.ackedAtMs };
}

export function encodeMeshFrame(frame: MeshFrame): Uint8Array {
  const payload =
    frame.payload.kind === 'data'
      ? { data: packetToRaw(frame.payload.packet) }
      : { health: healthToRaw(frame.payload.health) };
  return MeshFrameT.encode(MeshFrameT.fromObject({ meshSeq: frame.meshSeq, hops: frame.hops, ...payload })).finish();
}

export function decodeMeshFrame(bytes: Uint8Array): MeshFrame {
  const raw = decodeRaw<RawFrame>(MeshFrameT, bytes);
  if (raw.payload === 'data' && raw.data)
    return { meshSeq: raw.meshSeq, hops: raw.hops, payload: { kind: 'data', packet: packetFromRaw(raw.data, 0) } };
  if (raw.payload === 'health' && raw.health)
    return { meshSeq: raw.meshSeq, hops: raw.hops, payload: { kind: 'health', health: healthFromRaw(raw.health) } };
  throw new AppError(ErrorCodes.DECODE_FAILED, 'MeshFrame: no data or health payload');
}

export function encodeHeartbeat(hb: HiveHeartbeat): Uint8Array {
  const raw = { ...hb, state: stateToRaw(hb.state), sensors: hb.sensors.map(healthToRaw) };
  return HeartbeatT.encode(HeartbeatT.fromObject(raw)).finish();
}

export function decodeHeartbeat(bytes: Uint8Array): HiveHeartbeat {
  const raw = decodeRaw<RawHeartbeat>(HeartbeatT, bytes);
  return { ...raw, state: stateFromRaw(raw.state), sensors: raw.sensors.map(healthFromRaw) };
}
