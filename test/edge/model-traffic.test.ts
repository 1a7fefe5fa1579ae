import { describe, expect, it } from 'vitest';
import { ModelTrafficSensor } from '../../src/edge/model-traffic.js';
import type { DoorCrossing } from '../../src/sim/types.js';
import { door, NO_NOISE, presenceSensor } from './fixtures.js';

const START = 1_772_434_800_000;
const trafficSensor = presenceSensor({
  id: 'sensor_t',
  mode: 'traffic',
  doorId: door.id,
  roomId: 'room_lobby',
  reportIntervalMs: 10_000,
});

const crossing = (atMs: number, direction: 'in' | 'out', personId = 'p'): DoorCrossing => ({
  personId,
  doorId: door.id,
  atMs,
  direction,
  along: 0.5,
});

describe('model-fidelity traffic sensor', () => {
  it('counts ins and outs over its interval and then resets', () => {
    const s = new ModelTrafficSensor(trafficSensor, door, NO_NOISE.traffic, 1, START);
    expect(s.sample(START, [])).toBeNull();
    s.sample(START + 1000, [crossing(START + 500, 'in'), crossing(START + 900, 'out', 'q')]);
    s.sample(START + 5000, [crossing(START + 4500, 'in', 'r')]);
    expect(s.sample(START + 10_000, [])).toMatchObject({
      in: 2,
      out: 1,
      intervalMs: 10_000,
      sensedAtMs: START + 10_000,
    });
    expect(s.sample(START + 20_000, [])).toMatchObject({ in: 0, out: 0 });
  });

  it("flips direction when its in side is the door's from side", () => {
    const s = new ModelTrafficSensor({ ...trafficSensor, roomId: 'room_elsewhere' }, door, NO_NOISE.traffic, 1, START);
    s.sample(START + 1000, [crossing(START + 500, 'in')]);
    expect(s.sample(START + 10_000, [])).toMatchObject({ in: 0, out: 1 });
  });

  it('ignores other doors', () => {
    const s = new ModelTrafficSensor(trafficSensor, door, NO_NOISE.traffic, 1, START);
    s.sample(START + 1000, [{ ...crossing(START + 500, 'in'), doorId: 'door_other' }]);
    expect(s.sample(START + 10_000, [])).toMatchObject({ in: 0, out: 0 });
  });

  it('misses more when people cross side by side', () => {
    const noise = { miss: 0.02, crowdMiss: 0.3 };
    const count = (gapMs: number): number => {
      const s = new ModelTrafficSensor(trafficSensor, door, noise, 5, START);
      let counted = 0;
      for (let k = 1; k <= 2000; k++) {
        const t = START + k * 10_000;
        s.sample(t - 5000, [crossing(t - 6000, 'in', 'a'), crossing(t - 6000 + gapMs, 'in', 'b')]);
        counted += s.sample(t, [])?.in ?? 0;
      }
      return counted;
    };
    expect(count(200)).toBeLessThan(count(3000) * 0.9);
  });
});
