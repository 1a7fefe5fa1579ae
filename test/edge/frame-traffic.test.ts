import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DoorModel, RoomModel } from '../../src/scenario/model.js';
import { rig, runTicks, type WorldPerson } from './frame-rig.js';

// Two rooms split by the wall x = 5; the door spans y 4.5…5.5. Walking +x is "in" (into B).
const rooms: RoomModel[] = [
  {
    id: 'room_a',
    name: 'A',
    floorId: 'space_f',
    customId: null,
    capacity: null,
    polygon: [
      [0, 0],
      [5, 0],
      [5, 10],
      [0, 10],
    ],
    src: '/a',
  },
  {
    id: 'room_b',
    name: 'B',
    floorId: 'space_f',
    customId: null,
    capacity: null,
    polygon: [
      [5, 0],
      [10, 0],
      [10, 10],
      [5, 10],
    ],
    src: '/b',
  },
];
const door: DoorModel = {
  id: 'door_ab',
  name: 'AB',
  floorId: 'space_f',
  line: [
    [5, 4.5],
    [5, 5.5],
  ],
  fromRoomId: 'room_a',
  toRoomId: 'room_b',
  entrance: false,
  src: '/d',
};

function trafficRig(height: number, yaw: number, model: 'tp-8x8' | 'tp-32x32') {
  return rig(
    {
      id: 'sensor_t',
      mode: 'traffic',
      roomId: 'room_b',
      doorId: 'door_ab',
      center: [5, 5],
      height,
      orientationDeg: yaw,
      model,
      reportIntervalMs: 10_000,
    },
    [door],
    rooms,
  );
}

/** In/out totals of a traffic output [t, in, out]*. */
function totals(out: Float64Array): { in: number; out: number } {
  const t = { in: 0, out: 0 };
  for (let i = 0; i < out.length; i += 3) {
    t.in += out[i + 1] as number;
    t.out += out[i + 2] as number;
  }
  return t;
}

/** A walk from x0 to x1 across the door at height y, `speed` m/s, sampled per 1 s tick, then 10 s still beyond. */
function walk(x0: number, x1: number, y: number, speed: number, linger = 0): WorldPerson[][] {
  const ticks: WorldPerson[][] = [];
  const steps = Math.ceil(Math.abs(x1 - x0) / speed);
  for (let k = 0; k <= steps; k++) {
    const x = x0 + ((x1 - x0) * k) / steps;
    ticks.push([{ id: 7, x, y, posture: 'walking' }]);
    if (Math.abs(x - 5) < 0.5)
      for (let l = 0; l < linger; l++) ticks.push([{ id: 7, x: 5 + (l % 2 ? 0.05 : -0.05), y, posture: 'standing' }]);
  }
  while (ticks.length % 10 !== 0) ticks.push([]);
  return [...ticks, ...Array.from({ length: 10 }, () => [])];
}

describe('traffic detection at a door line', () => {
  it('counts a single crossing exactly once, in the direction of entry', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 2.4, max: 4.6, noNaN: true }),
        fc.double({ min: 0, max: 360, noNaN: true }),
        fc.double({ min: 4.7, max: 5.3, noNaN: true }),
        fc.double({ min: 0.6, max: 1.6, noNaN: true }),
        fc.boolean(),
        fc.constantFrom('tp-8x8' as const, 'tp-32x32' as const),
        (height, yaw, y, speed, entering, model) => {
          const r = trafficRig(height, yaw, model);
          runTicks(
            r,
            Array.from({ length: 10 }, () => []),
          );
          const out = totals(runTicks(r, entering ? walk(3.6, 6.4, y, speed) : walk(6.4, 3.6, y, speed)));
          expect(out).toEqual(entering ? { in: 1, out: 0 } : { in: 0, out: 1 });
        },
      ),
      { seed: 42, numRuns: 60 },
    );
  });

  it('does not count someone lingering on the line more than once', () => {
    const r = trafficRig(3, 0, 'tp-32x32');
    runTicks(
      r,
      Array.from({ length: 10 }, () => []),
    );
    expect(totals(runTicks(r, walk(3.6, 6.4, 5, 1, 8)))).toEqual({ in: 1, out: 0 });
  });
});
