import { ErrorCodes, type ErrorCode } from '../core/errors.js';
import { parseHiveTopic } from '../core/topics.js';
import { decodeHeartbeat } from '../proto/codec.js';
import { MAX_HEARTBEAT_BYTES } from '../proto/limits.js';
import type { SensorHealth } from '../proto/messages.js';

import { deadLetterOf, decodeOrReason, type Received } from './received.js';
import type { AssetRegistry } from './registry.js';
import type { HiveStatus, SensorHealthWrite } from '../store/port.js';
import type { DeadLetter } from '../store/rows.js';

/**
 * Heartbeat ingest, pure: a `HiveHeartbeat` (proto/occusim/v1/uplink.proto) received on
 * `occusim/v1/hives/{serial}/heartbeat` → the hive's latest status and its sensors' health,
 * or dead letters with reasons, like uplinks (docs/occupancy.md, "Heartbeats"): a topic
 * that is not a heartbeat topic → BAD_TOPIC; undecodable bytes → DECODE_FAILED; a serial
 * differing from the topic's or naming no hive → UNKNOWN_HIVE (the whole heartbeat); a
 * SensorHealth of an unknown MAC → UNKNOWN_SENSOR, of another hive's sensor →
 * SENSOR_NOT_ON_HIVE (that entry only).
 */
export type HeartbeatVerdict =
  | { kind: 'rejected'; deadLetter: DeadLetter }
  | { kind: 'accepted'; status: HiveStatus; sensors: SensorHealthWrite[]; deadLetters: DeadLetter[] };

function reject(r: Received, reason: ErrorCode, message: string): HeartbeatVerdict {
  return { kind: 'rejected', deadLetter: deadLetterOf(r, reason, message) };
}

export function inspectHeartbeat(registry: AssetRegistry, r: Received): HeartbeatVerdict {
  const parsed = parseHiveTopic(r.topic);
  if (!parsed || parsed.kind !== 'heartbeat')
    return reject(r, ErrorCodes.BAD_TOPIC, `not a hive heartbeat topic: ${r.topic}`);
  // docs/protocol.md §5: an external broker may not enforce the heartbeat limit, so the ingest does.
  if (r.payload.length > MAX_HEARTBEAT_BYTES) {
    return reject(
      r,
      ErrorCodes.DECODE_FAILED,
      `HiveHeartbeat: ${r.payload.length} bytes exceed the ${MAX_HEARTBEAT_BYTES}-byte limit`,
    );
  }
  const hb = decodeOrReason(decodeHeartbeat, r.payload);
  if (typeof hb === 'string') return reject(r, ErrorCodes.DECODE_FAILED, `HiveHeartbeat: ${hb}`);
  if (hb.hiveSerial !== parsed.serial) {
    return reject(
      r,
      ErrorCodes.UNKNOWN_HIVE,
      `heartbeat hive serial ${JSON.stringify(hb.hiveSerial)} does not match topic serial ${parsed.serial}`,
    );
  }
  const hive = registry.hiveBySerial(parsed.serial);
  if (!hive) return reject(r, ErrorCodes.UNKNOWN_HIVE, `no hive with serial ${parsed.serial}`);
  const { sensors: health, hiveSerial, ...rest } = hb;
  const status: HiveStatus = { hiveId: hive.id, hiveSerial, lastHeartbeatMs: r.receivedAtMs, ...rest };
  const sensors: SensorHealthWrite[] = [];
  const deadLetters: DeadLetter[] = [];
  health.forEach((h, i) => {
    const sensor = registry.sensorByMac(h.sensorMac);
    const where = `${hive.serial} heartbeat sensors[${i}]`;
    const dead = (reason: ErrorCode, message: string): void => {
      deadLetters.push({
        receivedAtMs: r.receivedAtMs,
        topic: r.topic,
        reason,
        message: `${where}: ${message}`,
        payload: new TextEncoder().encode(JSON.stringify(h)),
      });
    };
    if (!sensor) dead(ErrorCodes.UNKNOWN_SENSOR, `no sensor with MAC ${h.sensorMac}`);
    else if (sensor.hiveId !== hive.id)
      dead(
        ErrorCodes.SENSOR_NOT_ON_HIVE,
        `sensor ${sensor.id} (${h.sensorMac}) is not attached to hive ${hive.serial}`,
      );
    else sensors.push(healthRow(sensor.id, h));
  });
  return { kind: 'accepted', status, sensors, deadLetters };
}

function healthRow(sensorId: string, h: SensorHealth): SensorHealthWrite {
  const { sensorMac: _mac, ...fields } = h;
  return { sensorId, ...fields };
}
