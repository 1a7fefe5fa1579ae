import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { footprintTransform } from '../../src/core/footprint.js';
import { ModelPresenceSensor } from '../../src/edge/model-presence.js';
import { NO_NOISE, person, presenceSensor } from './fixtures.js';

const START = 1_772_434_800_000;

describe('model-fidelity presence sensor', () => {
  it('reports exactly the people of its room in its footprint when noise is off', () => {
    const s = new ModelPresenceSensor(presenceSensor(), NO_NOISE.presence, 1, START);
    const packet = s.sample(START, [
      person('a', 5, 5),
      person('b', 5.8, 4.6),
      person('c', 9, 9),
      person('d', 5.2, 5.2, 'room_other'),
    ]);
    expect(packet?.detections).toHaveLength(2);
  });

  it('maps a detection back to within float32 rounding of the true position (fast-check seed 11)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -0.49, max: 0.49, noNaN: true }),
        fc.double({ min: -0.49, max: 0.49, noNaN: true }),
        fc.double({ min: -180, max: 180, noNaN: true }),
        fc.double({ min: 2.4, max: 4.6, noNaN: true }),
        (u, v, yaw, h) => {
          const sensor = presenceSensor({ orientationDeg: yaw, height: h });
          const t = footprintTransform({ center: sensor.center, height: h, orientationDeg: yaw, fovDeg: 60 });
          const [x, y] = t.toWorld(0.5 + u, 0.5 + v);
          const packet = new ModelPresenceSensor(sensor, NO_NOISE.presence, 1, START).sample(START, [
            person('a', x, y),
          ]);
          const det = packet?.detections[0];
          if (!det) return false;
          const [wx, wy] = t.toWorld(det[0], det[1]);
          return Math.hypot(wx - x, wy - y) < 1e-4;
        },
      ),
      { seed: 11, numRuns: 300 },
    );
  });

  it('reports only on its interval grid', () => {
    const s = new ModelPresenceSensor(presenceSensor({ reportIntervalMs: 3000 }), NO_NOISE.presence, 1, START);
    expect(s.sample(START, [])).not.toBeNull();
    expect(s.sample(START + 1000, [])).toBeNull();
    expect(s.sample(START + 3000, [])).not.toBeNull();
  });

  it('merges two people closer than a blob into one detection', () => {
    const s = new ModelPresenceSensor(presenceSensor(), NO_NOISE.presence, 1, START);
    expect(s.sample(START, [person('a', 5, 5), person('b', 5.2, 5)])?.detections).toHaveLength(1);
  });

  it('misses more people when mounted higher', () => {
    const noise = { miss: 0.05, falsePositive: 0, jitterM: 0 };
    const rate = (height: number): number => {
      const s = new ModelPresenceSensor(presenceSensor({ height }), noise, 3, START);
      let seen = 0;
      for (let i = 0; i < 4000; i++) seen += s.sample(START + i * 1000, [person('a', 5, 5)])?.detections.length ?? 0;
      return 1 - seen / 4000;
    };
    expect(rate(4.6)).toBeGreaterThan(rate(2.4) * 2);
  });

  it('is reproducible from the seed and differs across seeds', () => {
    const noise = { miss: 0.1, falsePositive: 0.05, jitterM: 0.1 };
    const run = (seed: number): string => {
      const s = new ModelPresenceSensor(presenceSensor(), noise, seed, START);
      return JSON.stringify(
        Array.from({ length: 50 }, (_, i) => s.sample(START + i * 1000, [person('a', 5, 5), person('b', 4, 4)])),
      );
    };
    expect(run(1)).toBe(run(1));
    expect(run(1)).not.toBe(run(2));
  });
});
