import { describe, expect, it } from 'vitest';
import {
  decodeAck,
  decodeHeartbeat,
  decodeMeshFrame,
  decodeUplink,
  encodeAck,
  encodeHeartbeat,
  encodeMeshFrame,
  encodeUplink,
} from '../../src/proto/codec.js';
import type { HiveHeartbeat, MeshFrame, UplinkBatch } from '../../src/proto/messages.js';
import { isAppError } from '../../src/core/errors.js';

describe('uplink codec', () => {
  it('round-trips a batch with presence and traffic packets', () => {
    const batch: UplinkBatch = {
      hiveSerial: 'HV0011223344',
      seq: 42,
      sentAtMs: 1_772_434_800_000,
      packets: [
        {
          kind: 'presence',
          sensorMac: '00-17-0d-00-00-aa-bb-cc',
          sensedAtMs: 1_772_434_799_000,
          detections: [
            [0.5, 0.25],
            [Math.fround(0.1), Math.fround(0.9)],
          ],
        },
        { kind: 'presence', sensorMac: '00-17-0d-00-00-aa-bb-cd', sensedAtMs: 1_772_434_799_000, detections: [] },
        {
          kind: 'traffic',
          sensorMac: '00-17-0d-00-00-aa-bb-ce',
          sensedAtMs: 1_772_434_800_000,
          intervalMs: 10_000,
          in: 2,
          out: 1,
        },
      ],
    };
    expect(decodeUplink(encodeUplink(batch))).toEqual(batch);
  });

  it('round-trips an ack', () => {
    const ack = { hiveSerial: 'HV0011223344', ackedSeq: 7, ackedAtMs: 1_772_434_800_500 };
    expect(decodeAck(encodeAck(ack))).toEqual(ack);
  });

  it('rejects garbage with a DECODE_FAILED error, not a crash', () => {
    let caught: unknown;
    try {
      decodeUplink(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]));
    } catch (err) {
      caught = err;
    }
    expect(isAppError(caught, 'DECODE_FAILED')).toBe(true);
  });
});

describe('mesh frame and heartbeat codec', () => {
  const health = {
    sensorMac: '00-17-0d-00-00-aa-bb-cc',
    measuredAtMs: 1_772_434_800_000,
    batteryLevel: 0.5,
    batteryRuntimeS: 1000,
    rssiDbm: -80,
    linkPdr: 0.75,
    uptimeMs: 5000,
    parent: 'HV1',
    hops: 3,
    queueOverflows: 0,
  };

  it('round-trips a data frame and a health frame', () => {
    const data: MeshFrame = {
      meshSeq: 9,
      hops: 2,
      payload: {
        kind: 'data',
        packet: { kind: 'traffic', sensorMac: 'm', sensedAtMs: 5, intervalMs: 10, in: 1, out: 0 },
      },
    };
    expect(decodeMeshFrame(encodeMeshFrame(data))).toEqual(data);
    const h: MeshFrame = { meshSeq: 10, hops: 3, payload: { kind: 'health', health } };
    expect(decodeMeshFrame(encodeMeshFrame(h))).toEqual(h);
  });

  it('round-trips a heartbeat with its sensors and state', () => {
    const hb: HiveHeartbeat = {
      hiveSerial: 'HV1',
      sentAtMs: 1,
      firmwareVersion: '1.0.0',
      protocolMinor: 1,
      state: 'catching_up',
      uptimeMs: 2,
      netPathStability: 1,
      ackedSeq: 3,
      nextSeq: 5,
      bufferedBatches: 1,
      bufferedBytes: 100,
      droppedPackets: 0,
      sensors: [health],
    };
    expect(decodeHeartbeat(encodeHeartbeat(hb))).toEqual(hb);
  });

  it('refuses a frame without a payload as DECODE_FAILED', () => {
    expect(() => decodeMeshFrame(new Uint8Array([0x08, 0x01]))).toThrow(/no data or health/);
  });
});
