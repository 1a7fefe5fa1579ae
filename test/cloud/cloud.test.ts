import { mkdtempSync, rmSync } from 'node:fs';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Aedes } from 'aedes';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCloud, type Cloud } from '../../src/cloud/cloud.js';
import { sqliteStore } from '../../src/store/sqlite-async.js';
import { VirtualClock } from '../../src/core/clock.js';
import { ackTopic, heartbeatTopic, uplinkTopic } from '../../src/core/topics.js';
import { decodeAck, encodeHeartbeat, encodeUplink } from '../../src/proto/codec.js';
import type { UplinkAck } from '../../src/proto/messages.js';
import {
  HIVE,
  HIVE_SERIAL,
  presenceAt,
  ROOM_A,
  ROOM_B,
  SENSOR_PA,
  SENSOR_PB,
  SENSOR_T,
  T0,
  tinyModel,
  trafficAt,
} from './fixture.js';

describe('cloud over real MQTT', () => {
  let broker: Aedes;
  let server: Server;
  let url: string;
  let dir: string;
  let cloud: Cloud;
  let hive: MqttClient;
  const clock = new VirtualClock(T0);

  beforeAll(async () => {
    broker = await Aedes.createBroker();
    server = createServer(broker.handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `mqtt://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'occusim-cloud-'));
    const model = tinyModel();
    // A scenario calibration point: room B is known to hold 4 people at T0 + 2 min.
    model.rooms = model.rooms.map((r) =>
      r.id === ROOM_B ? { ...r, calibrationPoints: [{ timestampMs: T0 + 120_000, occupancy: 4 }] } : r,
    );
    cloud = await startCloud({
      brokerUrl: url,
      username: 'cloud',
      password: 'x',
      catalogue: catalogueFromScenario(model),
      tickMs: model.tickMs,
      clock,
      store: sqliteStore(join(dir, 'cloud.db')),
    });
    hive = await connectAsync(url, { clientId: `hive-${HIVE_SERIAL}`, username: HIVE_SERIAL, password: 'secret' });
    await hive.subscribeAsync(ackTopic(HIVE_SERIAL), { qos: 1 });
  });

  afterAll(async () => {
    await hive?.endAsync();
    await cloud?.close();
    await new Promise<void>((resolve) => broker.close(() => resolve()));
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const nextAck = (): Promise<UplinkAck> =>
    new Promise((resolve) => {
      hive.once('message', (_topic, payload) => resolve(decodeAck(payload)));
    });

  it('stores an uplink, acks it to the hive and serves the finalised minute after finish()', async () => {
    clock.advanceTo(T0 + 1500);
    const acked = nextAck();
    const payload = encodeUplink({
      hiveSerial: HIVE_SERIAL,
      seq: 1,
      sentAtMs: T0 + 1000,
      packets: [
        presenceAt(SENSOR_PA, T0, [
          [9.5, 5],
          [5, 5],
        ]),
        presenceAt(SENSOR_PB, T0, [[9.5, 5]]),
        trafficAt(SENSOR_T, T0 + 1000, 1, 0),
      ],
    });
    await hive.publishAsync(uplinkTopic(HIVE_SERIAL), Buffer.from(payload), { qos: 1 });
    expect(await acked).toEqual({ hiveSerial: HIVE_SERIAL, ackedSeq: 1, ackedAtMs: T0 + 1500 });
    await cloud.finish();
    expect(await cloud.presenceMinutes(ROOM_A)).toEqual([{ minuteMs: T0, value: 2, samples: 1 }]);
    expect(await cloud.trafficMinutes(SENSOR_T.id)).toEqual([{ minuteMs: T0, in: 1, out: 0 }]);
    expect(cloud.counters()).toMatchObject({ batchesReceived: 1, batchesProcessed: 1, packetsProcessed: 3 });
    expect(cloud.latenciesMs().toArrays()).toEqual({
      values: Float64Array.from([1500, 500]),
      counts: Float64Array.from([2, 1]),
    });
  });

  it('anchors the calibrated traffic occupancy at the scenario calibration points', async () => {
    expect(cloud.trafficSpaces().map((s) => s.spaceId)).toContain(ROOM_B);
    const raw = await cloud.trafficOccupancy(ROOM_B, T0, T0 + 4 * 60_000, false);
    const calibrated = await cloud.trafficOccupancy(ROOM_B, T0, T0 + 4 * 60_000, true);
    expect(raw.map((p) => p.value)).toEqual([1, 1, 1, 1]); // one "in" through the door at T0 + 1 s
    expect(calibrated.find((p) => p.minuteMs === T0 + 120_000)?.value).toBe(4);
  });

  it('dead-letters garbage published on an uplink topic and keeps running', async () => {
    await hive.publishAsync(uplinkTopic(HIVE_SERIAL), Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]), { qos: 1 });
    // The broker acks the publish before the cloud sees it: wait for the dead letter to land.
    for (let i = 0; i < 100 && (await cloud.deadLetters()).length === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await cloud.deadLetters()).toEqual([
      expect.objectContaining({ topic: uplinkTopic(HIVE_SERIAL), reason: 'DECODE_FAILED', receivedAtMs: T0 + 1500 }),
    ]);
    const acked = nextAck();
    await hive.publishAsync(
      uplinkTopic(HIVE_SERIAL),
      Buffer.from(encodeUplink({ hiveSerial: HIVE_SERIAL, seq: 2, sentAtMs: T0 + 2000, packets: [] })),
      { qos: 1 },
    );
    expect((await acked).ackedSeq).toBe(2);
    expect(cloud.counters().deadLettered).toBe(1);
  });

  it('subscribes to heartbeats and keeps the hive status and sensor health they carry', async () => {
    const hb = {
      hiveSerial: HIVE_SERIAL,
      sentAtMs: T0,
      firmwareVersion: '2.0.0',
      protocolMinor: 1,
      state: 'streaming' as const,
      uptimeMs: 5000,
      netPathStability: 1,
      ackedSeq: 2,
      nextSeq: 3,
      bufferedBatches: 0,
      bufferedBytes: 0,
      droppedPackets: 0,
      sensors: [
        {
          sensorMac: SENSOR_T.mac,
          measuredAtMs: T0 + 1200,
          batteryLevel: 0.25,
          batteryRuntimeS: 100,
          rssiDbm: -80,
          linkPdr: 0.5,
          uptimeMs: 5000,
          parent: HIVE_SERIAL,
          hops: 1,
          queueOverflows: 2,
        },
      ],
    };
    await hive.publishAsync(heartbeatTopic(HIVE_SERIAL), Buffer.from(encodeHeartbeat(hb)), { qos: 1 });
    for (let i = 0; i < 100 && (await cloud.hiveStatus(HIVE.id)) === null; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await cloud.hiveStatus(HIVE.id)).toMatchObject({
      hiveSerial: HIVE_SERIAL,
      state: 'streaming',
      lastHeartbeatMs: T0 + 1500,
      firmwareVersion: '2.0.0',
    });
    // Last seen: the traffic packet of the first test (T0 + 1000) is older than the health measurement.
    expect(await cloud.sensorStatus(SENSOR_T.id)).toMatchObject({
      lastSeenMs: T0 + 1200,
      batteryLevel: 0.25,
      queueOverflows: 2,
    });
    expect(await cloud.sensorStatus(SENSOR_PA.id)).toMatchObject({ lastSeenMs: T0, batteryLevel: null });
  });
});
