import { describe, expect, it } from 'vitest';
import { decodeAck, decodeUplink, encodeAck, encodeUplink } from '../../src/proto/codec.js';
import type { UplinkBatch } from '../../src/proto/messages.js';
import { isAppError } from '../../src/core/errors.js';

describe('uplink codec', () => {
  it('round-trips a batch with presence and traffic packets', () => {
    const batch: UplinkBatch = {
      hiveSerial: 'HV0011223344',
      seq: 42,
      sentAtMs: 1_772_434_800_000,
      packets: [
        { kind: 'presence', sensorMac: '00-17-0d-00-00-aa-bb-cc', sensedAtMs: 1_772_434_799_000, detections: [[0.5, 0.25], [Math.fround(0.1), Math.fround(0.9)]] },
        { kind: 'presence', sensorMac: '00-17-0d-00-00-aa-bb-cd', sensedAtMs: 1_772_434_799_000, detections: [] },
        { kind: 'traffic', sensorMac: '00-17-0d-00-00-aa-bb-ce', sensedAtMs: 1_772_434_800_000, intervalMs: 10_000, in: 2, out: 1 },
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
