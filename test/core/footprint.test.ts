import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { footprintSide, footprintTransform } from '../../src/core/footprint.js';

describe('sensor footprint', () => {
  it('has side 2·tan(fov/2)·height', () => {
    expect(footprintSide({ height: 3, fovDeg: 60 })).toBeCloseTo(2 * Math.tan(Math.PI / 6) * 3, 12);
  });

  it('puts the point under the sensor at the local centre', () => {
    const t = footprintTransform({ center: [5, 5], height: 3, orientationDeg: 30, fovDeg: 60 });
    const [lx, ly] = t.toLocal(5, 5);
    expect(lx).toBeCloseTo(0.5, 12);
    expect(ly).toBeCloseTo(0.5, 12);
  });

  it('maps world → local → world back to the same point for any placement (fast-check seed 7)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -50, max: 50, noNaN: true }),
        fc.double({ min: -50, max: 50, noNaN: true }),
        fc.double({ min: 2.4, max: 4.6, noNaN: true }),
        fc.double({ min: -180, max: 180, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (cx, cy, h, yaw, lx, ly) => {
          const t = footprintTransform({ center: [cx, cy], height: h, orientationDeg: yaw, fovDeg: 60 });
          const [x, y] = t.toWorld(lx, ly);
          const [bx, by] = t.toLocal(x, y);
          return Math.abs(bx - lx) < 1e-9 && Math.abs(by - ly) < 1e-9;
        },
      ),
      { seed: 7, numRuns: 500 },
    );
  });

  it('sees inside its footprint only', () => {
    const t = footprintTransform({ center: [0, 0], height: 3, orientationDeg: 0, fovDeg: 60 });
    expect(t.sees(0.5, 0.5)).toBe(true);
    expect(t.sees(t.side, 0)).toBe(false);
  });
});
