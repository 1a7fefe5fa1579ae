/**
 * Regenerates proto/vectors/ (run `npx tsx test/proto/generate-vectors.ts` after adding a
 * vector; existing vectors must never change: they pin the wire format).
 */
import { writeFileSync } from 'node:fs';
import { MAX_PACKETS_PER_BATCH } from '../../src/proto/limits.js';
import { encodeJson, FIRMWARE_SCENARIO, firmwareBench, VECTOR_DIR, type VectorJson } from './vectors.js';

// The hive and sensors of scenarios/firmware.yaml: a device replaying these vectors is one the
// platform knows. MAC(i) spells the bench's MACs (i = 1..3) and, for uplink-max, more of the
// same family (an edge case of size, not a session to replay).
const bench = firmwareBench();
const T0 = bench.startMs;
const SERIAL = bench.serial;
const MAC = (i: number): string =>
  `00-17-0d-00-00-00-${(i >> 8).toString(16).padStart(2, '0')}-${(i & 255).toString(16).padStart(2, '0')}`;
for (const i of [1, 2, 3])
  if (bench.sensors[i - 1]?.mac !== MAC(i))
    throw new Error(`${FIRMWARE_SCENARIO}: sensor ${i} must have MAC ${MAC(i)}`);
const health = {
  sensorMac: MAC(1),
  measuredAtMs: String(T0 - 500),
  batteryLevel: 0.8125,
  batteryRuntimeS: '31536000',
  rssiDbm: -71,
  linkPdr: 0.96875,
  uptimeMs: '86400000',
  parent: MAC(2),
  hops: 2,
  queueOverflows: 3,
};
const presence = (i: number, ms: number) => ({
  sensorMac: MAC(i),
  sensedAtMs: String(ms),
  presence: {
    detections: [
      { x: 0.25, y: 0.75 },
      { x: 0.5, y: 0.125 },
    ],
  },
});

const vectors: Record<string, Omit<VectorJson, 'canonicalHex'>> = {
  'uplink-basic': {
    type: 'occusim.v1.HiveUplink',
    description: 'A batch with a presence packet (two detections), an empty presence packet and a traffic packet',
    message: {
      hiveSerial: SERIAL,
      seq: '42',
      sentAtMs: String(T0),
      protocolMinor: 1,
      packets: [
        presence(1, T0 - 1000),
        { sensorMac: MAC(2), sensedAtMs: String(T0 - 1000), presence: {} },
        { sensorMac: MAC(3), sensedAtMs: String(T0), traffic: { intervalMs: 10000, in: 2, out: 1 } },
      ],
    },
  },
  'uplink-v1.0': {
    type: 'occusim.v1.HiveUplink',
    description: 'A v1.0 sender: no protocol_minor field',
    message: { hiveSerial: SERIAL, seq: '1', sentAtMs: String(T0), packets: [presence(1, T0 - 1000)] },
  },
  'uplink-empty': {
    type: 'occusim.v1.HiveUplink',
    description:
      'Edge case: a batch without packets: the tombstone a hive sends for a batch its full buffer dropped (docs/protocol.md §6)',
    message: { hiveSerial: SERIAL, seq: '7', sentAtMs: String(T0), protocolMinor: 1 },
  },
  'uplink-max': {
    type: 'occusim.v1.HiveUplink',
    description: `Edge case: the largest batch, ${MAX_PACKETS_PER_BATCH} packets, and the largest seq (2^53 - 1)`,
    message: {
      hiveSerial: SERIAL,
      seq: '9007199254740991',
      sentAtMs: String(T0),
      protocolMinor: 1,
      packets: Array.from({ length: MAX_PACKETS_PER_BATCH }, (_, i) => presence(i, T0 - 10_000 + i)),
    },
  },
  ack: {
    type: 'occusim.v1.UplinkAck',
    description: 'Cloud acknowledges every batch up to seq 42',
    message: { hiveSerial: SERIAL, ackedSeq: '42', ackedAtMs: String(T0 + 35) },
  },
  'mesh-data': {
    type: 'occusim.v1.MeshFrame',
    description: 'A traffic reading relayed over two hops',
    message: {
      meshSeq: 4294967295,
      hops: 2,
      data: { sensorMac: MAC(3), sensedAtMs: String(T0), traffic: { intervalMs: 10000, in: 0, out: 4 } },
    },
  },
  'mesh-health': {
    type: 'occusim.v1.MeshFrame',
    description: 'A health report one hop from the hive',
    message: { meshSeq: 17, hops: 1, health },
  },
  heartbeat: {
    type: 'occusim.v1.HiveHeartbeat',
    description: 'Hive status while catching up after an outage',
    message: {
      hiveSerial: SERIAL,
      sentAtMs: String(T0),
      firmwareVersion: '1.4.2',
      protocolMinor: 1,
      state: 'HIVE_STATE_CATCHING_UP',
      uptimeMs: '3600000',
      netPathStability: 0.875,
      ackedSeq: '41',
      nextSeq: '60',
      bufferedBatches: 18,
      bufferedBytes: '48213',
      droppedPackets: '0',
      sensors: [health],
    },
  },
};

// A session to replay (docs/firmware.md): seq 1..3 and a heartbeat, 10 s apart from T0 + 10 s,
// each packet from the bench sensor of the matching mode.
const [lab, booth, door] = [MAC(1), MAC(2), MAC(3)];
const at = (s: number): string => String(T0 + s * 1000);
const seen = (mac: string, s: number, detections: Array<{ x: number; y: number }>) => ({
  sensorMac: mac,
  sensedAtMs: at(s),
  presence: detections.length === 0 ? {} : { detections },
});
const session: Record<string, Omit<VectorJson, 'canonicalHex'>> = {
  'firmware-1-uplink': {
    type: 'occusim.v1.HiveUplink',
    description: `Session step 1 (${FIRMWARE_SCENARIO}): the first batch after boot, seq 1`,
    message: {
      hiveSerial: SERIAL,
      seq: '1',
      sentAtMs: at(10),
      protocolMinor: 1,
      packets: [
        seen(lab, 9, [{ x: 0.5, y: 0.5 }]),
        seen(booth, 9, []),
        { sensorMac: door, sensedAtMs: at(10), traffic: { intervalMs: 10000, in: 1, out: 0 } },
      ],
    },
  },
  'firmware-2-uplink': {
    type: 'occusim.v1.HiveUplink',
    description: `Session step 2 (${FIRMWARE_SCENARIO}): seq 2, someone walked into the booth`,
    message: {
      hiveSerial: SERIAL,
      seq: '2',
      sentAtMs: at(20),
      protocolMinor: 1,
      packets: [
        seen(lab, 19, []),
        seen(booth, 19, [{ x: 0.25, y: 0.75 }]),
        { sensorMac: door, sensedAtMs: at(20), traffic: { intervalMs: 10000, in: 0, out: 0 } },
      ],
    },
  },
  'firmware-3-uplink': {
    type: 'occusim.v1.HiveUplink',
    description: `Session step 3 (${FIRMWARE_SCENARIO}): seq 3`,
    message: {
      hiveSerial: SERIAL,
      seq: '3',
      sentAtMs: at(30),
      protocolMinor: 1,
      packets: [seen(lab, 29, []), seen(booth, 29, [{ x: 0.25, y: 0.75 }])],
    },
  },
  'firmware-4-heartbeat': {
    type: 'occusim.v1.HiveHeartbeat',
    description: `Session step 4 (${FIRMWARE_SCENARIO}): the heartbeat after seq 3 was acknowledged`,
    message: {
      hiveSerial: SERIAL,
      sentAtMs: at(31),
      firmwareVersion: '2.0.1',
      protocolMinor: 1,
      state: 'HIVE_STATE_STREAMING',
      uptimeMs: '31000',
      netPathStability: 1,
      ackedSeq: '3',
      nextSeq: '4',
      droppedPackets: '0',
    },
  },
};
for (const [name, v] of Object.entries(session)) write(name, v, encodeJson(v.type, v.message));

function write(name: string, v: VectorJson, bin: Uint8Array): void {
  writeFileSync(`${VECTOR_DIR}${name}.bin`, bin);
  writeFileSync(`${VECTOR_DIR}${name}.json`, `${JSON.stringify(v, null, 2)}\n`);
}

for (const [name, v] of Object.entries(vectors)) write(name, v, encodeJson(v.type, v.message));

// Unknown fields: a newer minor version's field 99 (varint 1234) and 100 (string), appended.
const base = vectors['uplink-v1.0'];
if (base) {
  const canonical = encodeJson(base.type, base.message);
  const extra = Uint8Array.from([0x98, 0x06, 0xd2, 0x09, 0xa2, 0x06, 0x03, 0x6e, 0x65, 0x77]);
  const bin = new Uint8Array([...canonical, ...extra]);
  write(
    'uplink-unknown-field',
    {
      ...base,
      description: 'Edge case: fields 99 and 100 from a newer minor version; a v1 receiver ignores them',
      canonicalHex: Buffer.from(canonical).toString('hex'),
    },
    bin,
  );
}
