import { describe, expect, it } from 'vitest';
import { buildRegistry, spacesContaining } from '../../src/cloud/registry.js';
import { FLOOR, HIVE_SERIAL, ROOM_A, ROOM_B, SENSOR_PA, SENSOR_PB, SENSOR_T, tinyModel, ZONE_A1 } from './fixture.js';

describe('asset registry', () => {
  const registry = buildRegistry(tinyModel());

  it('finds hives by serial and sensors by MAC, case-insensitively', () => {
    expect(registry.hiveBySerial(HIVE_SERIAL)?.id).toBe('hive_1');
    expect(registry.hiveBySerial('HV_NOPE')).toBeUndefined();
    expect(registry.sensorByMac(SENSOR_PA.mac.toUpperCase())?.id).toBe(SENSOR_PA.id);
    expect(registry.sensorByMac('00-00-00-00-00-00-00-00')).toBeUndefined();
  });

  it('maps sensor-local corners and centre to world metres under the sensor', () => {
    const t = registry.transform(SENSOR_PA.id);
    // 90° field of view at 3 m: a 6 m square centred on (7, 5).
    expect(t.side).toBeCloseTo(6, 9);
    expect(t.toWorld(0.5, 0.5)[0]).toBeCloseTo(7, 9);
    expect(t.toWorld(0.5, 0.5)[1]).toBeCloseTo(5, 9);
    expect(t.toWorld(0, 0)[0]).toBeCloseTo(4, 9);
    expect(t.toWorld(0, 0)[1]).toBeCloseTo(2, 9);
    expect(t.toWorld(1, 1)[0]).toBeCloseTo(10, 9);
    expect(t.toWorld(1, 1)[1]).toBeCloseTo(8, 9);
  });

  it('rotates the local frame by the sensor orientation', () => {
    const model = tinyModel();
    model.sensors = model.sensors.map((s) => (s.id === SENSOR_PA.id ? { ...s, orientationDeg: 90 } : s));
    const [x, y] = buildRegistry(model).transform(SENSOR_PA.id).toWorld(1, 0.5);
    // Local +x points along world +y after a quarter turn counter-clockwise.
    expect(x).toBeCloseTo(7, 9);
    expect(y).toBeCloseTo(8, 9);
  });

  it('lists the spaces each presence sensor samples and none for a traffic sensor', () => {
    expect(registry.sampledSpaces(SENSOR_PA.id)).toEqual([ROOM_A, FLOOR, ZONE_A1].sort());
    expect(registry.sampledSpaces(SENSOR_PB.id)).toEqual([ROOM_B, FLOOR].sort());
    expect(registry.sampledSpaces(SENSOR_T.id)).toEqual([]);
    expect(registry.presenceSpaceIds()).toEqual([ROOM_A, ROOM_B, FLOOR, ZONE_A1].sort());
  });

  it('makes every presence sensor of the floor sample a zone of the floor', () => {
    const model = tinyModel();
    model.zones.push({
      id: 'zone_floor',
      name: 'FZ',
      floorId: FLOOR,
      roomId: null,
      customId: null,
      polygon: [
        [0, 0],
        [20, 0],
        [20, 2],
        [0, 2],
      ],
      src: '',
    });
    const r = buildRegistry(model);
    expect(r.sampledSpaces(SENSOR_PB.id)).toContain('zone_floor');
    expect(r.sampledSpaces(SENSOR_PA.id)).toContain('zone_floor');
  });

  it('assigns points to the rooms and zones whose polygons contain them', () => {
    const floor = registry.floor(FLOOR);
    expect(spacesContaining(floor.rooms, 9.5, 5).map((s) => s.id)).toEqual([ROOM_A]);
    expect(spacesContaining(floor.rooms, 15, 5).map((s) => s.id)).toEqual([ROOM_B]);
    expect(spacesContaining(floor.zones, 9.5, 5).map((s) => s.id)).toEqual([ZONE_A1]);
    expect(spacesContaining(floor.zones, 2, 5)).toEqual([]);
    expect(spacesContaining(floor.rooms, 25, 5)).toEqual([]);
  });
});
