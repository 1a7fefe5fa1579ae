import { describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { CloudPipeline } from '../../src/cloud/pipeline.js';
import { inspectHeartbeat } from '../../src/cloud/heartbeat.js';
import { buildRegistry } from '../../src/cloud/registry.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncStore } from '../../src/store/sqlite-async.js';
import { VirtualClock } from '../../src/core/clock.js';
import { heartbeatTopic, uplinkTopic } from '../../src/core/topics.js';
import { encodeHeartbeat, encodeUplink } from '../../src/proto/codec.js';
import type { HiveHeartbeat, SensorHealth } from '../../src/proto/messages.js';
import { HIVE, HIVE_SERIAL, presenceAt, SENSOR_PA, SENSOR_PB, T0, tinyModel } from './fixture.js';

function setup() {
  const store = new SqliteStore(':memory:');
  const clock = new VirtualClock(T0);
  const pipeline = new CloudPipeline({
    catalogue: catalogueFromScenario(tinyModel()),
    tickMs: tinyModel().tickMs,
    store: asyncStore(store),
    clock,
    lookbackMs: 300_000,
  });
  return { store, clock, pipeline };
}

const health = (mac: string, over: Partial<SensorHealth> = {}): SensorHealth => ({
  sensorMac: mac,
  measuredAtMs: T0 - 1000,
  batteryLevel: 0.75,
  batteryRuntimeS: 3_600,
  rssiDbm: -71,
  linkPdr: 0.875,
  uptimeMs: 60_000,
  parent: HIVE_SERIAL,
  hops: 1,
  queueOverflows: 0,
  ...over,
});

const heartbeat = (over: Partial<HiveHeartbeat> = {}): HiveHeartbeat => ({
  hiveSerial: HIVE_SERIAL,
  sentAtMs: T0 - 500,
  firmwareVersion: '2.1.0',
  protocolMinor: 1,
  state: 'streaming',
  uptimeMs: 120_000,
  netPathStability: 0.5,
  ackedSeq: 3,
  nextSeq: 4,
  bufferedBatches: 1,
  bufferedBytes: 1200,
  droppedPackets: 0,
  sensors: [health(SENSOR_PA.mac)],
  ...over,
});

describe('heartbeats consumed by the cloud', () => {
  it('keeps the latest hive status and sensor health, with the cloud time of the last heartbeat', async () => {
    const { store, clock, pipeline } = setup();
    await pipeline.handleHeartbeat(heartbeatTopic(HIVE_SERIAL), encodeHeartbeat(heartbeat({ state: 'booting' })));
    clock.advanceTo(T0 + 60_000);
    await pipeline.handleHeartbeat(
      heartbeatTopic(HIVE_SERIAL),
      encodeHeartbeat(
        heartbeat({ sensors: [health(SENSOR_PA.mac.toUpperCase(), { measuredAtMs: T0 + 59_000, batteryLevel: 0.5 })] }),
      ),
    );
    expect(store.hiveStatus(HIVE.id)).toEqual({
      hiveId: HIVE.id,
      hiveSerial: HIVE_SERIAL,
      lastHeartbeatMs: T0 + 60_000,
      sentAtMs: T0 - 500,
      state: 'streaming',
      firmwareVersion: '2.1.0',
      protocolMinor: 1,
      uptimeMs: 120_000,
      netPathStability: 0.5,
      ackedSeq: 3,
      nextSeq: 4,
      bufferedBatches: 1,
      bufferedBytes: 1200,
      droppedPackets: 0,
    });
    expect(store.sensorStatus(SENSOR_PA.id)).toMatchObject({
      lastSeenMs: T0 + 59_000,
      healthAtMs: T0 + 59_000,
      batteryLevel: 0.5,
      rssiDbm: -71,
      linkPdr: 0.875,
      hops: 1,
      parent: HIVE_SERIAL,
    });
    expect(store.deadLetters()).toEqual([]);
  });

  it('moves a sensor last seen forward with its data packets, health or not', async () => {
    const { store, pipeline } = setup();
    await pipeline.handleMessage(
      uplinkTopic(HIVE_SERIAL),
      encodeUplink({
        hiveSerial: HIVE_SERIAL,
        seq: 1,
        sentAtMs: T0,
        packets: [presenceAt(SENSOR_PB, T0 + 2000, []), presenceAt(SENSOR_PB, T0 + 1000, [])],
      }),
    );
    expect(store.sensorStatus(SENSOR_PB.id)).toMatchObject({
      lastSeenMs: T0 + 2000,
      batteryLevel: null,
      rssiDbm: null,
    });
    expect(store.sensorStatus(SENSOR_PA.id)).toBeNull();
  });

  it('dead-letters heartbeats of unknown hives, garbage and unknown or foreign sensors with their reasons', async () => {
    const model = tinyModel();
    model.hives.push({ ...model.hives[0]!, id: 'hive_2', serial: 'HV0000000002' });
    model.sensors = model.sensors.map((s) => (s.id === SENSOR_PB.id ? { ...s, hiveId: 'hive_2' } : s));
    const store = new SqliteStore(':memory:');
    const pipeline = new CloudPipeline({
      catalogue: catalogueFromScenario(model),
      tickMs: model.tickMs,
      store: asyncStore(store),
      clock: new VirtualClock(T0),
      lookbackMs: 300_000,
    });
    await pipeline.handleHeartbeat(
      heartbeatTopic('HV0000000099'),
      encodeHeartbeat(heartbeat({ hiveSerial: 'HV0000000099' })),
    );
    await pipeline.handleHeartbeat(
      heartbeatTopic(HIVE_SERIAL),
      encodeHeartbeat(heartbeat({ hiveSerial: 'HV0000000002' })),
    );
    await pipeline.handleHeartbeat(heartbeatTopic(HIVE_SERIAL), Uint8Array.from([0xff, 0xff, 0xff]));
    await pipeline.handleHeartbeat(uplinkTopic(HIVE_SERIAL), encodeHeartbeat(heartbeat()));
    await pipeline.handleHeartbeat(
      heartbeatTopic(HIVE_SERIAL),
      encodeHeartbeat(
        heartbeat({ sensors: [health('00-17-0d-00-00-00-00-ff'), health(SENSOR_PB.mac), health(SENSOR_PA.mac)] }),
      ),
    );
    expect(store.deadLetters().map((d) => d.reason)).toEqual([
      'UNKNOWN_HIVE',
      'UNKNOWN_HIVE',
      'DECODE_FAILED',
      'BAD_TOPIC',
      'UNKNOWN_SENSOR',
      'SENSOR_NOT_ON_HIVE',
    ]);
    expect(store.deadLetters()[4]?.message).toContain('heartbeat sensors[0]');
    expect(store.hiveStatus('hive_2')).toBeNull();
    expect(store.hiveStatus(HIVE.id)?.state).toBe('streaming'); // the valid rest is kept
    expect(store.sensorStatus(SENSOR_PA.id)?.batteryLevel).toBe(0.75);
    expect(store.sensorStatus(SENSOR_PB.id)).toBeNull();
    expect(pipeline.counters().deadLettered).toBe(6);
  });
});

describe('heartbeat size limit', () => {
  it('dead-letters a heartbeat over the 64 KiB of docs/protocol.md as DECODE_FAILED, though it decodes', async () => {
    const registry = buildRegistry(tinyModel());
    const payload = encodeHeartbeat(heartbeat({ firmwareVersion: 'x'.repeat(100 * 1024) }));
    const verdict = inspectHeartbeat(registry, { topic: heartbeatTopic(HIVE_SERIAL), payload, receivedAtMs: T0 });
    expect(verdict).toMatchObject({
      kind: 'rejected',
      deadLetter: { reason: 'DECODE_FAILED', message: expect.stringContaining('65536-byte limit') },
    });
    const small = inspectHeartbeat(registry, {
      topic: heartbeatTopic(HIVE_SERIAL),
      payload: encodeHeartbeat(heartbeat()),
      receivedAtMs: T0,
    });
    expect(small.kind).toBe('accepted');
  });
});
