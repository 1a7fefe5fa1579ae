import { describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { EventMetadata, eventId, type SensorEvent } from '../../src/cloud/events.js';
import { CloudPipeline } from '../../src/cloud/pipeline.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncStore } from '../../src/store/sqlite-async.js';
import { VirtualClock } from '../../src/core/clock.js';
import { uplinkTopic } from '../../src/core/topics.js';
import { encodeUplink } from '../../src/proto/codec.js';
import {
  FLOOR,
  HIVE,
  HIVE_SERIAL,
  presenceAt,
  ROOM_A,
  SENSOR_PA,
  SENSOR_T,
  T0,
  tinyModel,
  trafficAt,
  ZONE_A1,
} from './fixture.js';

const LOCATION = {
  org_id: 'org_1',
  org_name: 'Org',
  site_id: 'site_1',
  site_name: 'Site',
  building_id: 'building_1',
  building_name: 'B',
  floor_id: FLOOR,
  floor_name: 'F1',
};

describe('spec §6 events', () => {
  it('derives ids from type, subject, instant and revision: stable, distinct, never random', async () => {
    expect(eventId('ROOM_OCCUPANCY_1M', ROOM_A, T0, 0)).toBe(eventId('ROOM_OCCUPANCY_1M', ROOM_A, T0, 0));
    const ids = new Set([
      eventId('ROOM_OCCUPANCY_1M', ROOM_A, T0, 0),
      eventId('ROOM_OCCUPANCY_1M', ROOM_A, T0, 1),
      eventId('ROOM_OCCUPANCY', ROOM_A, T0, 0),
      eventId('ROOM_OCCUPANCY_1M', ZONE_A1, T0, 0),
    ]);
    expect(ids.size).toBe(4);
    expect([...ids].every((id) => /^event_[0-9a-f]{24}$/.test(id))).toBe(true);
  });

  it('wraps occupancy events in the envelope with location metadata down to their level', async () => {
    const model = tinyModel();
    model.rooms = model.rooms.map((r) => (r.id === ROOM_A ? { ...r, customId: 'A-1' } : r));
    const meta = new EventMetadata(catalogueFromScenario(model));
    const e = {
      id: 1,
      eventId: 'event_x',
      type: 'ZONE_OCCUPANCY',
      spaceId: ZONE_A1,
      minuteMs: T0 + 5000,
      value: 2,
      revision: 0,
      emittedAtMs: T0 + 60_000,
    };
    expect(meta.envelope(e)).toEqual({
      id: 'event_x',
      type: 'ZONE_OCCUPANCY',
      timestamp: T0 + 5000,
      version: 'v1.0.0',
      metadata: {
        ...LOCATION,
        room_id: ROOM_A,
        room_name: 'A',
        room_custom_id: 'A-1',
        zone_id: ZONE_A1,
        zone_name: 'A1',
      },
      data: 2,
    });
    expect(meta.forSpace(FLOOR)).toEqual(LOCATION); // FLOOR_OCCUPANCY: no room_id
  });

  it('streams DETECTIONS and TRAFFIC events with local and world coordinates and full sensor metadata', async () => {
    const events: SensorEvent[] = [];
    const model = tinyModel();
    const pipeline = new CloudPipeline({
      catalogue: catalogueFromScenario(model),
      tickMs: model.tickMs,
      store: asyncStore(new SqliteStore(':memory:')),
      clock: new VirtualClock(T0),
      lookbackMs: 300_000,
      onSensorEvent: (e) => events.push(e),
    });
    await pipeline.handleMessage(
      uplinkTopic(HIVE_SERIAL),
      encodeUplink({
        hiveSerial: HIVE_SERIAL,
        seq: 1,
        sentAtMs: T0,
        packets: [presenceAt(SENSOR_PA, T0, [[5, 5]]), trafficAt(SENSOR_T, T0 + 1000, 2, 1)],
      }),
    );
    expect(events.map((e) => e.type)).toEqual(['DETECTIONS', 'TRAFFIC']);
    const det = events[0]!;
    expect(det.data).toMatchObject({ local: [[expect.closeTo(1 / 6, 6), expect.closeTo(0.5, 6)]] });
    const world = (det.data as { world: Array<[number, number]> }).world[0]!;
    expect(world[0]).toBeCloseTo(5, 5);
    expect(world[1]).toBeCloseTo(5, 5);
    expect(events[1]?.data).toEqual({ in: 2, out: 1 });
    const envelope = new EventMetadata(catalogueFromScenario(model)).sensorEnvelope(det);
    expect(envelope.metadata).toEqual({
      ...LOCATION,
      room_id: ROOM_A,
      room_name: 'A',
      hive_id: HIVE.id,
      hive_serial: HIVE_SERIAL,
      hive_model: 'hive',
      hive_version: HIVE.firmwareVersion,
      sensor_id: SENSOR_PA.id,
      mac_address: SENSOR_PA.mac,
      sensor_mode: 'presence',
      sensor_model: SENSOR_PA.model,
    });
    expect(envelope.id).toBe(eventId('DETECTIONS', SENSOR_PA.id, T0, 0));
  });
});
