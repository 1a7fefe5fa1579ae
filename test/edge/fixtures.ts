import type { DoorModel, NoiseModel, SensorModel } from '../../src/scenario/model.js';
import type { PersonState } from '../../src/sim/types.js';

export const NO_NOISE: NoiseModel = {
  presence: { miss: 0, falsePositive: 0, jitterM: 0 },
  traffic: { miss: 0, crowdMiss: 0 },
};

export function presenceSensor(over: Partial<SensorModel> = {}): SensorModel {
  return {
    id: 'sensor_p1',
    name: 'p1',
    mac: '00-17-0d-00-00-00-00-01',
    floorId: 'space_f',
    roomId: 'room_office',
    zoneId: null,
    doorId: null,
    hiveId: 'hive_1',
    mode: 'presence',
    model: 'tp-32x32',
    center: [5, 5],
    height: 3,
    orientationDeg: 0,
    fovDeg: 60,
    sensitivity: 3,
    reportIntervalMs: 1000,
    src: '/test',
    ...over,
  };
}

export const door: DoorModel = {
  id: 'door_1',
  name: 'd1',
  floorId: 'space_f',
  line: [
    [0, 4],
    [0, 5],
  ],
  fromRoomId: null,
  toRoomId: 'room_lobby',
  entrance: true,
  src: '/test',
};

export function person(id: string, x: number, y: number, roomId = 'room_office'): PersonState {
  return { id, floorId: 'space_f', roomId, x, y, posture: 'sitting' };
}
