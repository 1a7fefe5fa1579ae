import { ErrorCodes, type ErrorCode } from '../core/errors.js';
import { parseHiveTopic } from '../core/topics.js';
import { decodeUplink } from '../proto/codec.js';
import { MAX_PACKETS_PER_BATCH, MAX_PAYLOAD_BYTES } from '../proto/limits.js';
import type { UplinkBatch, WirePacket } from '../proto/messages.js';
import type { Hive } from '../assets/model.js';
import { deadLetterOf, decodeOrReason, type Received } from './received.js';
import type { AssetRegistry } from './registry.js';
import type { DeadLetter } from '../store/rows.js';

/**
 * Ingest validation, pure: one MQTT message in, a verdict out. A whole message is rejected
 * when it cannot be attributed to a known hive; otherwise each packet is accepted or
 * dead-lettered on its own, so one bad sensor never costs the rest of the batch.
 */

export interface AcceptedPacket {
  sensorId: string;
  packet: WirePacket;
}

export type UplinkVerdict =
  | { kind: 'rejected'; deadLetter: DeadLetter }
  | { kind: 'accepted'; hive: Hive; batch: UplinkBatch; packets: AcceptedPacket[]; deadLetters: DeadLetter[] };

function reject(r: Received, reason: ErrorCode, message: string): UplinkVerdict {
  return { kind: 'rejected', deadLetter: deadLetterOf(r, reason, message) };
}

type PacketCheck = { ok: true; sensorId: string } | { ok: false; reason: ErrorCode; message: string };

/** The sensor a packet belongs to, or why it cannot be processed. */
export function checkPacket(registry: AssetRegistry, hive: Hive, p: WirePacket): PacketCheck {
  const sensor = registry.sensorByMac(p.sensorMac);
  if (!sensor) return { ok: false, reason: ErrorCodes.UNKNOWN_SENSOR, message: `no sensor with MAC ${p.sensorMac}` };
  if (sensor.hiveId !== hive.id) {
    return {
      ok: false,
      reason: ErrorCodes.SENSOR_NOT_ON_HIVE,
      message: `sensor ${sensor.id} (${p.sensorMac}) is not attached to hive ${hive.serial}`,
    };
  }
  if (sensor.mode !== p.kind) {
    return {
      ok: false,
      reason: ErrorCodes.SENSOR_MODE_MISMATCH,
      message: `${p.kind} packet from ${sensor.mode} sensor ${sensor.id}`,
    };
  }
  return { ok: true, sensorId: sensor.id };
}

export const packetJson = (p: WirePacket): Uint8Array => new TextEncoder().encode(JSON.stringify(p));

function splitPackets(
  registry: AssetRegistry,
  hive: Hive,
  batch: UplinkBatch,
  r: Received,
): Pick<Extract<UplinkVerdict, { kind: 'accepted' }>, 'packets' | 'deadLetters'> {
  const packets: AcceptedPacket[] = [];
  const deadLetters: DeadLetter[] = [];
  batch.packets.forEach((p, i) => {
    const check = checkPacket(registry, hive, p);
    if (check.ok) {
      packets.push({ sensorId: check.sensorId, packet: p });
      return;
    }
    const where = `${hive.serial} seq ${batch.seq} packets[${i}]`;
    deadLetters.push({
      receivedAtMs: r.receivedAtMs,
      topic: r.topic,
      reason: check.reason,
      message: `${where}: ${check.message}`,
      payload: packetJson(p),
    });
  });
  return { packets, deadLetters };
}

/** Validates one message received on an uplink subscription (steps in order: topic, decode, sequence, hive, packets). */
export function inspectUplink(registry: AssetRegistry, r: Received): UplinkVerdict {
  const parsed = parseHiveTopic(r.topic);
  if (!parsed || parsed.kind !== 'uplink')
    return reject(r, ErrorCodes.BAD_TOPIC, `not a hive uplink topic: ${r.topic}`);
  // docs/protocol.md §5, enforced here too: an external broker may allow larger payloads.
  if (r.payload.length > MAX_PAYLOAD_BYTES)
    return reject(
      r,
      ErrorCodes.DECODE_FAILED,
      `HiveUplink: ${r.payload.length} bytes exceed the ${MAX_PAYLOAD_BYTES}-byte limit`,
    );
  const batch = decodeOrReason(decodeUplink, r.payload);
  if (typeof batch === 'string') return reject(r, ErrorCodes.DECODE_FAILED, batch);
  if (batch.packets.length > MAX_PACKETS_PER_BATCH) {
    return reject(
      r,
      ErrorCodes.DECODE_FAILED,
      `HiveUplink: ${batch.packets.length} packets exceed the ${MAX_PACKETS_PER_BATCH}-packet limit`,
    );
  }
  if (!Number.isSafeInteger(batch.seq) || batch.seq < 1)
    return reject(r, ErrorCodes.DECODE_FAILED, `HiveUplink.seq must be an integer >= 1, got ${batch.seq}`);
  if (batch.hiveSerial !== parsed.serial) {
    return reject(
      r,
      ErrorCodes.UNKNOWN_HIVE,
      `payload hive serial ${JSON.stringify(batch.hiveSerial)} does not match topic serial ${parsed.serial}`,
    );
  }
  const hive = registry.hiveBySerial(parsed.serial);
  if (!hive) return reject(r, ErrorCodes.UNKNOWN_HIVE, `no hive with serial ${parsed.serial}`);
  return { kind: 'accepted', hive, batch, ...splitPackets(registry, hive, batch, r) };
}
