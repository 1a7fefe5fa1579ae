import { describe, expect, it } from 'vitest';
import { inspectUplink } from '../../src/cloud/ingest.js';
import { buildRegistry } from '../../src/cloud/registry.js';
import { uplinkTopic } from '../../src/core/topics.js';
import { encodeUplink } from '../../src/proto/codec.js';
import type { UplinkBatch, WirePacket } from '../../src/proto/messages.js';
import { HIVE_SERIAL, presenceAt, SENSOR_PA, SENSOR_T, T0, tinyModel, trafficAt } from './fixture.js';

const registry = buildRegistry(tinyModel());
const batch = (packets: WirePacket[], over: Partial<UplinkBatch> = {}): UplinkBatch => ({
  hiveSerial: HIVE_SERIAL,
  seq: 1,
  sentAtMs: T0,
  packets,
  ...over,
});
const receive = (topic: string, payload: Uint8Array) =>
  inspectUplink(registry, { topic, payload, receivedAtMs: T0 + 500 });

describe('uplink inspection', () => {
  it('accepts a well-formed batch of known sensors and names their ids', () => {
    const v = receive(
      uplinkTopic(HIVE_SERIAL),
      encodeUplink(batch([presenceAt(SENSOR_PA, T0, [[6, 5]]), trafficAt(SENSOR_T, T0, 1, 0)])),
    );
    expect(v.kind).toBe('accepted');
    if (v.kind !== 'accepted') return;
    expect(v.packets.map((p) => p.sensorId)).toEqual([SENSOR_PA.id, SENSOR_T.id]);
    expect(v.deadLetters).toEqual([]);
  });

  it('dead-letters garbage as DECODE_FAILED with the raw payload kept', () => {
    const garbage = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]);
    const v = receive(uplinkTopic(HIVE_SERIAL), garbage);
    expect(v).toMatchObject({
      kind: 'rejected',
      deadLetter: { reason: 'DECODE_FAILED', receivedAtMs: T0 + 500, payload: garbage },
    });
  });

  it('dead-letters a batch over the protocol limits (500 packets, 256 KiB) as DECODE_FAILED, though it decodes', () => {
    const many = Array.from({ length: 501 }, (_, i) => trafficAt(SENSOR_T, T0 + i, 0, 0));
    expect(receive(uplinkTopic(HIVE_SERIAL), encodeUplink(batch(many)))).toMatchObject({
      kind: 'rejected',
      deadLetter: { reason: 'DECODE_FAILED', message: expect.stringContaining('500-packet limit') },
    });
    const big = [
      presenceAt(
        SENSOR_PA,
        T0,
        Array.from({ length: 22_000 }, () => [6, 5] as [number, number]),
      ),
    ];
    expect(receive(uplinkTopic(HIVE_SERIAL), encodeUplink(batch(big)))).toMatchObject({
      kind: 'rejected',
      deadLetter: { reason: 'DECODE_FAILED', message: expect.stringContaining('262144-byte limit') },
    });
  });

  it('dead-letters a batch with sequence number 0', () => {
    const v = receive(uplinkTopic(HIVE_SERIAL), encodeUplink(batch([], { seq: 0 })));
    expect(v).toMatchObject({ kind: 'rejected', deadLetter: { reason: 'DECODE_FAILED' } });
  });

  it('dead-letters an unknown hive as UNKNOWN_HIVE', () => {
    const v = receive(uplinkTopic('HV_NOBODY'), encodeUplink(batch([], { hiveSerial: 'HV_NOBODY' })));
    expect(v).toMatchObject({
      kind: 'rejected',
      deadLetter: { reason: 'UNKNOWN_HIVE', message: 'no hive with serial HV_NOBODY' },
    });
  });

  it('dead-letters a payload whose serial differs from the topic as UNKNOWN_HIVE', () => {
    const v = receive(uplinkTopic(HIVE_SERIAL), encodeUplink(batch([], { hiveSerial: 'HV_OTHER' })));
    expect(v.kind === 'rejected' && v.deadLetter.reason).toBe('UNKNOWN_HIVE');
  });

  it('dead-letters a message on a topic that is not an uplink as BAD_TOPIC', () => {
    const v = receive('occusim/v1/hives/HV0000000001/heartbeat', encodeUplink(batch([])));
    expect(v.kind === 'rejected' && v.deadLetter.reason).toBe('BAD_TOPIC');
  });

  it('dead-letters only the packets of unknown or foreign sensors, keeping the rest', () => {
    const model = tinyModel();
    model.hives.push({ ...model.hives[0]!, id: 'hive_2', serial: 'HV0000000002' });
    model.sensors.push({ ...SENSOR_PA, id: 'sensor_foreign', mac: '00-17-0d-00-00-00-00-ff', hiveId: 'hive_2' });
    const packets: WirePacket[] = [
      presenceAt(SENSOR_PA, T0, [[6, 5]]),
      { kind: 'presence', sensorMac: '00-17-0d-00-00-de-ad-00', sensedAtMs: T0, detections: [] },
      { kind: 'presence', sensorMac: '00-17-0d-00-00-00-00-ff', sensedAtMs: T0, detections: [] },
      { kind: 'presence', sensorMac: SENSOR_T.mac, sensedAtMs: T0, detections: [] },
    ];
    const v = inspectUplink(buildRegistry(model), {
      topic: uplinkTopic(HIVE_SERIAL),
      payload: encodeUplink(batch(packets)),
      receivedAtMs: T0,
    });
    if (v.kind !== 'accepted') throw new Error('expected the batch to be accepted');
    expect(v.packets.map((p) => p.sensorId)).toEqual([SENSOR_PA.id]);
    expect(v.deadLetters.map((d) => d.reason)).toEqual([
      'UNKNOWN_SENSOR',
      'SENSOR_NOT_ON_HIVE',
      'SENSOR_MODE_MISMATCH',
    ]);
    expect(v.deadLetters[0]?.message).toContain('packets[1]');
    expect(JSON.parse(new TextDecoder().decode(v.deadLetters[0]?.payload))).toMatchObject({
      sensorMac: '00-17-0d-00-00-de-ad-00',
    });
  });
});
